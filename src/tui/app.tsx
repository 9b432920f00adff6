import { Box, useApp, useStdout } from 'ink';
import { useCallback, useMemo, useRef, useState } from 'react';
import { Key } from '../api/schemas.js';
import { Header, organizationLabel } from './components/Header.js';
import { type TuiActions, TuiProvider } from './context.js';
import { KeyRouter } from './hooks/useKeys.js';
import { useRemote } from './hooks/useRemote.js';
import { useTerminalSize } from './hooks/useTerminalSize.js';
import type { HelpTopic } from './keymap.js';
import type { Terminal } from './terminal.js';
import { makeTheme, ThemeProvider } from './theme.js';
import type { Namespace } from '../api/schemas.js';
import type { Status, TuiClient, TuiDeployment } from './types.js';
import { type BaseListMemory, BasesView } from './views/BasesView.js';
import { HelpView } from './views/HelpView.js';
import { NamespacesView } from './views/NamespacesView.js';

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
}

/**
 * One line short of the terminal: an app as tall as the terminal makes Ink redraw the whole screen on every
 * change, which flickers.
 */
export function appHeight(rows: number): number {
  return Math.max(3, rows - 1);
}

const COMMANDS_HELP = 'Commands: :ns (the namespaces), :ns KEY (open one), :q (quit).';

/** The whole UI: the header, then the namespaces, a namespace's bases, or the help. */
export function App({ client, deployment, terminal, refreshSeconds, organization, namespaces, color }: AppProps) {
  const { exit } = useApp();
  const { write } = useStdout();
  const size = useTerminalSize();
  const theme = useMemo(() => makeTheme(color), [color]);
  const org = useRemote(
    () => (organization === undefined ? client.auth() : Promise.resolve(organization)),
    [client, organization],
    typeof organization === 'string' ? organization : undefined,
  );
  const [namespace, setNamespace] = useState<string | undefined>(undefined);
  const [help, setHelp] = useState<HelpTopic | undefined>(undefined);
  const memory = useRef<BaseListMemory>({ supported: undefined, session: new Map() });

  // The `:` command line, as k9s has it: a way to any screen by name.
  const run = useCallback(
    (line: string): Status | undefined => {
      const [name = '', argument, ...extra] = line.trim().split(/\s+/);
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
        if (!checked.success) return { tone: 'error', text: `Not a namespace key: ${argument}: ${checked.error.issues[0]?.message ?? ''}`, help: COMMANDS_HELP };
        setNamespace(argument);
        return undefined;
      }
      if (name === '') return undefined;
      return { tone: 'error', text: `Unknown command: :${line.trim()}`, help: COMMANDS_HELP };
    },
    [exit],
  );

  const actions = useMemo(
    (): TuiActions => ({
      client,
      deployment,
      terminal,
      refreshSeconds,
      run,
      // Ink writes nothing, then the whole last frame again: what the editor drew is gone.
      redraw: () => write(''),
      quit: () => exit(),
      showHelp: setHelp,
    }),
    [client, deployment, terminal, refreshSeconds, run, write, exit],
  );

  const height = appHeight(size.rows);
  const viewHeight = height - 1;
  const orgName = organizationLabel(org);
  return (
    <ThemeProvider value={theme}>
      <TuiProvider value={actions}>
        <KeyRouter>
          <Box flexDirection="column" width={size.columns} height={height}>
            <Header deployment={deployment} organization={org} width={size.columns} />
            <NamespacesView
              active={help === undefined && namespace === undefined}
              visible={help === undefined && namespace === undefined}
              width={size.columns}
              height={viewHeight}
              organization={orgName}
              initial={namespaces}
              onOpen={setNamespace}
            />
            {namespace === undefined ? null : (
              <BasesView
                key={namespace}
                organization={orgName}
                namespace={namespace}
                memory={memory.current}
                active={help === undefined}
                visible={help === undefined}
                width={size.columns}
                height={viewHeight}
                onBack={() => setNamespace(undefined)}
              />
            )}
            {help === undefined ? null : <HelpView topic={help} active width={size.columns} height={viewHeight} onClose={() => setHelp(undefined)} />}
          </Box>
        </KeyRouter>
      </TuiProvider>
    </ThemeProvider>
  );
}
