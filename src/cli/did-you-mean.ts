/**
 * How many characters to add, drop or change, or pairs of neighbours to swap, to make one word the other (the optimal
 * string alignment distance): `dcos` is one swap from `docs`, as a typo is.
 */
export function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => (rows[i] as number[])[j] as number;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      (rows[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** At most this many words are suggested: more is a list, not a suggestion. */
const MOST = 3;

/**
 * The candidates close to a word that was not found, closest first: a third of its characters mistyped at most (one at
 * least), or the same word in another case. Not the word itself.
 */
export function closeTo(word: string, candidates: Iterable<string>): string[] {
  const limit = Math.max(1, Math.floor(word.length / 3));
  const scored: { candidate: string; score: number }[] = [];
  for (const candidate of new Set(candidates)) {
    if (candidate === word) continue;
    const score = candidate.toLowerCase() === word.toLowerCase() ? 0 : distance(word, candidate);
    if (score <= limit) scored.push({ candidate, score });
  }
  scored.sort((a, b) => a.score - b.score || (a.candidate < b.candidate ? -1 : 1));
  return scored.slice(0, MOST).map(({ candidate }) => candidate);
}

/** " Did you mean docs?" (or "docs or dogs?"), or nothing when no candidate is close. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const close = closeTo(word, candidates);
  if (close.length === 0) return '';
  const words = close.length === 1 ? close[0] : `${close.slice(0, -1).join(', ')} or ${close.at(-1)}`;
  return ` Did you mean ${words}?`;
}
