import { Flags, type Interfaces } from '@oclif/core';
import type { KbClient } from '../client/client.js';
import type { Deployment } from '../config/profiles.js';
import { KbCommand, queryFlags } from './base-command.js';
import { noteApiPrefix } from './context.js';
import { CliError } from './errors.js';
import { withSpinner } from './spinner.js';
import { EXIT } from '../client/exit-codes.js';

export const globalFlags = {
  profile: Flags.string({ summary: 'Profile to use (default: $KB_PROFILE, else the default profile).', helpGroup: 'GLOBAL' }),
  timeout: Flags.string({ summary: 'Request timeout, e.g. 10s or 500ms (default: $KB_TIMEOUT, else 30s).', helpGroup: 'GLOBAL' }),
  verbose: Flags.boolean({ summary: 'Trace each request to stderr: method, URL, status, time (also KB_DEBUG=1).', helpGroup: 'GLOBAL' }),
};

type GlobalFlags = Interfaces.InferredFlags<typeof globalFlags>;

export interface Connection {
  client: KbClient;
  deployment: Deployment;
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
    return { client: await this.newClient(deployment.url, deployment.token, flags, options.bulk), deployment };
  }

  /** A client with the command's timeout and trace, from the context's factory; closed when the command ends. */
  protected newClient(url: string, token: string | undefined, flags: Partial<GlobalFlags>, bulk?: boolean): Promise<KbClient> {
    return this.context.client({ url, token, timeout: flags.timeout, verbose: flags.verbose, bulk });
  }

  /** A URL given with the API's /v1 works, but the user should know what is used. */
  protected noteApiPrefix(given: string, used: string): void {
    noteApiPrefix(this.io, given, used);
  }

  /** Runs a request with a spinner on a terminal, when it takes longer than a moment. */
  protected request<T>(label: string, work: Promise<T>): Promise<T> {
    return withSpinner(this.io, label, work);
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
