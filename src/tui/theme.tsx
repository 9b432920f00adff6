import { createContext, useContext } from 'react';

/**
 * The few colors the TUI uses, by role. With color off (NO_COLOR, TERM=dumb) every role is undefined, and
 * nothing relies on color alone: the selection has a marker, errors a word, the focused field a marker.
 */
export interface Theme {
  accent: string | undefined;
  success: string | undefined;
  warning: string | undefined;
  error: string | undefined;
  /** Secondary text (rules, hints): dim with color, plain without. */
  muted: boolean;
}

export function makeTheme(color: boolean): Theme {
  return color
    ? { accent: 'cyan', success: 'green', warning: 'yellow', error: 'red', muted: true }
    : { accent: undefined, success: undefined, warning: undefined, error: undefined, muted: false };
}

const ThemeContext = createContext<Theme>(makeTheme(false));

export const ThemeProvider = ThemeContext.Provider;

export function useTheme(): Theme {
  return useContext(ThemeContext);
}

/** The color of a status line's tone. */
export function toneColor(theme: Theme, tone: 'info' | 'success' | 'warning' | 'error'): string | undefined {
  return tone === 'info' ? undefined : theme[tone];
}
