import { UsageError } from './errors.js';

/** Accepts 30, 30s, 500ms or 2m; a bare number is seconds. */
export function parseTimeout(text: string, source: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  const amount = Number(match?.[1]);
  if (!match || !(amount > 0)) throw new UsageError(`Invalid ${source} ${JSON.stringify(text)}: expected a duration such as 10s, 500ms or 2m`);
  const unit = match[2] ?? 's';
  return Math.round(amount * (unit === 'ms' ? 1 : unit === 's' ? 1000 : 60_000));
}
