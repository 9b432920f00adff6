import { Flags, type Interfaces } from '@oclif/core';
import type { KbClient } from '../client/client.js';
import { ApiError } from '../client/errors.js';
import type { Deployment } from '../config/profiles.js';
import { KbCommand, queryFlags } from './base-command.js';
import { noteApiPrefix } from './context.js';
import { didYouMean } from './did-you-mean.js';
import { CliError, UsageError } from './errors.js';
import { withSpinner } from './spinner.js';
import { EXIT } from '../client/exit-codes.js';

export const globalFlags = {
  profile: Flags.string({ summary: 'Profile to use (default: $KB_PROFILE, else the default profile).', helpGroup: 'GLOBAL' }),
  timeout: Flags.string({ summary: 'Request timeout, e.g. 10s or 500ms (default: $KB_TIMEOUT, else 30s).', helpGroup: 'GLOBAL' }),
  verbose: Flags.boolean({ summary: 'Trace each request to stderr: method, URL, status, time (also KB_DEBUG=1).', helpGroup: 'GLOBAL' }),
  cacert: Flags.string({
    summary: 'Trust this CA file (PEM) for the deployment\'s certificate, on top of the system\'s CAs, as curl\'s --cacert (default: $KB_CA_CERT, else the profile\'s).',
    helpGroup: 'GLOBAL',
  }),
};

type GlobalFlags = Interfaces.InferredFlags<typeof globalFlags>;

export interface Connection {
  client: KbClient;
  deployment: Deployment;
}

/** ". Did you mean docs?" after a message of what was not found, or nothing when no key is close. */
export function suggestion(word: string, keys: readonly string[]): string {
  const words = didYouMean(word, keys);
  return words === '' ? '' : `.${words}`;
}

/**
 * A namespace and a base as given: `NS BASE`, or `NS/BASE` in one word (as kb apply's plan prints them). `required`:
 * the base must be given one way or the other.
 */
export function namespaceAndBase(namespace: string, base: string | undefined, command: string, required: boolean): { namespace: string; base: string | undefined } {
  const slash = namespace.indexOf('/');
  if (slash === -1) {
    if (required && base === undefined) throw new UsageError('Missing the base: give NAMESPACE BASE, or NAMESPACE/BASE', `See \`kb ${command} --help\`.`);
    return { namespace, base };
  }
  if (base !== undefined) throw new UsageError(`unexpected argument: ${base}`, `${namespace} names the namespace and the base already. See \`kb ${command} --help\`.`);
  return { namespace: namespace.slice(0, slash), base: namespace.slice(slash + 1) };
}

/** A command that talks to a deployment: it resolves the profile, gets a client from the context, and renders what comes back. */
export abstract class ApiCommand extends KbCommand {
  // The global flags, and --query beside --json (a getter below, as KbCommand's).
  declare static baseFlags: typeof globalFlags & Partial<typeof queryFlags>;

  /** `bulk`: the command sends many requests at once (KbClientOptions.bulk). */
  protected async connect(flags: GlobalFlags, options: { requireToken?: boolean; bulk?: boolean } = {}): Promise<Connection> {
    const deployment = await this.context.deployment(flags.profile);
    if (options.requireToken !== false && deployment.token === undefined) {
      const which = deployment.profile === undefined ? 'this deployment' : `profile "${deployment.profile}"`;
      throw new CliError(
        `No token for ${which} (${deployment.url})`,
        EXIT.auth,
        `Run \`kb auth login${deployment.profile ? ` --profile ${deployment.profile}` : ''}\`, or set KB_TOKEN.`,
      );
    }
    const profileCa = deployment.profile === undefined || deployment.ca === undefined ? undefined : { profile: deployment.profile, path: deployment.ca };
    return { client: await this.newClient(deployment.url, deployment.token, flags, options.bulk, profileCa), deployment };
  }

  /** A client with the command's timeout, trace and CA, from the context's factory; closed when the command ends. */
  protected newClient(
    url: string,
    token: string | undefined,
    flags: Partial<GlobalFlags>,
    bulk?: boolean,
    profileCa?: { profile: string; path: string },
  ): Promise<KbClient> {
    return this.context.client({ url, token, timeout: flags.timeout, verbose: flags.verbose, bulk, cacert: flags.cacert, profileCa });
  }

  /** A URL given with the API's /v1 works, but the user should know what is used. */
  protected noteApiPrefix(given: string, used: string): void {
    noteApiPrefix(this.io, given, used);
  }

  /** Runs a request with a spinner on a terminal, when it takes longer than a moment. */
  protected request<T>(label: string, work: Promise<T>): Promise<T> {
    return withSpinner(this.io, label, work);
  }

  /**
   * A namespace or base not found (404) is said with the closest keys the deployment has ("Did you mean docs?"), read
   * with one list request after the 404, never before (docs/contract.md, Commands); a failure of that read leaves the
   * 404 as it was. `base` is the base asked for, when one was.
   */
  protected async suggestOnNotFound<T>(client: KbClient, work: Promise<T>, namespace: string, base?: string): Promise<T> {
    try {
      return await work;
    } catch (error) {
      if (!(error instanceof ApiError) || error.local || error.status !== 404) throw error;
      // kb serve's words (src/store/failures.ts) say which is missing; another deployment's may say neither.
      const missing = /^Base /.test(error.message) ? 'base' : /^Namespace /.test(error.message) ? 'namespace' : undefined;
      try {
        if (missing === 'base' && base !== undefined) error.message += suggestion(base, (await client.baseList(namespace)).map((found) => found.key));
        else if (missing === 'namespace') error.message += suggestion(namespace, error.nearby ?? (await client.nsList()).map((ns) => ns.key));
      } catch {
        // The suggestion is a help, not the answer: the 404 is told as it came.
      }
      throw error;
    }
  }

  /** A one-line confirmation of a change, on stderr (stdout keeps the data). */
  protected confirmChange(text: string): void {
    if (!this.jsonEnabled()) this.io.stderr(`${this.io.color ? '\u001B[32m✓\u001B[39m' : '✓'} ${text}\n`);
  }
}

Object.defineProperty(ApiCommand, 'baseFlags', {
  configurable: true,
  get(this: { enableJsonFlag?: boolean }) {
    return this.enableJsonFlag === true ? { ...globalFlags, ...queryFlags } : globalFlags;
  },
});
