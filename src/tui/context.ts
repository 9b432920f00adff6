import { createContext, type RefObject, useContext } from 'react';
import type { LiveChanges } from './hooks/useLiveChanges.js';
import type { Command, HelpTopic } from './keymap.js';
import type { Terminal } from './terminal.js';
import type { Status, TuiClient, TuiDeployment } from './types.js';

/** What every screen may use: the client, the terminal, the settings of this run, and the app's navigation. */
export interface TuiActions {
  client: TuiClient;
  deployment: TuiDeployment;
  terminal: Terminal;
  /** Seconds between refreshes of an idle list; 0: never by itself. Not while `live` streams the changes. */
  refreshSeconds: number;
  /** The organization's changes as they happen, where the deployment streams them. */
  live: LiveChanges;
  /** No create, edit or delete (`--readonly`). */
  readonly: boolean;
  /** The commands no screen offers (those --readonly takes away). */
  disabled: readonly Command[];
  /**
   * Runs a `:` command line; returns a status when it says something at once (an unknown command), else undefined;
   * `report` says what comes later (a profile switch that failed).
   */
  run(command: string, report: (status: Status | undefined) => void): Status | undefined;
  /** The `:` lines of this run and earlier ones, oldest first (Up recalls them). */
  history: readonly string[];
  /** Adds a line run on `:` to the history, and saves it. */
  remember(line: string): void;
  /** The namespace keys last listed, for Tab after `:ns `. */
  namespaceKeys: RefObject<readonly string[]>;
  /** The names of the profiles in the config dir, for Tab after `:ctx ` (none until read). */
  profileNames: readonly string[];
  /** Draws the whole screen again, after the editor had the terminal. */
  redraw(): void;
  /** Ends the app; runTui then resolves. */
  quit(): void;
  showHelp(topic: HelpTopic): void;
  /** Shows `text` (a row as YAML) in a view of its own that scrolls, until esc. */
  showYaml(title: string, text: string): void;
}

const TuiContext = createContext<TuiActions | undefined>(undefined);

export const TuiProvider = TuiContext.Provider;

export function useTui(): TuiActions {
  const actions = useContext(TuiContext);
  if (actions === undefined) throw new Error('useTui outside <App>');
  return actions;
}
