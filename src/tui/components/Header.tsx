import { Text } from 'ink';
import type { Remote } from '../hooks/useRemote.js';
import { useTheme } from '../theme.js';
import type { TuiDeployment } from '../types.js';

/** The line always on top: which profile, URL and organization the UI works on. */
export function Header({ deployment, organization }: { deployment: TuiDeployment; organization: Remote<string> }) {
  const theme = useTheme();
  const org = organization.data ?? (organization.loading ? '...' : '? (not verified)');
  return (
    <Text wrap="truncate-end">
      <Text bold color={theme.accent}>kb</Text>
      {'  profile '}
      <Text bold>{deployment.profile ?? '(none: KB_URL)'}</Text>
      {'  url '}
      <Text bold>{deployment.url}</Text>
      {'  org '}
      <Text bold color={organization.error === undefined ? undefined : theme.error}>{org}</Text>
    </Text>
  );
}
