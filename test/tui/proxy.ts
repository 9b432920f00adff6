import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Proxy {
  url: string;
  /** 'forward' passes requests on; 'down' drops each connection without an answer, as a dead server would. */
  mode: 'forward' | 'down';
  /** Requests held back (see `hold`) so far, answered or not. */
  held: number;
  /** Forwards the requests held back, and from now on every request. */
  release(): void;
  close(): Promise<void>;
}

/**
 * A deployment in front of a real test server that lacks some routes: it answers them 404 with the failure
 * envelope, as a deployment with only the documented API answers GET /v1/base_list, and forwards the rest; or that
 * is slow to answer some (`hold`).
 */
export async function startProxy(
  target: string,
  options: {
    without?: readonly string[];
    /** Requests (path and query) that wait, unanswered, until `release`: a slow deployment. */
    hold?: (url: string) => boolean;
  } = {},
): Promise<Proxy> {
  const without = new Set(options.without ?? []);
  let waiting: Array<() => void> | undefined = [];
  const proxy: Proxy = {
    url: '',
    mode: 'forward',
    held: 0,
    release: () => {
      const held = waiting ?? [];
      waiting = undefined;
      for (const forward of held) forward();
    },
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    if (waiting !== undefined && options.hold?.(req.url ?? '/')) {
      proxy.held++;
      waiting.push(() => forward(req, res));
      return;
    }
    forward(req, res);
  });
  const forward = (req: IncomingMessage, res: ServerResponse) => {
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
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
