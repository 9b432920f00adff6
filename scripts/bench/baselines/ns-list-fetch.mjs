// The `kb ns list --json` baseline: the same request with node's own fetch and the same bearer token, the
// data printed as JSON. What any Node CLI must pay at least.
const response = await fetch(new URL('/v1/ns_list', process.env.KB_URL), {
  headers: { authorization: `Bearer ${process.env.KB_TOKEN}`, accept: 'application/json' },
});
const body = await response.json();
if (!response.ok || body.success !== true) {
  process.stderr.write(`ns_list answered ${response.status}: ${body.message}\n`);
  process.exit(1);
}
process.stdout.write(`${JSON.stringify(body.data, null, 2)}\n`);
