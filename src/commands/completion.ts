import { Args } from '@oclif/core';
import { KbCommand } from '../cli/base-command.js';
import { completionScript, SHELLS, type Shell } from '../cli/completion.js';

export default class Completion extends KbCommand {
  static override summary = 'Print a shell completion script for bash, zsh or fish, to eval';

  static override description = 'Completes commands and flags, the names of the saved profiles (after --profile and kb auth switch), and the namespace and base keys of the deployment in use, asked of it as you press Tab (with a short timeout; nothing completes from a deployment that does not answer). The script calls kb itself, so kb must be on your PATH.';

  static override examples = [
    { description: 'In ~/.bashrc', command: 'eval "$(<%= config.bin %> completion bash)"' },
    { description: 'In ~/.zshrc, after compinit', command: 'eval "$(<%= config.bin %> completion zsh)"' },
    { description: 'In ~/.config/fish/config.fish', command: '<%= config.bin %> completion fish | source' },
  ];

  static override args = {
    shell: Args.string({ description: 'The shell: bash, zsh or fish.', required: true, options: [...SHELLS] }),
  };

  async run(): Promise<void> {
    const { args } = await this.parse(Completion);
    this.io.stdout(completionScript(args.shell as Shell, this.config.bin));
  }
}
