import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { UsageError } from '../cli/errors.js';
import { readTextSource } from '../cli/api-request.js';
import { type SyncResult, syncResources } from '../sync/plan.js';
import { FILE_FORMAT_HELP, parseResources } from '../sync/resources-file.js';

export default class Apply extends ApiCommand {
  static override summary = 'Make the deployment match a file of namespaces and bases';

  static override description = `Creates the namespaces and bases the file has and the deployment lacks, and updates descriptions that differ. With --prune it also deletes the bases of the file's namespaces that the file does not list (asking first on a terminal; --yes without one). Namespaces the file does not name are left as they are (\`kb ns delete\` deletes one); the namespaces it names are created, as a base create into a missing one would not be without --create-namespace.

The plan (+ create, ~ update, - delete, with counts) is printed to stderr first: on a terminal, its counts, the first changes and every delete (--verbose prints every change); to a pipe or a file, every change. Applying twice changes nothing the second time, and says so. --dry-run prints the plan and changes nothing. Changes are sent several at a time (64), namespaces before their bases and deletes last; a long plan shows its progress on a terminal. If one fails, kb sends nothing more, lets those on their way finish, reports exactly which were applied, which were sent but whose outcome is unknown (a lost reply, or a gateway's: they may have been, and applying again settles them) and which were not, and exits by the error.

Reading the bases of a namespace that exists needs GET /v1/base_list, an extension of \`kb serve\`: against a deployment without it, only namespaces that do not exist yet can be applied.

${FILE_FORMAT_HELP}

With --json, stdout holds {dryRun, changes, counts, kept, applied}.`;

  static override examples = [
    '<%= config.bin %> apply kb.yaml --dry-run',
    '<%= config.bin %> apply -f kb.yaml',
    { description: 'Also delete bases that are not in the file, in a script', command: '<%= config.bin %> apply -f kb.yaml --prune --yes' },
  ];

  static override enableJsonFlag = true;

  static override args = {
    // ignoreStdin: oclif would take piped stdin as this argument's value (then -f - looked like a second file).
    file: Args.string({ description: 'The file to apply (YAML or JSON); - reads stdin. Or give it with -f.', ignoreStdin: true }),
  };

  static override flags = {
    file: Flags.string({ char: 'f', summary: 'The file to apply (YAML or JSON); - reads stdin (as kubectl apply -f).' }),
    'dry-run': Flags.boolean({ summary: 'Print the plan, change nothing.' }),
    prune: Flags.boolean({ summary: "Delete the bases of the file's namespaces that the file does not list." }),
    yes: Flags.boolean({ char: 'y', summary: 'Delete without asking (needed for --prune without a terminal).' }),
  };

  async run(): Promise<SyncResult> {
    const { args, flags } = await this.parse(Apply);
    if ((args.file === undefined) === (flags.file === undefined)) {
      throw new UsageError(args.file === undefined ? 'Missing the file to apply' : 'Give the file once: as FILE or with -f, not both', 'For example: `kb apply kb.yaml`, or `kb apply -f kb.yaml`. See `kb apply --help`.');
    }
    const file = (args.file ?? flags.file) as string;
    const source = file === '-' ? '<stdin>' : file;
    const desired = await parseResources(await readTextSource(this.io, file, args.file === undefined ? '-f' : 'FILE'), source);
    // Many requests at once: several on each of two connections (src/client/undici.ts).
    const { client } = await this.connect(flags, { bulk: true });
    return syncResources(client, this.io, desired, {
      // oclif leaves a boolean flag that was not given undefined.
      prune: flags.prune === true,
      pruneFlag: true,
      dryRun: flags['dry-run'] === true,
      yes: flags.yes === true,
      json: this.jsonEnabled(),
      verbose: flags.verbose === true,
    });
  }
}
