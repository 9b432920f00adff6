// The floor of any Node CLI for `kb ns list --json`: the same GET /v1/ns_list with node:http alone and the same
// bearer token, the data printed as JSON. What a Node process pays at least to make one request and print it.
import { request } from 'node:http';

const url = new URL('/v1/ns_list', process.env.KB_URL);
const headers = { authorization: `Bearer ${process.env.KB_TOKEN}`, accept: 'application/json' };
request(url, { headers }, (response) => {
  const chunks = [];
  response.on('data', (chunk) => chunks.push(chunk));
  response.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (response.statusCode !== 200 || body.success !== true) {
      process.stderr.write(`ns_list answered ${response.statusCode}: ${body.message}\n`);
      process.exitCode = 1;
      return;
    }
    process.stdout.write(`${JSON.stringify(body.data, null, 2)}\n`);
  });
}).end();
