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

/** The time now, updated every `ms`: for "updated 3s ago", in the one component that shows it. */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}
