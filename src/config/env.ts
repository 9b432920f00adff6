/**
 * Every environment variable kb reads, read here and nowhere else (issue 15). An empty variable counts as unset,
 * as it does for NO_COLOR by its own definition and for the KB_ variables by the help's promise. Values that need
 * parsing with a message of their own (KB_TIMEOUT, KB_MAX_RESPONSE) are given as text, for the module that owns
 * their meaning to parse.
 */
export interface KbEnvironment {
  /** KB_PROFILE: the profile to use when --profile is not given. */
  profile: string | undefined;
  /** KB_URL: overrides the profile's URL. */
  url: string | undefined;
  /** KB_TOKEN: overrides the profile's token. */
  token: string | undefined;
  /** KB_CA_CERT: a CA file (PEM) trusted on top of the system's, as curl's --cacert (the --cacert flag wins). */
  caCert: string | undefined;
  /** NODE_EXTRA_CA_CERTS: Node's own extra CAs, trusted by default, which a CA of the user's must not drop (src/cli/cacert.ts). */
  nodeExtraCaCerts: string | undefined;
  /** KB_CONFIG_DIR: where the profiles are kept, as given (configDir() makes it absolute). */
  configDir: string | undefined;
  /** KB_DATA_DIR: where `kb serve` keeps its database, as given (dataDir() makes it absolute). */
  dataDir: string | undefined;
  /** KB_DATABASE_URL: the PostgreSQL database of `kb serve` and `kb serve token`. */
  databaseUrl: string | undefined;
  /** KB_TIMEOUT, as text such as `10s` or `500ms`. */
  timeout: string | undefined;
  /** KB_MAX_RESPONSE, as text: the largest reply the client reads. */
  maxResponse: string | undefined;
  /** KB_DEBUG=1: trace each request, as --verbose does. */
  debug: boolean;
  /** NO_COLOR set to anything (https://no-color.org), or TERM=dumb. */
  noColor: boolean;
  /** The variable that says this is CI (CI or CONTINUOUS_INTEGRATION, unless `0` or `false`), if any. */
  ci: 'CI' | 'CONTINUOUS_INTEGRATION' | undefined;
  /**
   * The variable that makes Ink believe it runs in CI, by its own rule (is-in-ci: set at all, even empty, unless
   * `0` or `false`), where it draws no interactive frame: `kb tui` refuses to start then.
   */
  inkCi: 'CI' | 'CONTINUOUS_INTEGRATION' | undefined;
  /** The proxy variables, when HTTPS_PROXY, HTTP_PROXY or ALL_PROXY (either case) is set; src/config/proxy.ts checks them. */
  proxy: ProxyVariables | undefined;
  /** $VISUAL, else $EDITOR. */
  editor: string | undefined;
  /** PATH: where the shell finds commands (whether `kb` there is this kb, for the hints kb prints). */
  searchPath: string | undefined;
}

function text(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function ciVariable(env: NodeJS.ProcessEnv): KbEnvironment['ci'] {
  return (['CI', 'CONTINUOUS_INTEGRATION'] as const).find((name) => {
    const value = text(env[name]);
    return value !== undefined && value !== '0' && value.toLowerCase() !== 'false';
  });
}

function inkCiVariable(env: NodeJS.ProcessEnv): KbEnvironment['inkCi'] {
  return (['CI', 'CONTINUOUS_INTEGRATION'] as const).find((name) => name in env && env[name] !== '0' && env[name] !== 'false');
}

/** A variable and its value. */
export interface NamedValue {
  name: string;
  value: string;
}

/** HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY, each by the name that set it: the lower-case one first, as curl. */
export interface ProxyVariables {
  http: NamedValue | undefined;
  https: NamedValue | undefined;
  /** ALL_PROXY: for a scheme whose own variable is not set. */
  all?: NamedValue | undefined;
  noProxy: string | undefined;
}

function firstSet(env: NodeJS.ProcessEnv, names: readonly string[]): NamedValue | undefined {
  for (const name of names) {
    const value = text(env[name]);
    if (value !== undefined) return { name, value };
  }
  return undefined;
}

function proxyVariables(env: NodeJS.ProcessEnv): ProxyVariables | undefined {
  const http = firstSet(env, ['http_proxy', 'HTTP_PROXY']);
  const https = firstSet(env, ['https_proxy', 'HTTPS_PROXY']);
  const all = firstSet(env, ['all_proxy', 'ALL_PROXY']);
  if (http === undefined && https === undefined && all === undefined) return undefined;
  return { http, https, all, noProxy: firstSet(env, ['no_proxy', 'NO_PROXY'])?.value };
}

/** kb's view of an environment: process.env unless another is given (tests, child processes). */
export function readEnv(env: NodeJS.ProcessEnv = process.env): KbEnvironment {
  return {
    profile: text(env.KB_PROFILE),
    url: text(env.KB_URL),
    token: text(env.KB_TOKEN),
    caCert: text(env.KB_CA_CERT),
    nodeExtraCaCerts: text(env.NODE_EXTRA_CA_CERTS),
    configDir: text(env.KB_CONFIG_DIR),
    dataDir: text(env.KB_DATA_DIR),
    databaseUrl: text(env.KB_DATABASE_URL),
    timeout: text(env.KB_TIMEOUT),
    maxResponse: text(env.KB_MAX_RESPONSE),
    debug: env.KB_DEBUG === '1',
    noColor: text(env.NO_COLOR) !== undefined || env.TERM === 'dumb',
    ci: ciVariable(env),
    inkCi: inkCiVariable(env),
    proxy: proxyVariables(env),
    editor: text(env.VISUAL) ?? text(env.EDITOR),
    searchPath: text(env.PATH),
  };
}
