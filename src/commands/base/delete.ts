import { Args, Flags } from '@oclif/core';
import type { Base } from '../../api/schemas.js';
import { ApiCommand, namespaceAndBase } from '../../cli/api-command.js';
import { CliError } from '../../cli/errors.js';
import { confirm } from '../../cli/prompt.js';
import { QUERY_SAMPLES } from '../../cli/query.js';
import { baseBlock } from '../../cli/render.js';
import { EXIT } from '../../client/exit-codes.js';

export default class BaseDelete extends ApiCommand {
  static override summary = 'Delete a base and all its data';

  static override description = `Asks for confirmation on a terminal. Without one (a script, CI) it refuses with exit 2 unless --yes is given.`;

  static override examples = [
    '<%= config.bin %> base delete docs faq',
    { description: 'In a script, the base named as kb apply names it', command: '<%= config.bin %> base delete docs/faq --yes' },
  ];

  static override enableJsonFlag = true;

  static querySample = QUERY_SAMPLES.base;

  static override args = {
    namespace: Args.string({ description: 'The namespace key, or NAMESPACE/BASE.', required: true }),
    base: Args.string({ description: 'The base key (unless given as NAMESPACE/BASE).' }),
  };

  static override flags = {
    yes: Flags.boolean({ char: 'y', summary: 'Delete without asking.' }),
  };

  async run(): Promise<Base> {
    const { args, flags } = await this.parse(BaseDelete);
    const { namespace, base: key = '' } = namespaceAndBase(args.namespace, args.base, 'base delete', true);
    const { client } = await this.connect(flags);
    // A malformed key fails before anyone is asked to confirm.
    await client.check('base_delete', { namespace, base: key });
    if (!flags.yes) {
      const sure = await confirm(this.io, `Delete base ${key} in namespace ${namespace}, with all its data?`, 'Pass --yes to delete without confirmation.');
      if (!sure) throw new CliError('Cancelled: nothing was deleted.', EXIT.failure);
    }
    const base = await this.request('Deleting base', this.suggestOnNotFound(client, client.baseDelete({ namespace, base: key }), namespace, key));
    if (!this.jsonEnabled()) this.io.stdout(baseBlock(base));
    this.confirmChange(`Deleted base ${base.key} from namespace ${base.namespace}`);
    return base;
  }
}
