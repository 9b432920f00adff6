import { createContext, useContext } from 'react';
import type { HelpTopic } from './keymap.js';
import type { Terminal } from './terminal.js';
import type { Status, TuiClient, TuiDeployment } from './types.js';

/** What every screen may use: the client, the terminal, the settings of this run, and the app's navigation. */
export interface TuiActions {
  client: TuiClient;
  deployment: TuiDeployment;
  terminal: Terminal;
  /** Seconds between refreshes of an idle list; 0: never by itself. */
  refreshSeconds: number;
  /** Runs a `:` command line; resolves to a status when it says something (an unknown command), else undefined. */
  run(command: string): Status | undefined;
  /** Draws the whole screen again, after the editor had the terminal. */
  redraw(): void;
  /** Ends the app; runTui then resolves. */
  quit(): void;
  showHelp(topic: HelpTopic): void;
}

const TuiContext = createContext<TuiActions | undefined>(undefined);

export const TuiProvider = TuiContext.Provider;

export function useTui(): TuiActions {
  const actions = useContext(TuiContext);
  if (actions === undefined) throw new Error('useTui outside <App>');
  return actions;
}
