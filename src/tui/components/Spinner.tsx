import { Text } from 'ink';
import { useEffect, useState } from 'react';
import { useTheme } from '../theme.js';

// ASCII frames: they read the same in every terminal font and in a captured screen.
const FRAMES = ['|', '/', '-', '\\'];

export function Spinner({ label }: { label: string }) {
  const theme = useTheme();
  const [frame, setFrame] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setFrame((n) => (n + 1) % FRAMES.length), 100);
    return () => clearInterval(timer);
  }, []);
  return (
    <Text wrap="truncate-end">
      <Text color={theme.accent}>{FRAMES[frame]}</Text> {label}
    </Text>
  );
}
