import { readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { makeDirectories } from '../os/files.js';

/** Lines of `:` kept across runs: a small file, as k9s keeps its command history. */
export const HISTORY_LIMIT = 100;

/** The `:` lines of earlier runs, oldest first; none when the file is missing or unreadable (history is a convenience). */
export function loadHistory(file: string | undefined): string[] {
  if (file === undefined) return [];
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .slice(-HISTORY_LIMIT);
  } catch {
    return [];
  }
}

/** `line` added last (an earlier copy of it dropped), at most HISTORY_LIMIT lines kept. */
export function withLine(history: readonly string[], line: string): string[] {
  const trimmed = line.trim();
  if (trimmed === '') return [...history];
  return [...history.filter((entry) => entry !== trimmed), trimmed].slice(-HISTORY_LIMIT);
}

/** Writes the history, readable by its owner only (0600), in a config dir of 0700; a failure to write loses nothing else. */
export function saveHistory(file: string | undefined, history: readonly string[]): void {
  if (file === undefined) return;
  try {
    makeDirectories(dirname(file), 0o700);
    writeFileSync(file, `${history.join('\n')}\n`, { mode: 0o600 });
  } catch {
    // Best effort: the TUI goes on without a saved history.
  }
}

/** The words `:` knows, in the order Tab offers them. */
export const COMMAND_WORDS = ['ns', 'namespaces', 'profile', 'ctx', 'help', 'quit', 'q'] as const;

/** The words of `:` that take a profile name (k9s's `:ctx`). */
export const PROFILE_WORDS: readonly string[] = ['profile', 'ctx', 'context'];

function commonPrefix(words: readonly string[]): string {
  if (words.length === 0) return '';
  let prefix = words[0] ?? '';
  for (const word of words) while (!word.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}

/**
 * Tab on the command line: the command word, then a namespace key (after `ns`) or a profile name (after `ctx` or
 * `profile`), completed as far as the candidates agree, with a space after a whole command word; undefined when
 * nothing more can be added.
 */
export function complete(line: string, namespaces: readonly string[], profiles: readonly string[] = []): string | undefined {
  const match = /^(\s*)(\S*)(\s+)?(\S*)$/.exec(line);
  if (match === null) return undefined;
  const [, lead = '', word = '', gap, argument = ''] = match;
  if (gap === undefined) {
    const candidates = COMMAND_WORDS.filter((candidate) => candidate.startsWith(word));
    if (candidates.length === 1) return `${lead}${candidates[0]} `;
    const prefix = commonPrefix(candidates);
    return prefix.length > word.length ? `${lead}${prefix}` : undefined;
  }
  const names = word === 'ns' || word === 'namespaces' ? namespaces : PROFILE_WORDS.includes(word) ? profiles : [];
  const candidates = names.filter((name) => name.startsWith(argument));
  const prefix = candidates.length === 1 ? (candidates[0] ?? '') : commonPrefix(candidates);
  return prefix.length > argument.length ? `${lead}${word}${gap}${prefix}` : undefined;
}
