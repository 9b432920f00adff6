import { Box, useApp, useStdout } from 'ink';
import { useCallback, useMemo, useRef, useState } from 'react';
import { Key } from '../api/schemas.js';
import { Header, organizationLabel } from './components/Header.js';
import { type TuiActions, TuiProvider } from './context.js';
import { loadHistory, PROFILE_WORDS, saveHistory, withLine } from './history.js';
import { KeyRouter } from './hooks/useKeys.js';
import { useLiveChanges } from './hooks/useLiveChanges.js';
import { useRemote } from './hooks/useRemote.js';
import { useTerminalSize } from './hooks/useTerminalSize.js';
import { type HelpTopic, WRITES } from './keymap.js';
import type { Terminal } from './terminal.js';
import { makeTheme, ThemeProvider } from './theme.js';
import type { Namespace } from '../api/schemas.js';
import type { Status, TuiClient, TuiDeployment } from './types.js';
import { type BaseListMemory, BasesView } from './views/BasesView.js';
import { HelpView } from './views/HelpView.js';
import { NamespacesView } from './views/NamespacesView.js';
import { ProfilesView } from './views/ProfilesView.js';
import { YamlView } from './views/YamlView.js';

export interface AppProps {
  client: TuiClient;
  deployment: TuiDeployment;
  terminal: Terminal;
  /** Seconds between refreshes of an idle list; 0: never by itself. */
  refreshSeconds: number;
  /** Known already, or asked for already (GET /auth); otherwise the app asks. */
  organization?: string | Promise<string> | undefined;
  /** The first namespace list, in hand or asked for already; later ones the app asks for. */
  namespaces?: readonly Namespace[] | Promise<readonly Namespace[]> | undefined;
  color: boolean;
  /** The namespace to start in (`kb tui NS`). */
  namespace?: string | undefined;
  /** No create, edit or delete offered or done (`--readonly`). */
  readonly?: boolean | undefined;
  /** Where the `:` history is kept across runs (in the config dir); none: this run only. */
  historyFile?: string | undefined;
  /** Another profile's client and deployment, for `:profile NAME` (`:ctx NAME`). */
  connect?: ((profile: string) => Promise<{ client: TuiClient; deployment: TuiDeployment }>) | undefined;
  /** The names of the saved profiles, for the picker of `:ctx` and Tab after it. */
  profiles?: (() => Promise<readonly string[]>) | undefined;
}

/**
 * One line short of the terminal: an app as tall as the terminal makes Ink redraw the whole screen on every
 * change, which flickers.
 */
export function appHeight(rows: number): number {
  return Math.max(3, rows - 1);
}

const COMMANDS_HELP = 'Commands: :ns [KEY], :ctx [NAME] (:profile), :help, :q.';

const NO_PROFILES = async (): Promise<readonly string[]> => [];

/** The whole UI: the header, then the namespaces, a namespace's bases, or the help. */
export function App(props: AppProps) {
  const { terminal, refreshSeconds, namespaces, color, connect } = props;
  const listProfiles = props.profiles ?? NO_PROFILES;
  const readonly = props.readonly ?? false;
  const { exit } = useApp();
  // The profile in use: the one kb tui started with, until `:profile NAME` switches.
  const [connection, setConnection] = useState(() => ({ client: props.client, deployment: props.deployment, organization: props.organization, generation: 0 }));
  const { client, deployment, organization } = connection;
  const { write } = useStdout();
  const size = useTerminalSize();
  const theme = useMemo(() => makeTheme(color), [color]);
  const org = useRemote(
    () => (organization === undefined ? client.auth() : Promise.resolve(organization)),
    [client, organization],
    typeof organization === 'string' ? organization : undefined,
  );
  const [namespace, setNamespace] = useState<string | undefined>(props.namespace);
  const [help, setHelp] = useState<HelpTopic | undefined>(undefined);
  const [yaml, setYaml] = useState<{ title: string; text: string } | undefined>(undefined);
  // The profile picker of `:ctx`, with why it opened (a name that is no profile).
  const [picker, setPicker] = useState<{ notice: Status | undefined } | undefined>(undefined);
  // Read when the picker opens, and once at the start for Tab after `:ctx `.
  const profiles = useRemote(listProfiles, [listProfiles, picker !== undefined]);
  // The help, the YAML view or the picker covers the lists, which keep their state beneath.
  const covered = help !== undefined || yaml !== undefined || picker !== undefined;
  const [history, setHistory] = useState(() => loadHistory(props.historyFile));
  const namespaceKeys = useRef<readonly string[]>([]);
  const { historyFile } = props;
  const remember = useCallback(
    (line: string) =>
      setHistory((now) => {
        const next = withLine(now, line);
        saveHistory(historyFile, next);
        return next;
      }),
    [historyFile],
  );
  const memory = useRef<BaseListMemory>({ supported: undefined, session: new Map() });
  const live = useLiveChanges(client);

  const switchProfile = useCallback(
    (name: string, report: (status: Status | undefined) => void): Status | undefined => {
      if (connect === undefined) return { tone: 'warning', text: 'This kb tui cannot switch profiles.' };
      connect(name).then(
        (next) => {
          setNamespace(undefined);
          setConnection((now) => ({ client: next.client, deployment: next.deployment, organization: undefined, generation: now.generation + 1 }));
        },
        (error: unknown) => report({ tone: 'error', text: `Cannot switch to profile ${name}: ${error instanceof Error ? error.message : String(error)}` }),
      );
      return { tone: 'info', text: `Switching to profile ${name}...` };
    },
    [connect],
  );

  // The `:` command line, as k9s has it: a way to any screen by name.
  const run = useCallback(
    (line: string, report: (status: Status | undefined) => void): Status | undefined => {
      const [name = '', argument, ...extra] = line.trim().split(/\s+/);
      if ((name === 'help' || name === 'h' || name === '?') && argument === undefined) {
        setHelp(namespace === undefined ? 'namespaces' : 'bases');
        return undefined;
      }
      if (PROFILE_WORDS.includes(name) && extra.length === 0) {
        // As k9s's `:ctx`: without a name, the list to pick from; a name that is no profile opens it too, whole.
        if (argument === undefined) {
          setPicker({ notice: undefined });
          return undefined;
        }
        if (props.profiles !== undefined && profiles.data !== undefined && !profiles.data.includes(argument)) {
          setPicker({ notice: { tone: 'error', text: `no profile named ${argument}: the profiles are listed above; enter switches to one.` } });
          return undefined;
        }
        return switchProfile(argument, report);
      }
      if (name === 'q' || name === 'q!' || name === 'quit') {
        exit();
        return undefined;
      }
      if ((name === 'ns' || name === 'namespaces') && extra.length === 0) {
        if (argument === undefined) {
          setNamespace(undefined);
          return undefined;
        }
        const checked = Key.safeParse(argument);
        if (!checked.success) return { tone: 'error', text: `Not a namespace key: ${argument}: ${checked.error.issues[0]?.message ?? ''}`, help: COMMANDS_HELP, keys: ['commandLine'] };
        setNamespace(argument);
        return undefined;
      }
      if (name === '') return undefined;
      return { tone: 'error', text: `Unknown command: :${line.trim()}`, help: COMMANDS_HELP, keys: ['commandLine'] };
    },
    [exit, switchProfile, props.profiles, profiles.data, namespace],
  );

  const actions = useMemo(
    (): TuiActions => ({
      client,
      deployment,
      terminal,
      refreshSeconds,
      live,
      readonly,
      disabled: readonly ? WRITES : [],
      history,
      remember,
      namespaceKeys,
      profileNames: profiles.data ?? [],
      run,
      // Ink writes nothing, then the whole last frame again: what the editor drew is gone.
      redraw: () => write(''),
      quit: () => exit(),
      showHelp: setHelp,
      showYaml: (title: string, text: string) => setYaml({ title, text }),
    }),
    [client, deployment, terminal, refreshSeconds, live, readonly, history, remember, profiles.data, run, write, exit],
  );

  const height = appHeight(size.rows);
  const viewHeight = height - 1;
  const orgName = organizationLabel(org);
  return (
    <ThemeProvider value={theme}>
      <TuiProvider value={actions}>
        <KeyRouter>
          <Box flexDirection="column" width={size.columns} height={height}>
            <Header deployment={deployment} organization={org} width={size.columns} readonly={readonly} refresh={live.mode === 'live' ? 'live' : refreshSeconds > 0 ? `every ${refreshSeconds}s` : undefined} />
            <NamespacesView
              key={`namespaces-${connection.generation}`}
              active={!covered && namespace === undefined}
              visible={!covered && namespace === undefined}
              width={size.columns}
              height={viewHeight}
              organization={orgName}
              initial={connection.generation === 0 ? namespaces : undefined}
              onOpen={setNamespace}
            />
            {namespace === undefined ? null : (
              <BasesView
                key={`${connection.generation}:${namespace}`}
                organization={orgName}
                namespace={namespace}
                memory={memory.current}
                active={!covered}
                visible={!covered}
                width={size.columns}
                height={viewHeight}
                onBack={() => setNamespace(undefined)}
              />
            )}
            {yaml === undefined || help !== undefined ? null : (
              <YamlView title={yaml.title} text={yaml.text} width={size.columns} height={viewHeight} onClose={() => setYaml(undefined)} />
            )}
            {picker === undefined || help !== undefined ? null : (
              <ProfilesView
                profiles={profiles.data}
                error={profiles.error === undefined ? undefined : profiles.error instanceof Error ? profiles.error.message : String(profiles.error)}
                current={deployment.profile}
                notice={picker.notice}
                width={size.columns}
                height={viewHeight}
                onClose={() => setPicker(undefined)}
                onPick={(name) => {
                  setPicker(undefined);
                  if (name !== deployment.profile) switchProfile(name, () => undefined);
                }}
              />
            )}
            {help === undefined ? null : <HelpView topic={help} readonly={readonly} active width={size.columns} height={viewHeight} onClose={() => setHelp(undefined)} />}
          </Box>
        </KeyRouter>
      </TuiProvider>
    </ThemeProvider>
  );
}
