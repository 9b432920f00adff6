import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Proxy {
  url: string;
  /** 'forward' passes requests on; 'down' drops each connection without an answer, as a dead server would. */
  mode: 'forward' | 'down';
  /** Requests held back (see `hold`) so far, answered or not. */
  held: number;
  /** Answers kept back (see `holdAnswers`) so far, each read in full from the server, sent or not. */
  kept: number;
  /** Forwards the requests held back, and from now on every request. */
  release(): void;
  /** Sends the answers kept back, and from now on every answer as it comes. */
  sendAnswers(): void;
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
    /**
     * Requests (path and query) sent to the server at once, whose answers wait until `release`: an answer made before
     * what happens meanwhile, and delivered after it (a slow network on the way back), until `sendAnswers`.
     */
    holdAnswers?: (url: string) => boolean;
  } = {},
): Promise<Proxy> {
  const without = new Set(options.without ?? []);
  let waiting: Array<() => void> | undefined = [];
  let answers: Array<() => void> | undefined = [];
  const proxy: Proxy = {
    url: '',
    mode: 'forward',
    held: 0,
    kept: 0,
    release: () => {
      const held = waiting ?? [];
      waiting = undefined;
      for (const forward of held) forward();
    },
    sendAnswers: () => {
      const kept = answers ?? [];
      answers = undefined;
      for (const send of kept) send();
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
    const keep = answers !== undefined && options.holdAnswers?.(req.url ?? '/') === true;
    const upstream = request(`${target}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (reply) => {
      if (!keep) {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      reply.on('data', (chunk: Buffer) => chunks.push(chunk));
      reply.on('end', () => {
        proxy.kept++;
        const send = () => {
          res.writeHead(reply.statusCode ?? 502, reply.headers);
          res.end(Buffer.concat(chunks));
        };
        if (answers === undefined) send();
        else answers.push(send);
      });
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
