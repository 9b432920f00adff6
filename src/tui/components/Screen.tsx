import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import type { Hint } from '../keymap.js';
import { useTheme } from '../theme.js';
import { KeyHelp } from './KeyHelp.js';

/** Lines a screen spends outside its body: the title, two status lines, the key help. */
const CHROME_LINES = 4;

/** The rows left for a screen's body, given its height and the lines of any notice under the title. */
export function bodyHeight(height: number, noticeLines = 0): number {
  return Math.max(1, height - CHROME_LINES - noticeLines);
}

/**
 * The frame of every screen: a title (with `aside` at its right end), an optional notice, the body (exactly
 * `bodyHeight` rows, clipped), the status lines and the key help, so the key help stays on the bottom line whatever
 * the body holds. The body is clipped at the bottom only: what it holds is as wide as the screen at most (the lists
 * cut their lines, Ink wraps text to its box), and clipping at the sides too would have Ink cut every line again, some
 * 20 ms of the first screen.
 */
export function Screen(props: {
  height: number;
  width: number;
  title: ReactNode;
  aside?: string | undefined;
  notice?: readonly string[] | undefined;
  status: ReactNode;
  hints: readonly Hint[];
  children: ReactNode;
}) {
  const theme = useTheme();
  const notice = props.notice ?? [];
  return (
    <Box flexDirection="column" height={props.height}>
      <Box width={props.width}>
        <Box flexGrow={1} flexShrink={1}>
          <Text wrap="truncate-end" bold>
            {props.title}
          </Text>
        </Box>
        {props.aside === undefined ? null : (
          <Box flexShrink={0} marginLeft={2}>
            <Text dimColor={theme.muted}>{props.aside}</Text>
          </Box>
        )}
      </Box>
      {notice.map((line) => (
        <Text key={line} wrap="truncate-end" color={theme.warning}>
          {line}
        </Text>
      ))}
      <Box flexDirection="column" height={bodyHeight(props.height, notice.length)} overflowY="hidden" flexShrink={0}>
        {props.children}
      </Box>
      {props.status}
      <KeyHelp hints={props.hints} width={props.width} />
    </Box>
  );
}
