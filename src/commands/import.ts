import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { readTextSource } from '../cli/api-request.js';
import { type SyncResult, syncResources } from '../sync/plan.js';
import { FILE_FORMAT_HELP, parseResources } from '../sync/resources-file.js';

export default class Import extends ApiCommand {
  static override summary = 'Bring the namespaces and bases of a file into the deployment (apply, never deleting)';

  static override description = `\`kb apply -f FILE\` without --prune: creates what is missing and updates descriptions that differ, and never deletes anything. For moving content between a local instance and a remote deployment, with \`kb export\`.

${FILE_FORMAT_HELP}

With --json, stdout holds {dryRun, changes, counts, kept, applied}.`;

  static override examples = [
    '<%= config.bin %> import kb.yaml',
    { description: 'From the local instance to another deployment', command: '<%= config.bin %> export --profile local | <%= config.bin %> import --profile prod -' },
  ];

  static override enableJsonFlag = true;

  static override args = {
    file: Args.string({ description: 'The file to import (YAML or JSON); - reads stdin.', required: true }),
  };

  static override flags = {
    'dry-run': Flags.boolean({ summary: 'Print the plan, change nothing.' }),
  };

  async run(): Promise<SyncResult> {
    const { args, flags } = await this.parse(Import);
    const source = args.file === '-' ? '<stdin>' : args.file;
    const desired = await parseResources(await readTextSource(this.io, args.file, 'FILE'), source);
    // Many requests at once: several on each of two connections (src/client/undici.ts).
    const { client } = await this.connect(flags, { bulk: true });
    return syncResources(client, this.io, desired, { prune: false, pruneFlag: false, dryRun: flags['dry-run'] === true, yes: false, json: this.jsonEnabled(), verbose: flags.verbose === true });
  }
}
