import { Args, Flags } from '@oclif/core';
import type { Base } from '../../api/schemas.js';
import { ApiCommand } from '../../cli/api-command.js';
import { CliError, UsageError } from '../../cli/errors.js';
import { QUERY_SAMPLES } from '../../cli/query.js';
import { baseTable } from '../../cli/render.js';
import { EXIT } from '../../client/exit-codes.js';

export default class BaseList extends ApiCommand {
  static override summary = 'List the bases of a namespace, or of every namespace (-A), ordered by key';

  static override aliases = ['base:ls'];

  static override description = `Uses GET /v1/base_list, an extension that \`kb serve\` offers beyond the API document; -A (--all-namespaces, as kubectl's) uses GET /v1/base_list_all, another. Against a deployment without them, this says so plainly (exit 1); the namespace's other commands still work.`;

  static override examples = [
    '<%= config.bin %> base list docs',
    '<%= config.bin %> base list docs --json',
    { description: 'Every base of every namespace', command: '<%= config.bin %> base list -A' },
    { description: 'The list, then each change as it happens, until Ctrl-C (kubectl get -w)', command: '<%= config.bin %> base list docs --watch' },
  ];

  static override enableJsonFlag = true;

  static querySample = QUERY_SAMPLES.bases;

  static override args = {
    namespace: Args.string({ description: 'The namespace key (not with -A).' }),
  };

  static override flags = {
    'all-namespaces': Flags.boolean({ char: 'A', summary: 'The bases of every namespace, ordered by namespace key, then key.' }),
    watch: Flags.boolean({
      char: 'w',
      summary: 'Print the list, then each change as it happens (`created base docs/faq`), until Ctrl-C; with --json the list as one line, then NDJSON. Polls every 2 s where GET /v1/watch is not served.',
      exclusive: ['all-namespaces'],
    }),
  };

  async run(): Promise<Base[]> {
    const { args, flags } = await this.parse(BaseList);
    const all = flags['all-namespaces'] === true;
    if (all === (args.namespace !== undefined)) {
      throw new UsageError(all ? `unexpected argument: ${args.namespace}` : 'Missing 1 required arg: namespace', 'Give a NAMESPACE, or -A for every namespace. See `kb base list --help`.');
    }
    const { client } = await this.connect(flags);
    const namespace = args.namespace ?? '';
    if (flags.watch) {
      const { checkWatchFlags, watchList, byKey } = await import('../../cli/list-watch.js');
      checkWatchFlags(flags, 'base list');
      // A namespace that does not exist is said as by the list, with the closest keys, before watching.
      await this.request('Listing bases', this.suggestOnNotFound(client, client.baseList(namespace), namespace));
      await watchList(this.io, client, {
        scope: { namespace, bases: true }, kind: 'base', json: this.jsonEnabled(), items: (state) => byKey(state.bases.values()),
        table: (items) => baseTable(this.io, items, { wide: this.wide() }), empty: `No bases in ${namespace} yet: create one with \`kb base create ${namespace} KEY\`.`,
      });
      return [];
    }
    const bases = all
      ? await this.request('Listing bases', client.baseListAll())
      : await this.request('Listing bases', this.suggestOnNotFound(client, client.baseList(namespace), namespace));
    if (bases === undefined) {
      // Exit 2, as kb ns delete without ns_delete (docs/contract.md, Exit codes): no retry will make it work.
      throw new CliError('This deployment does not offer base_list_all (an extension of kb serve): it cannot list every base at once.', EXIT.usage, 'List the bases of one namespace with `kb base list NAMESPACE`.');
    }
    if (!this.jsonEnabled()) {
      if (bases.length > 0) this.io.stdout(baseTable(this.io, bases, { wide: this.wide(), namespaces: all }));
      else if (all) this.io.stderr('No bases yet: create one with `kb base create NAMESPACE KEY`.\n');
      else this.io.stderr(`No bases in ${namespace} yet: create one with \`kb base create ${namespace} KEY\`.\n`);
    }
    return bases;
  }
}
