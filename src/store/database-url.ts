/**
 * Connections per replica unless told otherwise (kb serve --pool-size). Measured with scripts/bench on 2 cores with
 * PostgreSQL on the same machine: writes take at most two (group commit), lists a few more, and past this more
 * connections only queue on PostgreSQL's CPU while every replica's add up against max_connections. Kept here, beside
 * the URL, so that the CLI can show it without loading the driver.
 */
export const DEFAULT_POOL_SIZE = 8;

/** Query parameters of a PostgreSQL URL that hold a secret. */
const SECRET_PARAMETERS = ['password', 'sslpassword'];

/**
 * The URL as it may be shown in messages and logs: the password, also one in a query parameter, replaced by ***.
 * Of a URL that does not parse, only what precedes `//` is shown, since where its password starts is not known.
 */
export function maskDatabaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(text)?.[0];
    return scheme ? `${scheme}//***` : '***';
  }
  if (url.password !== '') url.password = '***';
  for (const name of SECRET_PARAMETERS) {
    if (url.searchParams.has(name)) url.searchParams.set(name, '***');
  }
  return url.href.replace(/=%2A%2A%2A(?=&|#|$)/g, '=***');
}

/**
 * Replaces every form of the URL's password in a text (an error message from the driver, say) by ***, so that no
 * message can leak it whatever the driver puts in it.
 */
export function redactPassword(text: string, databaseUrl: string): string {
  const secrets = new Set<string>();
  try {
    const url = new URL(databaseUrl);
    for (const raw of [url.password, ...SECRET_PARAMETERS.map((name) => url.searchParams.get(name) ?? '')]) {
      if (raw === '') continue;
      secrets.add(raw);
      try {
        secrets.add(decodeURIComponent(raw));
      } catch {
        // not percent-encoded text: the raw form is enough
      }
    }
  } catch {
    secrets.add(databaseUrl);
  }
  let redacted = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) redacted = redacted.split(secret).join('***');
  return redacted;
}
