import type { Hook } from '@oclif/core';
import { looksLikeToken, maskTokensIn, TOKEN_IN_ARGV_HELP } from '../auth.js';
import { distance } from '../did-you-mean.js';
import { UsageError } from '../errors.js';
import { escapeControls } from '../text.js';

/** "a", "a" or "b", "a", "b" or "c": each quoted. */
function either(words: readonly string[]): string {
  const quoted = words.map((word) => `"${word}"`);
  return quoted.length <= 1 ? (quoted[0] ?? '') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

/**
 * The commands (and topics) closest to what was typed: each is compared with as many of the typed words as it has,
 * the rest being taken for its arguments (`ns veiw docs` is close to `ns view`). Those of the best score, if close.
 */
export function closestCommands(typed: readonly string[], candidates: readonly string[]): string[] {
  const scored = candidates.map((candidate) => {
    const words = candidate.split(' ').length;
    const given = typed.slice(0, words).join(' ');
    return { candidate, words, score: distance(given, candidate), limit: Math.max(1, Math.floor(given.length / 3)) };
  });
  // What was typed exactly (a topic before a mistyped command) is no suggestion.
  const close = scored.filter(({ score, limit }) => score > 0 && score <= limit);
  const best = Math.min(...close.map(({ score }) => score));
  const atBest = close.filter(({ score }) => score === best);
  // The fullest reading wins a tie: "bse list" is "base list" more than "base".
  const most = Math.max(...atBest.map(({ words }) => words));
  return atBest
    .filter(({ words }) => words === most)
    .map(({ candidate }) => candidate)
    .sort();
}

/**
 * What users of gh, kubectl and aws type, and the kb command they mean: `kb login` is `kb auth login`, `kb ns get docs`
 * is `kb ns view docs`. The longest match of the typed words wins; what follows it is taken for arguments.
 */
const HABITS: Readonly<Record<string, string>> = {
  login: 'auth login',
  logout: 'auth logout',
  whoami: 'auth status',
  'auth list': 'auth status',
  'auth ls': 'auth status',
  'auth use': 'auth switch',
  namespace: 'ns',
  namespaces: 'ns',
  'namespace list': 'ns list',
  'namespaces list': 'ns list',
  bases: 'base',
  'ns get': 'ns view',
  'ns show': 'ns view',
  'ns describe': 'ns view',
  'base get': 'base view',
  'base show': 'base view',
  'base describe': 'base view',
  'base rm': 'base delete',
  'base remove': 'base delete',
  'ns rm': 'ns delete',
  'ns remove': 'ns delete',
  'serve token delete': 'serve token revoke',
  'serve token rm': 'serve token revoke',
};

function habit(words: readonly string[]): string | undefined {
  for (let n = Math.min(3, words.length); n > 0; n--) {
    const meant = HABITS[words.slice(0, n).join(' ')];
    if (meant !== undefined) return meant;
  }
  return undefined;
}

/**
 * An unknown command is a usage error (exit 2), with the closest commands as a suggestion, or the commands of the topic
 * it was typed in. Never a prompt: plugin-not-found asks "did you mean" on a TTY and exits 127, which scripts cannot
 * rely on.
 */
const hook: Hook<'command_not_found'> = async function (options) {
  const { bin } = options.config;
  const words = options.id.split(':');
  const ids = options.config.commandIDs;
  // oclif reads `kb ns list extra` as the command "ns list extra": a command followed by words it does not take.
  const command = words.map((_, i) => words.slice(0, words.length - i).join(':')).find((id) => ids.includes(id));
  const visible = options.config.commands.filter((candidate) => !candidate.hidden);
  const names = [...new Set([...visible.flatMap((candidate) => [candidate.id, ...candidate.aliases]), ...options.config.topics.map((topic) => topic.name)])].map(
    (name) => name.replaceAll(':', ' '),
  );
  // `kb serve tokn list`: a command (serve), then a mistyped one of its subcommands rather than an argument.
  const deeper = command === undefined ? [] : closestCommands(words, names.filter((name) => name.startsWith(`${command.replaceAll(':', ' ')} `)));
  let error: UsageError;
  const meant = habit(words);
  if (meant !== undefined) {
    const typed = options.id.replaceAll(':', ' ');
    error = new UsageError(`"${typed}" is not a kb command. Did you mean "${meant}"?`, `Run \`${bin} ${meant} --help\` for more.`);
  } else if (command !== undefined && deeper.length === 0) {
    const [extra] = words.slice(command.split(':').length);
    const typed = command.replaceAll(':', ' ');
    error = new UsageError(`unexpected argument: ${extra}`, `See \`${bin} ${typed} --help\` for what it takes.`);
  } else {
    const typed = options.id.replaceAll(':', ' ');
    const suggestions = deeper.length > 0 ? deeper : closestCommands(words, names);
    // Typed within a topic (`kb ns show`): what that topic has.
    const topic = words.length > 1 ? options.config.topics.find((candidate) => candidate.name === words.slice(0, -1).join(':') || candidate.name === words[0]) : undefined;
    const inTopic = topic === undefined ? [] : visible.filter((candidate) => candidate.id.startsWith(`${topic.name}:`) && candidate.id.split(':').length === topic.name.split(':').length + 1);
    let help = `Run \`${bin} --help\` for the list of commands.`;
    if (suggestions.length === 0 && topic !== undefined && inTopic.length > 0) {
      const topicWords = topic.name.replaceAll(':', ' ');
      help = `The commands of \`${bin} ${topicWords}\`: ${inTopic.map((candidate) => candidate.id.split(':').at(-1)).sort().join(', ')}. Run \`${bin} ${topicWords} --help\` for more.`;
    }
    error = new UsageError(`"${typed}" is not a kb command.${suggestions.length > 0 ? ` Did you mean ${either(suggestions)}?` : ''}`, help);
  }
  // A token typed into argv by mistake is not printed back (src/cli/auth.ts).
  const help = looksLikeToken(error.message) ? TOKEN_IN_ARGV_HELP : error.help;
  process.stderr.write(`Error: ${escapeControls(maskTokensIn(error.message))}\n${help}\n`);
  this.exit(error.exitCode);
};

export default hook;
