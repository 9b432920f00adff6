// The server baseline: bare node:http answering every request with one body and the headers kb serve sends with it
// (content-type, content-length, x-request-id; node adds Date and keep-alive, as it does for fastify). By default the
// body is kb serve's answer to GET /v1/health; with a file as argument, that file's bytes (e.g. kb serve's answer to
// GET /v1/ns_list, captured once). It reads a request's body before answering, as any server of a POST must. Prints
// its URL on stdout.
import { readFileSync } from 'node:fs';
import http from 'node:http';

const body = process.argv[2] === undefined ? Buffer.from(JSON.stringify({ success: true, data: 'alive' })) : readFileSync(process.argv[2]);
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, 'x-request-id': '' };
const prefix = Math.random().toString(16).slice(2, 10);
let next = 0;

const server = http.createServer((request, response) => {
  request.on('data', () => undefined);
  request.on('end', () => {
    headers['x-request-id'] = `${prefix}-${(++next).toString(36)}`;
    response.writeHead(200, headers);
    response.end(body);
  });
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)).closeAllConnections());
