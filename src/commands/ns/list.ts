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
  ];

  static override enableJsonFlag = true;

  static querySample = QUERY_SAMPLES.namespaces;

  async run(): Promise<Namespace[]> {
    const { flags } = await this.parse(NsList);
    const { client } = await this.connect(flags);
    const namespaces = await this.request('Listing namespaces', client.nsList());
    if (!this.jsonEnabled()) {
      if (namespaces.length === 0) this.io.stderr('No namespaces yet: create one with `kb ns create KEY`.\n');
      else this.io.stdout(namespaceTable(this.io, namespaces, this.wide()));
    }
    return namespaces;
  }
}
