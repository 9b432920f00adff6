import { Flags } from '@oclif/core';
import type { Namespace } from '../../api/schemas.js';
import { ApiCommand } from '../../cli/api-command.js';
import { QUERY_SAMPLES } from '../../cli/query.js';
import { namespaceTable } from '../../cli/render.js';

export default class NsList extends ApiCommand {
  static override summary = 'List the namespaces of your organization, ordered by key';

  static override aliases = ['ns:ls'];

  static override examples = [
    '<%= config.bin %> ns list',
    { description: 'Keys only, one a line, for a script', command: "<%= config.bin %> ns list --query '[].key'" },
    { description: 'The same in jq\'s language', command: "<%= config.bin %> ns list --jq '.[].key'" },
    { description: 'As YAML', command: '<%= config.bin %> ns list -o yaml' },
    { description: 'The list, then each change as it happens, until Ctrl-C (kubectl get -w)', command: '<%= config.bin %> ns list --watch' },
  ];

  static override flags = {
    watch: Flags.boolean({
      char: 'w',
      summary: 'Print the list, then each change as it happens (`created namespace docs`), until Ctrl-C; with --json the list as one line, then NDJSON. Polls every 2 s where GET /v1/watch is not served.',
    }),
  };

  static override enableJsonFlag = true;

  static querySample = QUERY_SAMPLES.namespaces;

  async run(): Promise<Namespace[]> {
    const { flags } = await this.parse(NsList);
    if (flags.watch) {
      const { checkWatchFlags, watchList, byKey } = await import('../../cli/list-watch.js');
      checkWatchFlags(flags, 'ns list');
      const { client } = await this.connect(flags);
      await watchList(this.io, client, {
        scope: { bases: false }, kind: 'namespace', json: this.jsonEnabled(), items: (state) => byKey(state.namespaces.values()),
        table: (items) => namespaceTable(this.io, items, this.wide()), empty: 'No namespaces yet: create one with `kb ns create KEY`.',
      });
      return [];
    }
    const { client } = await this.connect(flags);
    const namespaces = await this.request('Listing namespaces', client.nsList());
    if (!this.jsonEnabled()) {
      if (namespaces.length === 0) this.io.stderr('No namespaces yet: create one with `kb ns create KEY`.\n');
      else this.io.stdout(namespaceTable(this.io, namespaces, this.wide()));
    }
    return namespaces;
  }
}
