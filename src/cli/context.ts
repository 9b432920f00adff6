import type { KbClient } from '../client/client.js';
import { readEnv, type KbEnvironment } from '../config/env.js';
import { configDir, dataDir } from '../config/paths.js';
import { ProfileStore, refusedTokenHelp, resolveDeployment, type Deployment } from '../config/profiles.js';
import { proxySettings } from '../config/proxy.js';
import { maskTokensIn } from './auth.js';
import type { CaFile } from './cacert.js';
import { parseByteSize } from './byte-size.js';
import { parseTimeout } from './duration.js';
import { uninterrupted } from './interrupt.js';
import { processIO, type IO } from './io.js';

export interface ContextOptions {
  /** The environment variables to go by; this process's when not given (src/config reads them). */
  variables?: NodeJS.ProcessEnv | undefined;
  /** The IO; this process's streams, as the environment allows, when not given. */
  io?: IO | undefined;
}

/** What a client is made for: the deployment, and the command's own --timeout and --verbose. */
export interface ClientRequest {
  url: string;
  token: string | undefined;
  /** --timeout, which wins over KB_TIMEOUT. */
  timeout?: string | undefined;
  /** --verbose, as KB_DEBUG=1: each request traced to stderr. */
  verbose?: boolean | undefined;
  /** Retries of a request that failed on the way (default: the client's); 0 for an answer now or none. */
  retries?: number | undefined;
  /** Many requests at once (kb apply, import, export): KbClientOptions.bulk. */
  bulk?: boolean | undefined;
  /** --cacert, which wins over KB_CA_CERT and the profile's CA. */
  cacert?: string | undefined;
  /** The profile's CA file, when the deployment is a profile's and it has one. */
  profileCa?: { profile: string; path: string } | undefined;
}

/** A URL given with the API's /v1 works, but the user should know what is used. */
export function noteApiPrefix(io: IO, given: string, used: string): void {
  io.stderr(`Note: ${given} ends in /v1, which kb adds itself; using ${used}\n`);
}

/**
 * What one kb invocation works with, made once by the base command and handed to what needs it (after GitHub CLI's
 * Factory): kb's environment, read once (src/config/env.ts); the IO; the profiles; and the client factory. Nothing
 * here loads what a command does not use: the client module (and undici) only when a client is asked for. Tests
 * make one with their own variables and an in-memory IO (test/commands/).
 */
export class Context {
  readonly env: KbEnvironment;
  readonly io: IO;
  readonly #variables: NodeJS.ProcessEnv | undefined;
  #profiles: ProfileStore | undefined;
  readonly #clients: KbClient[] = [];
  /** The deployment last resolved, so that a 401 can say where its token came from. */
  #deployment: Deployment | undefined;

  constructor(options: ContextOptions = {}) {
    this.#variables = options.variables;
    this.env = readEnv(options.variables);
    this.io = options.io ?? processIO(this.env);
  }

  /** Where the profiles are kept: KB_CONFIG_DIR, else the user config dir. */
  configDir(): string {
    return configDir(this.#variables);
  }

  /** Where a local server keeps its data: KB_DATA_DIR, else the user data dir. */
  dataDir(): string {
    return dataDir(this.#variables);
  }

  /**
   * The profiles in the config dir, one store for the invocation. A config file others can read is warned of on
   * stderr; Ctrl-C ends a wait for the config lock, never a save under it (it exits once the save is done).
   */
  profiles(): ProfileStore {
    this.#profiles ??= new ProfileStore({
      dir: this.configDir(),
      onWarning: (message) => this.io.stderr(`Warning: ${message}\n`),
      hold: uninterrupted,
    });
    return this.#profiles;
  }

  /** The deployment a command talks to: --profile, else KB_PROFILE, else the default profile; KB_URL and KB_TOKEN override. */
  async deployment(profileFlag: string | undefined): Promise<Deployment> {
    this.#deployment = await resolveDeployment({ profileFlag, env: this.#variables, store: this.profiles() });
    return this.#deployment;
  }

  /**
   * Where the token of the deployment in use came from, and what to do about a token refused (401), as gh says it; undefined
   * when no deployment with a token was resolved (`kb auth login` checks a token of its own).
   */
  refusedTokenHelp(): string | undefined {
    const deployment = this.#deployment;
    if (deployment === undefined || deployment.token === undefined) return undefined;
    return refusedTokenHelp(deployment);
  }

  /**
   * The CA file a client trusts on top of the system's CAs (docs/contract.md, TLS): --cacert, else
   * KB_CA_CERT, else the profile's; undefined for none.
   */
  caFile(request: Pick<ClientRequest, 'cacert' | 'profileCa'>): CaFile | undefined {
    if (request.cacert !== undefined) return { path: request.cacert, from: '--cacert' };
    if (this.env.caCert !== undefined) return { path: this.env.caCert, from: 'KB_CA_CERT' };
    const { profileCa } = request;
    return profileCa === undefined ? undefined : { path: profileCa.path, from: `profile "${profileCa.profile}"` };
  }

  /**
   * The certificates of caFile's file (PEM), read and checked (exit 2 naming it when it cannot serve), for a dispatcher
   * (src/client/undici.ts, defaultDispatcher's `ca`); undefined when no CA is given.
   */
  async trustedCa(request: Pick<ClientRequest, 'cacert' | 'profileCa'>): Promise<string[] | undefined> {
    const file = this.caFile(request);
    if (file === undefined) return undefined;
    const { nodeExtraCertificates, readCaFile } = await import('./cacert.js');
    return [...(await readCaFile(file)), ...(await nodeExtraCertificates(this.env.nodeExtraCaCerts))];
  }

  /**
   * The client factory: a client of the deployment with the invocation's timeout (--timeout, else KB_TIMEOUT), reply
   * limit (KB_MAX_RESPONSE), proxy (HTTPS_PROXY and the like), CA (caFile) and trace (--verbose, or KB_DEBUG=1).
   * Every client made is closed with the context.
   */
  async client(request: ClientRequest): Promise<KbClient> {
    const timeoutText = request.timeout ?? this.env.timeout;
    const timeoutMs = timeoutText === undefined ? undefined : parseTimeout(timeoutText, request.timeout ? '--timeout' : 'KB_TIMEOUT');
    const maxText = this.env.maxResponse;
    const maxResponseBytes = maxText === undefined ? undefined : parseByteSize(maxText, 'KB_MAX_RESPONSE');
    // A token in a URL (`kb api 'x?token=kbt_...'`) is masked in the trace as in errors.
    const trace = request.verbose || this.env.debug ? (line: string) => this.io.stderr(`* ${maskTokensIn(line)}\n`) : undefined;
    const ca = await this.trustedCa(request);
    const { KbClient } = await import('../client/client.js');
    const client = new KbClient({
      url: request.url, token: request.token, timeoutMs, maxResponseBytes, trace, proxy: proxySettings(this.env.proxy), ca,
      ...(request.retries === undefined ? {} : { retries: request.retries }),
      ...(request.bulk === true ? { bulk: true } : {}),
    });
    if (client.urlHadApiPrefix) noteApiPrefix(this.io, request.url, client.baseUrl);
    this.#clients.push(client);
    return client;
  }

  /** Closes the clients made. */
  async close(): Promise<void> {
    await Promise.all(this.#clients.splice(0).map((client) => client.close()));
  }
}
