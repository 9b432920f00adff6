import { Text } from 'ink';
import type { Remote } from '../hooks/useRemote.js';
import { printable } from '../text.js';
import { useTheme } from '../theme.js';
import type { TuiDeployment } from '../types.js';

/** The organization as the header and the breadcrumbs show it, also while it loads or when it could not be read. */
export function organizationLabel(organization: Remote<string>): string {
  return organization.data ?? (organization.loading ? '...' : '?');
}

/** The line always on top: which profile, URL and organization the UI works on. */
export function Header({ deployment, organization }: { deployment: TuiDeployment; organization: Remote<string> }) {
  const theme = useTheme();
  const org = organization.data === undefined && !organization.loading ? '? (not verified)' : organizationLabel(organization);
  return (
    <Text wrap="truncate-end">
      <Text bold color={theme.accent}>kb</Text>
      {'  profile '}
      <Text bold>{deployment.profile ?? '(none: KB_URL)'}</Text>
      {'  url '}
      <Text bold>{deployment.url}</Text>
      {'  org '}
      <Text bold color={organization.error === undefined ? undefined : theme.error}>{printable(org)}</Text>
    </Text>
  );
}
