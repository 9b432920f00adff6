import { Args, Flags } from '@oclif/core';
import { KbCommand } from '../cli/base-command.js';
import { UsageError } from '../cli/errors.js';
import KbHelp, { HELP_TOPICS } from '../cli/help.js';
import { closestCommands } from '../cli/hooks/not-found.js';

/**
 * `kb help [COMMAND]`, as @oclif/plugin-help has it, but bundled with the other commands: the plugin would load
 * a second copy of @oclif/core from node_modules, slower to start and with its own error classes. Two topics are
 * tables rather than commands: `kb help exit-codes` and `kb help environment`.
 */
export default class Help extends KbCommand {
  static override summary = 'Display help for kb, a command, or a topic: exit-codes, environment';

  static override args = {
    command: Args.string({ description: 'Command to show help for, or exit-codes, or environment.', required: false }),
  };

  static override flags = {
    'nested-commands': Flags.boolean({ char: 'n', summary: 'Include all nested commands in the output.' }),
  };

  static override examples = [
    { description: 'The commands of a topic', command: '<%= config.bin %> help ns' },
    { description: 'One command, as `kb base create --help` shows it', command: '<%= config.bin %> help base create' },
    { description: 'What each exit code means', command: '<%= config.bin %> help exit-codes' },
    { description: 'The environment variables kb reads', command: '<%= config.bin %> help environment' },
  ];

  static override strict = false;

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(Help);
    const help = new KbHelp(this.config, { all: flags['nested-commands'] });
    const words = argv as string[];
    if (words.length === 1 && help.showHelpTopic(words[0] as string)) return;
    const id = words.join(':');
    if (words.length > 0 && this.config.findCommand(id) === undefined && this.config.findTopic(id) === undefined) {
      const names = [...this.config.commands.filter((command) => !command.hidden).flatMap((command) => [command.id, ...command.aliases]), ...this.config.topics.map((topic) => topic.name)];
      const suggestions = closestCommands(words, [...new Set([...names.map((name) => name.replaceAll(':', ' ')), ...Object.keys(HELP_TOPICS)])]);
      const typed = words.join(' ');
      throw new UsageError(
        `No help for "${typed}": it is neither a kb command nor a help topic.${suggestions.length > 0 ? ` Did you mean ${suggestions.map((word) => `"${word}"`).join(' or ')}?` : ''}`,
        `Run \`${this.config.bin} --help\` for the commands; \`${this.config.bin} help exit-codes\` and \`${this.config.bin} help environment\` for the tables.`,
      );
    }
    await help.showHelp(words);
  }
}
