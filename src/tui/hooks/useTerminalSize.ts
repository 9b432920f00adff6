import { useStdout } from 'ink';
import { useEffect, useState } from 'react';

export interface TerminalSize {
  columns: number;
  rows: number;
}

/** What a terminal that does not say its size is taken to be. */
export const FALLBACK_SIZE: TerminalSize = { columns: 80, rows: 24 };

function sizeOf(stream: NodeJS.WriteStream): TerminalSize {
  return { columns: stream.columns || FALLBACK_SIZE.columns, rows: stream.rows || FALLBACK_SIZE.rows };
}

/** The size of the terminal Ink renders to, updated on every resize, so the layout reflows. */
export function useTerminalSize(): TerminalSize {
  const { stdout } = useStdout();
  const [size, setSize] = useState(() => sizeOf(stdout));
  useEffect(() => {
    const onResize = () => {
      const next = sizeOf(stdout);
      setSize((previous) => (previous.columns === next.columns && previous.rows === next.rows ? previous : next));
    };
    onResize();
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return size;
}
