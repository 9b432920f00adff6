import { Args, Command, Flags, loadHelpClass } from '@oclif/core';

/**
 * `kb help [COMMAND]`, as @oclif/plugin-help has it, but bundled with the other commands: the plugin would load
 * a second copy of @oclif/core from node_modules, slower to start and with its own error classes.
 */
export default class Help extends Command {
  static override summary = 'Display help for kb';

  static override args = {
    command: Args.string({ description: 'Command to show help for.', required: false }),
  };

  static override flags = {
    'nested-commands': Flags.boolean({ char: 'n', summary: 'Include all nested commands in the output.' }),
  };

  static override examples = [
    { description: 'The commands of a topic', command: '<%= config.bin %> help ns' },
    { description: 'One command, as `kb base create --help` shows it', command: '<%= config.bin %> help base create' },
  ];

  static override strict = false;

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(Help);
    const HelpClass = await loadHelpClass(this.config);
    await new HelpClass(this.config, { all: flags['nested-commands'] }).showHelp(argv as string[]);
  }
}
