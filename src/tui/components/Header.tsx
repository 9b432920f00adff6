import { Text } from 'ink';
import type { Remote } from '../hooks/useRemote.js';
import { cut, displayWidth, printable } from '../text.js';
import { useTheme } from '../theme.js';
import type { TuiDeployment } from '../types.js';

/** The organization as the header and the breadcrumbs show it, also while it loads or when it could not be read. */
export function organizationLabel(organization: Remote<string>): string {
  return organization.data ?? (organization.loading ? '...' : '?');
}

/**
 * The values of the top line cut to fit `width` columns with the labels around them: the URL is cut first, then the
 * profile, the organization last (it says whose data this is).
 */
export function headerValues(values: { profile: string; url: string; org: string }, width: number): { profile: string; url: string; org: string } {
  const labels = displayWidth('kb  profile   url   org ');
  const room = Math.max(3, width - labels);
  const org = cut(values.org, room - 2);
  const profile = cut(values.profile, Math.max(1, room - displayWidth(org) - 1));
  const url = cut(values.url, Math.max(1, room - displayWidth(org) - displayWidth(profile)));
  return { profile, url, org };
}

const READ_ONLY = '  read-only';

/**
 * The line always on top: which profile, URL and organization the UI works on, --readonly, and how the lists are kept
 * fresh (`refresh`: "live" while the changes stream, or the period of the refresh).
 */
export function Header(props: { deployment: TuiDeployment; organization: Remote<string>; width: number; readonly?: boolean | undefined; refresh?: string | undefined }) {
  const { deployment, organization, width, refresh } = props;
  const readonly = props.readonly ?? false;
  const refreshText = refresh === undefined ? '' : `  ${refresh}`;
  const theme = useTheme();
  const org = organization.data === undefined && !organization.loading ? '? (not verified)' : organizationLabel(organization);
  // --readonly is said first, where no narrow terminal cuts it (as k9s marks its read-only mode in its header).
  const shown = headerValues({ profile: printable(deployment.profile ?? '(none: KB_URL)'), url: printable(deployment.url), org: printable(org) }, width - (readonly ? READ_ONLY.length : 0) - refreshText.length);
  return (
    <Text wrap="truncate-end">
      <Text bold color={theme.accent}>kb</Text>
      {readonly ? <Text bold color={theme.warning}>{READ_ONLY}</Text> : null}
      {'  profile '}
      <Text bold>{shown.profile}</Text>
      {'  url '}
      <Text bold>{shown.url}</Text>
      {'  org '}
      <Text bold color={organization.error === undefined ? undefined : theme.error}>{shown.org}</Text>
      {refresh === 'live' ? <Text color={theme.success}>{refreshText}</Text> : refreshText}
    </Text>
  );
}
