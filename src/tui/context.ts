import { createContext, useContext } from 'react';
import type { TuiClient, TuiDeployment } from './types.js';

export interface TuiActions {
  client: TuiClient;
  deployment: TuiDeployment;
  /** Ends the app; runTui then resolves. */
  quit(): void;
  showHelp(): void;
}

const TuiContext = createContext<TuiActions | undefined>(undefined);

export const TuiProvider = TuiContext.Provider;

export function useTui(): TuiActions {
  const actions = useContext(TuiContext);
  if (actions === undefined) throw new Error('useTui outside <App>');
  return actions;
}
