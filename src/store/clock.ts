/**
 * Times as ISO 8601 text (`2026-11-27T00:05:22.123Z`), as `Date#toISOString` writes them. V8 formats that with a
 * printf of its own, thousands of instructions a call, and a keyed write took four (its rows' times, its kept reply's,
 * the cutoff of the replies it may replay): 4 to 6% of the instructions kb serve spent on the write. Writes
 * answered together share their millisecond, so each formatter keeps the text of the last millisecond it was asked
 * for: one formatter for each kind of time, so that "now" and "a day ago" do not take turns in one.
 */
export function isoFormatter(): (ms: number) => string {
  let lastMs = Number.NaN;
  let lastText = '';
  return (ms) => {
    if (ms !== lastMs) {
      lastText = new Date(ms).toISOString();
      lastMs = ms;
    }
    return lastText;
  };
}

const formatNow = isoFormatter();

/** The time now, as ISO 8601 text. */
export function isoNow(): string {
  return formatNow(Date.now());
}
