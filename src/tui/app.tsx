import { Box, useApp } from 'ink';
import { useMemo, useRef, useState } from 'react';
import { Header } from './components/Header.js';
import { TuiProvider } from './context.js';
import { KeyRouter } from './hooks/useKeys.js';
import { useRemote } from './hooks/useRemote.js';
import { useTerminalSize } from './hooks/useTerminalSize.js';
import { makeTheme, ThemeProvider } from './theme.js';
import type { Namespace } from '../api/schemas.js';
import type { TuiClient, TuiDeployment } from './types.js';
import { type BaseListMemory, BasesView } from './views/BasesView.js';
import { HelpView } from './views/HelpView.js';
import { NamespacesView } from './views/NamespacesView.js';

export interface AppProps {
  client: TuiClient;
  deployment: TuiDeployment;
  /** Known already, or asked for already (GET /auth); otherwise the app asks. */
  organization?: string | Promise<string> | undefined;
  /** The first namespace list, asked for already; later ones the app asks for. */
  namespaces?: Promise<readonly Namespace[]> | undefined;
  color: boolean;
}

/**
 * One line short of the terminal: an app as tall as the terminal makes Ink redraw the whole screen on every
 * change, which flickers.
 */
export function appHeight(rows: number): number {
  return Math.max(3, rows - 1);
}

/** The whole UI: the header, then the namespaces, a namespace's bases, or the help. */
export function App({ client, deployment, organization, namespaces, color }: AppProps) {
  const { exit } = useApp();
  const size = useTerminalSize();
  const theme = useMemo(() => makeTheme(color), [color]);
  const org = useRemote(() => (organization === undefined ? client.auth() : Promise.resolve(organization)), [client, organization]);
  const [namespace, setNamespace] = useState<string | undefined>(undefined);
  const [help, setHelp] = useState(false);
  const memory = useRef<BaseListMemory>({ supported: undefined, session: new Map() });
  const actions = useMemo(() => ({ client, deployment, quit: () => exit(), showHelp: () => setHelp(true) }), [client, deployment, exit]);

  const height = appHeight(size.rows);
  const viewHeight = height - 1;
  return (
    <ThemeProvider value={theme}>
      <TuiProvider value={actions}>
        <KeyRouter>
          <Box flexDirection="column" width={size.columns} height={height}>
            <Header deployment={deployment} organization={org} />
            <NamespacesView
              active={!help && namespace === undefined}
              visible={!help && namespace === undefined}
              width={size.columns}
              height={viewHeight}
              initial={namespaces}
              onOpen={setNamespace}
            />
            {namespace === undefined ? null : (
              <BasesView
                key={namespace}
                namespace={namespace}
                memory={memory.current}
                active={!help}
                visible={!help}
                width={size.columns}
                height={viewHeight}
                onBack={() => setNamespace(undefined)}
              />
            )}
            {help ? <HelpView active width={size.columns} height={viewHeight} onClose={() => setHelp(false)} /> : null}
          </Box>
        </KeyRouter>
      </TuiProvider>
    </ThemeProvider>
  );
}
