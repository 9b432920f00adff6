import { onInterrupt } from './interrupt.js';
import type { IO } from './io.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** Quick requests show nothing: the spinner appears only once a request has taken this long. */
const DELAY_MS = 250;

/** Shows a spinner on stderr while work runs longer than a moment, on a terminal only; always cleared after. */
export async function withSpinner<T>(io: IO, label: string, work: Promise<T>): Promise<T> {
  if (!io.animate) return work;
  let frame = 0;
  let shown = false;
  let interval: NodeJS.Timeout | undefined;
  const erase = () => {
    if (shown) io.stderr('\r\u001B[2K');
    shown = false;
  };
  // Ctrl-C while it spins leaves a clean line behind.
  const forget = onInterrupt(erase);
  const timer = setTimeout(() => {
    shown = true;
    interval = setInterval(() => io.stderr(`\r${FRAMES[frame++ % FRAMES.length]} ${label}`), 80);
  }, DELAY_MS);
  try {
    return await work;
  } finally {
    clearTimeout(timer);
    if (interval) clearInterval(interval);
    erase();
    forget();
  }
}
