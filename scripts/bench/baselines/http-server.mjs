// The server baseline: bare node:http answering every request as kb serve answers GET /v1/health, with the
// same headers (content-type, content-length; node adds Date and keep-alive, as it does for fastify). It
// reads a request's body before answering, as any server of a POST must. Prints its URL on stdout.
import http from 'node:http';

const body = JSON.stringify({ success: true, data: 'alive' });
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) };

const server = http.createServer((request, response) => {
  request.on('data', () => undefined);
  request.on('end', () => {
    response.writeHead(200, headers);
    response.end(body);
  });
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)).closeAllConnections());
