import { useEffect, useRef, useState } from 'react';

/**
 * Calls `reload` every `seconds` while `idle` (a list on screen, nothing being typed or asked), counting from the
 * end of the last load, so a slow server is never asked twice at once and a failed load is tried again on the same
 * beat: a server that went away is picked up by itself when it comes back. 0 seconds turns it off.
 */
export function useAutoRefresh(reload: () => void, options: { seconds: number; idle: boolean; loading: boolean }): void {
  const { seconds, idle, loading } = options;
  // The latest reload, without restarting the wait each time the caller renders a new one.
  const latest = useRef(reload);
  latest.current = reload;
  useEffect(() => {
    if (seconds <= 0 || !idle || loading) return;
    const timer = setTimeout(() => latest.current(), seconds * 1000);
    return () => clearTimeout(timer);
  }, [seconds, idle, loading]);
}

/**
 * The time now, for "updated 7s ago" in the one component that shows it: read again as each whole second since
 * `then` passes (not on a beat of its own, which shows an age up to a second behind), from `from` seconds after
 * `then` on (an age below it reads the same), and never while `then` is undefined.
 */
export function useNow(then: number | undefined, from = 0): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (then === undefined) return;
    const elapsed = Math.max(0, Date.now() - then);
    const next = Math.max(from * 1000, Math.floor(elapsed / 1000) * 1000 + 1000);
    const timer = setTimeout(() => setNow(Date.now()), next - elapsed);
    return () => clearTimeout(timer);
  }, [then, now, from]);
  return now;
}
