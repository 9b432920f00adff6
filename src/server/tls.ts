import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { KbApiError } from '../api/errors.js';
import { errorBody } from './errors.js';
import { REQUEST_ID_HEADER, type RequestTold } from './logger.js';

/** The files of `kb serve --tls-cert FILE --tls-key FILE` (docs/contract.md, TLS). */
export interface TlsFiles {
  cert: string;
  key: string;
}

/** A certificate and its key, read and checked: they parse, and the key is the certificate's. */
export interface TlsPair {
  cert: Buffer;
  key: Buffer;
  /** The certificate's subject and expiry, for the log line that says which one is served. */
  subject: string;
  validTo: string;
}

/** A file of the pair that cannot serve: its path, and why, in one sentence. */
export class TlsFilesError extends Error {
  override readonly name = 'TlsFilesError';
  constructor(readonly path: string, message: string) {
    super(message);
  }
}

async function readPem(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : message;
    throw new TlsFilesError(path, `cannot read the TLS ${what} ${path}: ${why}`);
  }
}

/**
 * Reads the pair and checks it as a TLS server would take it, naming the file at fault: a certificate that is not PEM,
 * a key that is not an unencrypted PEM private key, or a key that is not the certificate's.
 */
export async function loadTlsPair(files: TlsFiles): Promise<TlsPair> {
  const cert = await readPem(files.cert, 'certificate');
  const key = await readPem(files.key, 'key');
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw new TlsFilesError(files.cert, `the TLS certificate ${files.cert} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new TlsFilesError(files.key, `the TLS key ${files.key} holds no unencrypted PEM private key`);
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new TlsFilesError(files.key, `the TLS key ${files.key} does not match the certificate ${files.cert}`);
  }
  return { cert, key, subject: certificate.subject.replaceAll('\n', ', '), validTo: new Date(certificate.validTo).toISOString() };
}

/** The first byte of a TLS connection: a handshake record (a ClientHello). Plain HTTP begins with a method's letter. */
const TLS_HANDSHAKE = 0x16;

/**
 * Makes a TLS port answer plain HTTP instead of leaving the client waiting for a handshake that never comes (the
 * `httpolyglot` idea): each connection's first byte decides. A TLS one goes on to the server's own handshake (Node
 * reads what was peeked again: it feeds a wrapped socket's buffered bytes to the TLS layer); a plain one goes to an
 * HTTP server of its own, whose only answer is `answer` (a 400 saying to use https). The HTTPS server's request
 * path, its logging and its shutdown are untouched. A connection that sends nothing is closed after `idleMs`.
 */
export function answerPlainHttp(
  server: HttpsServer,
  answer: (request: IncomingMessage, response: ServerResponse) => void,
  idleMs: number,
): HttpServer {
  const plain = createServer(answer);
  // Idle plain connections end, since this server never listens and closes none itself.
  plain.setTimeout(idleMs);
  // tls.Server's own listener, which wraps the socket and begins the handshake.
  const handshakes = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    // A client that resets the connection must not be an uncaught error, before or after the hand-over.
    const early = () => socket.destroy();
    socket.on('error', early);
    socket.setTimeout(idleMs);
    socket.on('timeout', early);
    const peek = () => {
      const first = socket.read(1) as Buffer | null;
      if (first === null) return void socket.once('readable', peek);
      socket.unshift(first);
      socket.setTimeout(0);
      socket.off('timeout', early);
      if (first[0] === TLS_HANDSHAKE) for (const handshake of handshakes) handshake.call(server, socket);
      else plain.emit('connection', socket);
    };
    peek();
  });
  return plain;
}

/**
 * What a plain HTTP request to the TLS port gets: a 400 in the API's failure envelope that says to use https, with a
 * request id, logged and counted as any request is; the connection closes after it.
 */
export function plainHttpAnswer(requestId: (request: IncomingMessage) => string, told: RequestTold) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    const started = performance.now();
    const id = requestId(request);
    const where = `https://${request.headers.host ?? 'HOST:PORT'}${request.url ?? '/'}`;
    const refused = new KbApiError('bad_request', 'This port speaks HTTPS, not plain HTTP', `Send the request to ${where}.`);
    const body = JSON.stringify(errorBody(refused));
    response.shouldKeepAlive = false;
    response.writeHead(400, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), [REQUEST_ID_HEADER]: id });
    response.end(body);
    told(id, request.method, request.url, undefined, 400, performance.now() - started);
  };
}
