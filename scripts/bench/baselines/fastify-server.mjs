// Bare Fastify beside the node:http baseline (http-server.mjs): Fastify 5 with no logger, no options and no plugins,
// one route, GET /v1/health, answering the same bytes with the same headers as that baseline (content-type,
// content-length, x-request-id from a prefix and a counter). For information: what Fastify itself costs a request,
// so that a reader can tell it from what kb serve adds. Prints its URL on stdout.
import Fastify from 'fastify';

const body = Buffer.from(JSON.stringify({ success: true, data: 'alive' }));
const prefix = Math.random().toString(16).slice(2, 10);
let next = 0;

const app = Fastify({ logger: false });
app.get('/v1/health', (_request, reply) => {
  reply.header('content-type', 'application/json; charset=utf-8').header('x-request-id', `${prefix}-${(++next).toString(36)}`).send(body);
});
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening on http://127.0.0.1:${app.server.address().port}\n`);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => app.close().then(() => process.exit(0)));
