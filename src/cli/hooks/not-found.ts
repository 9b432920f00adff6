import type { Hook } from '@oclif/core';
import { looksLikeToken, maskTokensIn, TOKEN_IN_ARGV_HELP } from '../auth.js';
import { UsageError } from '../errors.js';
import { escapeControls } from '../text.js';

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] as number;
      row[j] = Math.min(above + 1, (row[j - 1] as number) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] as number;
}

/**
 * An unknown command is a usage error (exit 2), with the closest command as a suggestion. Never a prompt:
 * plugin-not-found asks "did you mean" on a TTY and exits 127, which scripts cannot rely on.
 */
const hook: Hook<'command_not_found'> = async function (options) {
  const words = options.id.split(':');
  const ids = options.config.commandIDs;
  // oclif reads `kb ns list extra` as the command "ns list extra": a command followed by words it does not take.
  const command = words.map((_, i) => words.slice(0, words.length - i).join(':')).find((id) => ids.includes(id));
  let error: UsageError;
  if (command !== undefined) {
    const [extra] = words.slice(command.split(':').length);
    const typed = command.replaceAll(':', ' ');
    error = new UsageError(`unexpected argument: ${extra}`, `See \`${options.config.bin} ${typed} --help\` for what it takes.`);
  } else {
    const typed = options.id.replaceAll(':', ' ');
    const [best] = ids
      .map((id) => id.replaceAll(':', ' '))
      .map((id) => ({ id, score: distance(typed, id) }))
      .sort((a, b) => a.score - b.score || a.id.localeCompare(b.id));
    const suggestion = best !== undefined && best.score <= Math.max(2, Math.floor(typed.length / 3)) ? best.id : undefined;
    error = new UsageError(
      `"${typed}" is not a kb command.${suggestion ? ` Did you mean "${suggestion}"?` : ''}`,
      `Run \`${options.config.bin} --help\` for the list of commands.`,
    );
  }
  // A token typed into argv by mistake is not printed back (src/cli/auth.ts).
  const help = looksLikeToken(error.message) ? TOKEN_IN_ARGV_HELP : error.help;
  process.stderr.write(`Error: ${escapeControls(maskTokensIn(error.message))}\n${help}\n`);
  this.exit(error.exitCode);
};

export default hook;
