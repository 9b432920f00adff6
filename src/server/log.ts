// The words of `kb serve --log-level` and `--log-format`, with no imports: the command's flags need them at parse
// time, before anything of the server is loaded. The logger itself is in logger.ts.

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** pretty: one short line per event, for a person at a terminal; json: one JSON object per line, for machines. */
export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
