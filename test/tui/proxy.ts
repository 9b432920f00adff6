import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Proxy {
  url: string;
  /** 'forward' passes requests on; 'down' drops each connection without an answer, as a dead server would. */
  mode: 'forward' | 'down';
  close(): Promise<void>;
}

/**
 * A deployment in front of a real test server that lacks some routes: it answers them 404 with the failure
 * envelope, as a deployment with only the documented API answers GET /v1/base_list, and forwards the rest.
 */
export async function startProxy(target: string, options: { without?: readonly string[] } = {}): Promise<Proxy> {
  const without = new Set(options.without ?? []);
  const proxy: Proxy = { url: '', mode: 'forward', close: async () => undefined };
  const server = createServer((req, res) => {
    if (proxy.mode === 'down') {
      req.socket.destroy();
      return;
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (without.has(path)) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: false, message: `Route ${req.method}:${path} not found` }));
      return;
    }
    const upstream = request(`${target}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
