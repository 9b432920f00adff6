import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import { printable } from '../text.js';
import { toneColor, useTheme } from '../theme.js';
import type { Status } from '../types.js';

/** Words that carry a status's tone without color. */
const PREFIX: Record<Status['tone'], string> = { info: '', success: '', warning: 'Note: ', error: 'Error: ' };

/** The two lines above the key help: the last outcome, or an error and what to do about it. */
export function StatusLines({ status, children }: { status?: Status | undefined; children?: ReactNode }) {
  const theme = useTheme();
  return (
    <Box flexDirection="column" height={2} flexShrink={0}>
      {children ??
        (status === undefined ? null : (
          <>
            <Text wrap="truncate-end" color={toneColor(theme, status.tone)} bold={status.tone === 'error'}>
              {PREFIX[status.tone]}
              {printable(status.text)}
            </Text>
            {status.help === undefined ? null : (
              <Text wrap="truncate-end" dimColor={theme.muted}>
                {printable(status.help)}
              </Text>
            )}
          </>
        ))}
    </Box>
  );
}
