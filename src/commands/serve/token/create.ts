import { Flags } from '@oclif/core';
import { OrgName, KEY_RULE, TOKEN_PREFIX } from '../../../api/schemas.js';
import { TOKEN_ID, TOKEN_NAME, TOKEN_NAME_RULE } from '../../../cli/token-names.js';
import { EXIT } from '../../../client/exit-codes.js';
import { KbCommand } from '../../../cli/base-command.js';
import { parseExpiry } from '../../../cli/duration.js';
import { UsageError } from '../../../cli/errors.js';
import { loginCommand, readableCaFile, saveLocalProfile } from '../../../cli/serve-profile.js';
import { storageFlags, withStorage } from '../../../cli/storage.js';

const DEFAULT_URL = 'http://127.0.0.1:8080';

export default class TokenCreate extends KbCommand {
  static override summary = 'Create a bearer token for an organization of the local server';

  static override description = `Prints the new token alone as the last line of stdout, so
\`T=$(kb serve token create --org acme)\` works. The organization exists once a token names it. Only a hash of the token is stored: it cannot be shown again.
Works while \`kb serve\` runs on the same data dir, or against the database of PostgreSQL replicas (--database).

A token may have a name (unique among the tokens not revoked: \`kb serve token revoke NAME\` takes it), an expiry
(--expires: a duration such as 30d, 12h or 90s, or a date such as 2027-01-31, meaning 00:00 UTC; afterwards every
request with it is answered 401 saying when it expired) and a scope: --read-only tokens read as usual, and every write
with them is answered 403. Without these flags a token has full scope and never expires.

With --save the token is also saved as a CLI profile for the server at --url, so \`kb\` works at once: the profile
"local" (or "local-<port>" when "local" holds another server's token), or the one --profile names. A profile that
holds another server's token is never replaced. A profile with no token (after \`kb auth logout\`) is
taken only when --profile names it. For a server with TLS (\`kb serve --tls-cert\`), --cacert FILE is saved in the
profile, as \`kb auth login --cacert\` does.`;

  static override examples = [
    { description: 'Create a token for organization acme', command: '<%= config.bin %> serve token create --org acme' },
    { description: 'Keep it in a variable', command: 'T=$(<%= config.bin %> serve token create --org acme)' },
    { description: 'As JSON', command: '<%= config.bin %> serve token create --org acme --json' },
    { description: 'A named, read-only token for a dashboard, good for 30 days', command: '<%= config.bin %> serve token create --org acme --name dashboard --read-only --expires 30d' },
    {
      description: 'Get a token of the local server into a CLI profile (when the first one was lost)',
      command: '<%= config.bin %> serve token create --org local --save --url http://127.0.0.1:8080',
    },
    {
      description: 'The same for a local server with TLS, trusting its CA',
      command: '<%= config.bin %> serve token create --org local --save --url https://127.0.0.1:8443 --cacert ./ca.pem',
    },
    {
      description: 'Give the profile "local" a token again, after `kb auth logout`',
      command: '<%= config.bin %> serve token create --org local --save --profile local',
    },
  ];

  static override enableJsonFlag = true;

  static override flags = {
    org: Flags.string({ summary: 'The organization the token acts for.', required: true }),
    name: Flags.string({ summary: 'A name for the token, shown by `kb serve token list` and taken by `kb serve token revoke`.' }),
    expires: Flags.string({ summary: 'When the token stops working: a duration (30d, 12h, 90s) or a date (2027-01-31, 00:00 UTC). Default: never.' }),
    'read-only': Flags.boolean({ summary: 'The token reads and may not write (every write is answered 403).' }),
    save: Flags.boolean({ summary: 'Also save the token as a CLI profile for the server at --url.' }),
    url: Flags.string({ summary: `The server's URL, for --save. Default: ${DEFAULT_URL}.`, dependsOn: ['save'] }),
    profile: Flags.string({ summary: 'The profile --save writes. Default: local, or local-<port> when local holds another server\'s token.', dependsOn: ['save'] }),
    cacert: Flags.string({ summary: 'For --save: the CA certificate (PEM file) the profile trusts for an https --url.', dependsOn: ['save'] }),
    ...storageFlags,
  };

  async run(): Promise<{ org: string; token: string; profile?: string }> {
    const { flags } = await this.parse(TokenCreate);
    if (!OrgName.safeParse(flags.org).success) throw new UsageError(`Invalid --org ${JSON.stringify(flags.org)}: ${KEY_RULE}`);
    const name = flags.name === undefined ? undefined : tokenName(flags.name);
    const expiresAt = flags.expires === undefined ? undefined : parseExpiry(flags.expires);
    const url = flags.url ?? DEFAULT_URL;
    if (flags.save && !/^https?:\/\/[^\s/]+/.test(url)) throw new UsageError(`Invalid --url ${JSON.stringify(url)}: expected http://HOST:PORT`);
    const ca = flags.cacert === undefined ? undefined : readableCaFile(flags.cacert);
    const { generateToken } = await import('../../../server/tokens.js');
    const minted = generateToken();
    return withStorage(flags, this.context, 'kb serve token', async (store) => {
      const info = await store.createToken(flags.org, minted.id, minted.hash, { name, expiresAt, scope: flags['read-only'] ? 'read-only' : 'full' });
      // Shown before anything else can fail, so that a token is never made without reaching its user.
      if (!this.jsonEnabled()) {
        const traits = [info.name === null ? '' : ` "${info.name}"`, info.scope === 'read-only' ? ' (read-only)' : ''].join('');
        const until = info.expiresAt === null ? '' : `, expiring at ${info.expiresAt}`;
        this.io.stderr(`Created token ${info.id}${traits} for organization ${info.org}${until}, shown only this once:\n`);
        this.io.stdout(`${minted.token}\n`);
      }
      if (!flags.save) return { org: info.org, token: minted.token };
      try {
        const saved = await saveLocalProfile(store, this.context.profiles(), { url, token: minted.token, name: flags.profile, ca });
        this.io.stderr(`Saved as CLI profile "${saved.name}" for ${url}${saved.isDefault ? ' (the default)' : ''}.\n`);
        return { org: info.org, token: minted.token, profile: saved.name };
      } catch (error) {
        this.io.stderr(
          `Could not save it as a CLI profile: ${(error as Error).message}\n` +
            `The token works; save it yourself with \`${loginCommand(url, ca)}\`, giving it on stdin.\n`,
        );
        process.exitCode = EXIT.failure;
        return { org: info.org, token: minted.token };
      }
    });
  }
}

/** A name that could be taken for a token id or for a token itself is refused. */
function tokenName(name: string): string {
  if (name.startsWith(TOKEN_PREFIX) || TOKEN_ID.test(name) || !TOKEN_NAME.test(name)) {
    throw new UsageError(`Invalid --name: ${TOKEN_NAME_RULE}`);
  }
  return name;
}
