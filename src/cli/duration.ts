import { UsageError } from './errors.js';

/** Accepts 30, 30s, 500ms or 2m; a bare number is seconds. */
export function parseTimeout(text: string, source: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  const amount = Number(match?.[1]);
  if (!match || !(amount > 0)) throw new UsageError(`Invalid ${source} ${JSON.stringify(text)}: expected a duration such as 10s, 500ms or 2m`);
  const unit = match[2] ?? 's';
  return Math.round(amount * (unit === 'ms' ? 1 : unit === 's' ? 1000 : 60_000));
}

const EXPIRY_UNITS_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * A token's expiry from `--expires`: a duration from now (90s, 12h, 30d, 2w) or a time (2027-01-31, which is its
 * 00:00 UTC, or 2027-01-31T18:00:00+02:00). Resolves to ISO 8601 text; one in the past is refused.
 */
export function parseExpiry(text: string, now = Date.now()): string {
  const trimmed = text.trim();
  const duration = /^(\d+)(s|m|h|d|w)$/.exec(trimmed);
  const at = duration
    ? now + Number(duration[1]) * (EXPIRY_UNITS_MS[duration[2] as string] as number)
    : isCalendarTime(trimmed)
      ? Date.parse(trimmed)
      : Number.NaN;
  if (!Number.isFinite(at) || (duration && Number(duration[1]) === 0)) {
    throw new UsageError(`Invalid --expires ${JSON.stringify(text)}: expected a duration such as 30d, 12h or 90s, or a date such as 2027-01-31`);
  }
  if (at <= now) throw new UsageError(`Invalid --expires ${JSON.stringify(text)}: ${new Date(at).toISOString()} is in the past`);
  return new Date(at).toISOString();
}

const TIME = /^(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** ISO 8601 as --expires takes it, on a day its month has: Date.parse reads 2027-02-30 as March 2nd. */
function isCalendarTime(text: string): boolean {
  const match = TIME.exec(text);
  if (!match) return false;
  const [year, month, day] = [match[1], match[2], match[3]].map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
}
