/**
 * Shell completion: `kb completion bash|zsh|fish` prints a script that asks `kb __complete WORDS...` for the words
 * that may come next, so the commands, their flags, the saved profiles and the live deployment's namespaces and bases
 * all complete (docs/contract.md, Commands). What completes is decided here, from the commands as oclif knows them.
 */

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** A command as completion needs it: oclif's manifest entry, reduced. */
export interface CompletableCommand {
  id: string;
  aliases: readonly string[];
  hidden: boolean;
  flags: readonly { name: string; char?: string | undefined; type: 'boolean' | 'option'; options?: readonly string[] | undefined; hidden?: boolean | undefined }[];
  args: readonly { name: string; options?: readonly string[] | undefined }[];
}

/** Values that come from the config or the deployment, asked for only when they are what completes. */
export interface CompletionSources {
  profiles(): Promise<string[]>;
  /** The namespace keys of the deployment that --profile (or the default) names. */
  namespaces(profile: string | undefined): Promise<string[]>;
  bases(profile: string | undefined, namespace: string): Promise<string[]>;
}

/** Words after `kb help` that are not commands. */
const HELP_TOPICS = ['exit-codes', 'environment'];

function unique(words: readonly string[]): string[] {
  return [...new Set(words)].sort();
}

/**
 * The words that may stand where `current` is being typed, after `words` (which follow `kb`), that begin with it.
 * A failure to reach the config or the deployment completes nothing from them, never an error.
 */
export async function complete(commands: readonly CompletableCommand[], words: readonly string[], current: string, sources: CompletionSources): Promise<string[]> {
  const visible = commands.filter((command) => !command.hidden);
  const ids = visible.flatMap((command) => [command.id, ...command.aliases].map((id) => ({ id: id.split(':'), command })));
  const nextWords = (typed: readonly string[]) =>
    ids.filter(({ id }) => id.length > typed.length && typed.every((word, i) => id[i] === word)).map(({ id }) => id[typed.length] as string);
  const matching = (candidates: readonly string[]) => unique(candidates.filter((candidate) => candidate.startsWith(current)));

  let command: CompletableCommand | undefined;
  let used = 0;
  for (const { id, command: candidate } of ids) {
    if (id.length > used && id.length <= words.length && id.every((word, i) => words[i] === word)) {
      command = candidate;
      used = id.length;
    }
  }
  if (command === undefined) return matching(nextWords(words));
  const rest = words.slice(used);

  if (command.id === 'help') return matching([...nextWords(rest), ...(rest.length === 0 ? HELP_TOPICS : [])]);

  const flagNamed = (word: string) =>
    word.startsWith('--') ? command.flags.find((flag) => `--${flag.name}` === word) : command.flags.find((flag) => flag.char !== undefined && `-${flag.char}` === word);
  const profile = (() => {
    const at = rest.lastIndexOf('--profile');
    const given = at === -1 ? rest.find((word) => word.startsWith('--profile='))?.slice('--profile='.length) : rest[at + 1];
    return given === '' ? undefined : given;
  })();

  const previous = rest.at(-1);
  const valueOf = previous === undefined ? undefined : flagNamed(previous);
  if (valueOf?.type === 'option') {
    if (valueOf.name === 'profile') return matching(await sources.profiles());
    return matching(valueOf.options ?? []);
  }
  if (current.startsWith('-')) {
    return matching([...command.flags.filter((flag) => !flag.hidden).map((flag) => `--${flag.name}`), '--help']);
  }

  // The positional arguments given so far: the words that are neither flags nor a flag's value.
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i] as string;
    if (word.startsWith('-')) {
      if (!word.includes('=') && flagNamed(word)?.type === 'option') i++;
    } else positional.push(word);
  }
  const subcommands = positional.length === 0 ? nextWords(words.slice(0, used)) : [];
  const arg = command.args[positional.length];
  let values: string[] = [];
  if (arg?.options !== undefined) values = [...arg.options];
  else if (arg?.name === 'namespace') values = await sources.namespaces(profile);
  else if (arg?.name === 'base' && positional[0] !== undefined) values = await sources.bases(profile, positional[0]);
  else if (arg?.name === 'profile') values = await sources.profiles();
  return matching([...subcommands, ...values]);
}

/** The script for a shell: it calls `kb __complete -- WORDS...` (the word under the cursor last) for the candidates. */
export function completionScript(shell: Shell, bin: string): string {
  switch (shell) {
    case 'bash':
      return `# ${bin} completion for bash: eval "$(${bin} completion bash)", e.g. in ~/.bashrc
_${bin}_complete() {
  local IFS=$'\\n'
  COMPREPLY=($(${bin} __complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _${bin}_complete ${bin}
`;
    case 'zsh':
      return `# ${bin} completion for zsh: eval "$(${bin} completion zsh)" in ~/.zshrc, after compinit
_${bin}_complete() {
  local -a candidates
  candidates=("\${(@f)$(${bin} __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  if (( \${#candidates[@]} )) && [[ -n "\${candidates[1]}" ]]; then
    compadd -Q -- "\${candidates[@]}"
  else
    _files
  fi
}
compdef _${bin}_complete ${bin}
`;
    case 'fish':
      return `# ${bin} completion for fish: ${bin} completion fish | source, e.g. in ~/.config/fish/config.fish
function __${bin}_complete
    set -l words (commandline -opc) (commandline -ct)
    ${bin} __complete -- $words[2..-1] 2>/dev/null
end
complete -c ${bin} -f -a '(__${bin}_complete)'
`;
  }
}
