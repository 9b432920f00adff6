import { KbCommand } from '../cli/base-command.js';
import { type CompletableCommand, complete, type CompletionSources } from '../cli/completion.js';

/** How long a Tab may wait for the deployment's namespaces or bases. */
const DEPLOYMENT_TIMEOUT = '2s';

/**
 * What the completion scripts call (`kb completion`): `kb __complete -- WORDS...`, the word under the cursor last,
 * prints the candidates one a line. It never prompts, never fails: what cannot be read completes nothing.
 */
export default class CompleteWords extends KbCommand {
  static override hidden = true;

  static override summary = 'Print the completions of a command line (for the scripts of kb completion)';

  static override strict = false;

  async run(): Promise<void> {
    const words = this.argv[0] === '--' ? this.argv.slice(1) : [...this.argv];
    const current = words.pop() ?? '';
    const commands: CompletableCommand[] = this.config.commands.map((command) => ({
      id: command.id,
      aliases: command.aliases,
      hidden: command.hidden,
      flags: Object.values(command.flags).map((flag) => ({
        name: flag.name,
        char: flag.char,
        type: flag.type,
        options: flag.type === 'option' ? flag.options : undefined,
        hidden: flag.hidden,
      })),
      args: Object.values(command.args).map((arg) => ({ name: arg.name, options: arg.options })),
    }));
    let candidates: string[];
    try {
      candidates = await complete(commands, words, current, this.sources());
    } catch {
      candidates = [];
    }
    if (candidates.length > 0) this.io.stdout(`${candidates.join('\n')}\n`);
  }

  private sources(): CompletionSources {
    const quietly = async (work: () => Promise<string[]>) => {
      try {
        return await work();
      } catch {
        return [];
      }
    };
    const client = async (profile: string | undefined) => {
      const deployment = await this.context.deployment(profile);
      if (deployment.token === undefined) return undefined;
      const profileCa = deployment.profile === undefined || deployment.ca === undefined ? undefined : { profile: deployment.profile, path: deployment.ca };
      return this.context.client({ url: deployment.url, token: deployment.token, timeout: DEPLOYMENT_TIMEOUT, retries: 0, profileCa });
    };
    return {
      profiles: () => quietly(async () => [...(await this.context.profiles().read()).profiles.keys()]),
      namespaces: (profile) => quietly(async () => (await (await client(profile))?.nsList())?.map((ns) => ns.key) ?? []),
      bases: (profile, namespace) => quietly(async () => (await (await client(profile))?.baseList(namespace))?.map((base) => base.key) ?? []),
    };
  }
}
