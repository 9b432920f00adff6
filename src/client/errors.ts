import { codeForStatus, KbApiError, type ErrorCode } from '../api/errors.js';
import { EXIT, exitCodeForStatus } from './exit-codes.js';
import { shownProxyUrl, type Proxy } from './proxy.js';

export { exitCodeForStatus };

/**
 * The client's error catalog. Every class sets `name`, a stable `code` and the `exitCode` of docs/contract.md,
 * Exit codes, so the CLI derives its exit status from the error and never from its own table.
 */
export abstract class KbClientError extends Error {
  abstract readonly code: string;
  abstract readonly exitCode: number;
}


export interface ApiErrorDetails {
  status: number;
  message: string;
  help?: string | undefined;
  url: string;
  method: string;
  /** True when the client refused the input before sending it, with the message the server would give. */
  local?: boolean;
  /** The reply's X-Request-Id, which names the request in the server's log. */
  requestId?: string | undefined;
  /**
   * A 409 with Retry-After to a keyed write: its first request was still running when the retries ran out. Not a
   * conflict of data, so it exits as a 503 does (1), never 5.
   */
  stillRunning?: boolean;
  /** Whether the write may have run on the server all the same (ApiError.mayHaveRun). */
  mayHaveRun?: boolean;
}

/** The service answered with the failure envelope (or the client rejected the input the same way). */
export class ApiError extends KbClientError {
  override readonly name = 'ApiError';
  readonly code: ErrorCode;
  readonly exitCode: number;
  readonly status: number;
  readonly help: string | undefined;
  readonly url: string;
  readonly method: string;
  readonly local: boolean;
  readonly requestId: string | undefined;
  /**
   * Whether a write may have run on the server though this error answered it: an earlier attempt's connection was lost
   * after it was sent, its first request was still running (stillRunning), or a gateway answered for the server (502,
   * 504: the server may have run it and its reply been lost). kb apply lists such a change apart, neither applied nor not.
   */
  readonly mayHaveRun: boolean;
  /**
   * For a 404, the keys of what was not found that the deployment has, when the client has read them already
   * (baseList reads the namespaces after a 404): the CLI's did-you-mean takes them instead of asking again.
   */
  nearby: readonly string[] | undefined;

  constructor(details: ApiErrorDetails) {
    super(details.message);
    this.status = details.status;
    this.code = codeForStatus(details.status);
    this.exitCode = details.stillRunning ? EXIT.failure : exitCodeForStatus(details.status);
    this.help = details.help ?? (details.mayHaveRun ? MAY_HAVE_RUN_HELP : undefined);
    this.url = details.url;
    this.method = details.method;
    this.local = details.local ?? false;
    this.requestId = details.requestId;
    this.mayHaveRun = details.mayHaveRun ?? false;
  }
}

export type NetworkErrorKind = 'refused' | 'dns' | 'timeout' | 'tls' | 'reset' | 'other';

/** What to do about a write that may have run though it failed (mayHaveRun), for every command that writes. */
export const MAY_HAVE_RUN_HELP = 'The write may have been done before its reply was lost: look (e.g. `kb ns view`, `kb base list`) before sending it again.';

/** No HTTP answer at all: the request failed below HTTP, or took longer than the timeout. */
export class NetworkError extends KbClientError {
  override readonly name = 'NetworkError';
  readonly code = 'network_error';
  readonly exitCode = EXIT.network;
  /** The proxy that could not be reached, when it was the proxy and not the deployment. */
  readonly proxy: Proxy | undefined;
  /**
   * Whether the request may have reached the server and run there, on this attempt or an earlier one: the connection
   * was lost after it was sent, or timed out waiting for the reply. False when no attempt got a connection (refused,
   * DNS). The client sets it once its attempts are spent.
   */
  mayHaveRun = false;

  constructor(
    readonly kind: NetworkErrorKind,
    readonly url: string,
    readonly method: string,
    /** The cause in plain words, e.g. "connection refused". */
    readonly reason: string,
    options?: { cause?: unknown; proxy?: Proxy | undefined; help?: string | undefined },
  ) {
    const proxy = options?.proxy;
    super(proxy ? `cannot reach the proxy ${shownProxyUrl(proxy.url)} (${proxy.variable}) for ${url}: ${reason}` : `cannot reach ${url}: ${reason}`, options);
    this.proxy = proxy;
    this.#help = options?.help;
  }

  /** What to try next as the client found it out (how to trust a certificate), if it did. */
  readonly #help: string | undefined;

  /** What to try next, where the kind of failure suggests something. */
  get help(): string | undefined {
    if (this.#help !== undefined) return this.#help;
    if (this.proxy) {
      return `Check ${this.proxy.variable}, or list ${new URL(this.url).hostname} in NO_PROXY to reach it without the proxy.`;
    }
    if (this.mayHaveRun && this.method !== 'GET') return MAY_HAVE_RUN_HELP;
    if (this.kind !== 'refused') return undefined;
    return 'Is the server running (start a local one with `kb serve`)? `kb auth status` shows the URL and profile in use.';
  }
}

/** The reply was larger than the client reads: it stopped reading at the limit, so memory stays bounded. */
export class ResponseTooLargeError extends KbClientError {
  override readonly name = 'ResponseTooLargeError';
  readonly code = 'response_too_large';
  readonly exitCode = EXIT.failure;

  constructor(
    readonly url: string,
    readonly method: string,
    /** The limit in bytes. */
    readonly limit: number,
    /** The reply's X-Request-Id, if it had one. */
    readonly requestId?: string,
  ) {
    super(`the reply from ${url} is larger than the ${formatBytes(limit)} limit`);
  }

  get help(): string {
    return 'If a reply this large is expected, raise the limit with KB_MAX_RESPONSE (e.g. KB_MAX_RESPONSE=256MiB).';
  }
}

/** 67108864 as "64 MiB", 1500 as "1500 bytes": the limit as a user would set it. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** An HTTP answer that is not a kb API reply: HTML, an empty body, or JSON of the wrong shape. */
export class ResponseFormatError extends KbClientError {
  override readonly name = 'ResponseFormatError';
  readonly code = 'bad_response';
  readonly exitCode: number;

  constructor(
    readonly url: string,
    readonly method: string,
    readonly status: number,
    /** What was wrong with the reply, e.g. "the body is not JSON (content-type text/html)". */
    readonly detail: string,
    /** The reply's X-Request-Id, if it had one. */
    readonly requestId?: string,
  ) {
    super(`${url} answered ${status} with something that is not a kb API reply: ${detail}`);
    // A 401 or 404 from a proxy or a web server in front of the service still means what its status says.
    this.exitCode = status >= 400 ? exitCodeForStatus(status) : EXIT.failure;
  }
}

/**
 * The deployment lacks an extension of `kb serve` that the command needs for `namespace`, which exists. Exit 2, as for
 * every extension a deployment lacks (docs/contract.md's exit-code table): nothing was done, and no retry will do it.
 */
abstract class ExtensionMissingError extends KbClientError {
  readonly exitCode = EXIT.usage;

  constructor(
    readonly url: string,
    readonly namespace: string,
    message: string,
  ) {
    super(message);
  }
}

/** The deployment has no GET /v1/base_list, though the namespace exists. */
export class BaseListUnsupportedError extends ExtensionMissingError {
  override readonly name = 'BaseListUnsupportedError';
  readonly code = 'base_list_unsupported';

  constructor(url: string, namespace: string) {
    super(url, namespace, 'this deployment does not offer base_list (an extension of kb serve)');
  }
}

/** The deployment has no DELETE /v1/ns_delete: a 405, or a 404 though the namespace is listed. */
export class NsDeleteUnsupportedError extends ExtensionMissingError {
  override readonly name = 'NsDeleteUnsupportedError';
  readonly code = 'ns_delete_unsupported';

  constructor(url: string, namespace: string) {
    super(url, namespace, 'This deployment cannot delete namespaces: DELETE /v1/ns_delete is an extension of kb serve that it does not offer.');
  }
}

/** The client was given options it cannot work with (a URL that is not http/https, a token unfit for a header). */
export class ClientOptionsError extends KbClientError {
  override readonly name = 'ClientOptionsError';
  readonly code = 'invalid_client_options';
  readonly exitCode = EXIT.usage;
}

function carriedExitCode(error: object): number | undefined {
  const exitCode: unknown = (error as { exitCode?: unknown }).exitCode;
  return typeof exitCode === 'number' && Number.isInteger(exitCode) && exitCode >= 0 && exitCode <= 255 ? exitCode : undefined;
}

/**
 * The process exit code for an error, docs/contract.md, Exit codes: 0 for no error, then the `exitCode` an error carries
 * (every error of this module, the config errors, the CLI's usage errors), the status of a KbApiError raised
 * locally through src/api, and 1 for anything else.
 */
export function exitCodeFor(error: unknown): number {
  if (error === undefined || error === null) return EXIT.success;
  if (typeof error !== 'object') return EXIT.failure;
  const carried = carriedExitCode(error);
  if (carried !== undefined) return carried;
  if (error instanceof KbApiError) return exitCodeForStatus(error.status);
  return EXIT.failure;
}
