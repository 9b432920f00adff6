/**
 * A word as a POSIX shell reads it back unchanged, for the commands kb's messages tell people to run: left bare when
 * it holds only characters no shell treats specially, else in single quotes (a quote inside as '\'').
 */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
