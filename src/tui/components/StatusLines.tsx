import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import { useNow } from '../hooks/useAutoRefresh.js';
import { ago, JUST_NOW_SECONDS, printable } from '../text.js';
import { toneColor, useTheme } from '../theme.js';
import type { Status } from '../types.js';

/** Words that carry a status's tone without color. */
const PREFIX: Record<Status['tone'], string> = { info: '', success: '', warning: 'Note: ', error: 'Error: ' };

/** When a list was loaded, if it is. */
export interface Freshness {
  updatedAt: number | undefined;
  loading: boolean;
}

/**
 * The two lines above the key help: the last outcome, or an error and what to do about it; at the right end of
 * the first, how fresh the list is ("updated just now", "updated 7s ago"). `children` (a question, a prompt) take both lines instead.
 */
export function StatusLines({ status, freshness, children }: { status?: Status | undefined; freshness?: Freshness | undefined; children?: ReactNode }) {
  const theme = useTheme();
  if (children !== undefined) {
    return (
      <Box flexDirection="column" height={2} flexShrink={0}>
        {children}
      </Box>
    );
  }
  return (
    <Box flexDirection="column" height={2} flexShrink={0}>
      <Box>
        <Box flexGrow={1} flexShrink={1}>
          {status === undefined ? (
            <Text> </Text>
          ) : (
            <Text wrap="truncate-end" color={toneColor(theme, status.tone)} bold={status.tone === 'error'}>
              {PREFIX[status.tone]}
              {printable(status.text)}
            </Text>
          )}
        </Box>
        {freshness === undefined ? null : <Fresh {...freshness} />}
      </Box>
      {status?.help === undefined ? null : (
        <Text wrap="truncate-end" dimColor={theme.muted}>
          {printable(status.help)}
        </Text>
      )}
    </Box>
  );
}

/** "updated just now", "updated 7s ago": the clock ticks in this component alone, so it does not redraw the list. */
function Fresh({ updatedAt, loading }: Freshness) {
  const theme = useTheme();
  const now = useNow(loading ? undefined : updatedAt, JUST_NOW_SECONDS);
  const text = loading ? 'refreshing…' : updatedAt === undefined ? '' : `updated ${ago(updatedAt, now)}`;
  if (text === '') return null;
  return (
    <Box flexShrink={0} marginLeft={2}>
      <Text dimColor={theme.muted}>{text}</Text>
    </Box>
  );
}
