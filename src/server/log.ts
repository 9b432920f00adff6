export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Logger {
  /** False when info lines go nowhere, so callers can skip building them. */
  readonly logsInfo?: boolean;
  info(line: string): void;
  warn(line: string): void;
  error(line: string): void;
}

/** One line per event to a sink (stderr by default). Callers never pass tokens or headers in. */
export function createLogger(level: LogLevel, sink: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Logger {
  const rank = LOG_LEVELS.indexOf(level);
  const at = (minimum: LogLevel) => (line: string) => {
    if (rank <= LOG_LEVELS.indexOf(minimum)) sink(line);
  };
  return { logsInfo: rank <= LOG_LEVELS.indexOf('info'), info: at('info'), warn: at('warn'), error: at('error') };
}
