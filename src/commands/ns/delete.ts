import { Args, Flags } from '@oclif/core';
import type { Namespace } from '../../api/schemas.js';
import { ApiCommand, suggestion } from '../../cli/api-command.js';
import { CliError } from '../../cli/errors.js';
import { confirm } from '../../cli/prompt.js';
import { QUERY_SAMPLES } from '../../cli/query.js';
import { namespaceBlock } from '../../cli/render.js';
import type { KbClient } from '../../client/client.js';
import { ApiError } from '../../client/errors.js';
import { EXIT } from '../../client/exit-codes.js';

export default class NsDelete extends ApiCommand {
  static override summary = 'Delete a namespace; with --cascade, its bases too';

  static override description = `Uses DELETE /v1/ns_delete, an extension that \`kb serve\` offers beyond the API document: against a deployment without it, this says so (exit 2) and deletes nothing.

An empty namespace is deleted at once. One that holds bases is refused (exit 5) unless --cascade is given, which deletes them with it: on a terminal kb asks first, saying how many; without one (a script, CI) --yes is needed too.`;

  static override examples = [
    '<%= config.bin %> ns delete scratch',
    { description: 'With its bases, in a script', command: '<%= config.bin %> ns delete scratch --cascade --yes' },
  ];

  static override enableJsonFlag = true;

  static querySample = QUERY_SAMPLES.namespace;

  static override args = {
    namespace: Args.string({ description: 'The namespace key.', required: true }),
  };

  static override flags = {
    cascade: Flags.boolean({ summary: 'Delete its bases too, with all their data.' }),
    yes: Flags.boolean({ char: 'y', summary: 'Delete its bases without asking (needed with --cascade without a terminal).' }),
  };

  async run(): Promise<Namespace> {
    const { args, flags } = await this.parse(NsDelete);
    const { namespace } = args;
    const { client } = await this.connect(flags);
    // A malformed key fails before anything is sent or asked.
    await client.check('ns_delete', { namespace });
    const cascade = flags.cascade === true;
    if (cascade && flags.yes !== true) {
      // Asked with the count, which one read gives; without a terminal, --yes says it instead.
      const bases = this.io.canPrompt ? await this.request('Reading bases', this.suggestOnNotFound(client, client.baseList(namespace), namespace)) : [];
      if (bases.length > 0 || !this.io.canPrompt) {
        const what = `${bases.length} ${bases.length === 1 ? 'base' : 'bases'}`;
        const sure = await confirm(this.io, `Delete namespace ${namespace} and its ${what}, with all their data?`, 'Pass --yes with --cascade to delete a namespace and its bases without confirmation.');
        if (!sure) throw new CliError('Cancelled: nothing was deleted.', EXIT.failure);
      }
    }
    const ns = await this.request('Deleting namespace', deleted(client, namespace, cascade));
    if (!this.jsonEnabled()) this.io.stdout(namespaceBlock(ns));
    this.confirmChange(`Deleted namespace ${ns.key}${cascade ? ' and its bases' : ''}`);
    return ns;
  }
}

/**
 * ns_delete's answer. A deployment without the route is the client's NsDeleteUnsupportedError (exit 2); a namespace
 * that does not exist names the closest keys, from the namespaces the client read to tell the two apart.
 */
async function deleted(client: KbClient, namespace: string, cascade: boolean): Promise<Namespace> {
  try {
    return await client.nsDelete(cascade ? { namespace, cascade } : { namespace });
  } catch (error) {
    if (!(error instanceof ApiError) || error.local) throw error;
    // The server's help names its field ("cascade": true): the flag is what a user of kb passes.
    if (error.exitCode === EXIT.conflict && !cascade) {
      throw new CliError(error.message, EXIT.conflict, `Pass --cascade to delete its bases with it (\`kb base list ${namespace}\` shows them).`, error.requestId);
    }
    if (error.status !== 404) throw error;
    const keys = error.nearby ?? (await client.nsList()).map((ns) => ns.key);
    throw new CliError(`Namespace ${namespace} not found${suggestion(namespace, keys)}`, EXIT.notFound, '`kb ns list` shows the namespaces.');
  }
}
