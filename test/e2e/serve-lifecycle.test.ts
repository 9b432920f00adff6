import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isolatedEnv, KB_BIN, logMessages, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { acknowledged } from '../helpers/history.js';
import { halfSentCreate } from '../helpers/wire.js';

/**
 * kb serve's life as a person meets it, run from the built bin/run.js: the first token (also with a broken config and
 * when killed at any point), the token commands, backup and restore, and shutdown (docs/contract.md: First start, Tokens, Backup, Shutdown).
 */

const running: ServeProcess[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
});

async function serve(args: string[], env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const server = await startServe(args, env);
  running.push(server);
  return server;
}

async function works(url: string, token: string): Promise<boolean> {
  const response = await fetch(`${url}/v1/auth`, { headers: { authorization: `Bearer ${token}` } });
  return response.status === 200;
}

const TOKEN = /kbt_[A-Za-z0-9_-]{43}/;
const firstToken = (server: ServeProcess) => TOKEN.exec(server.stdout())?.[0];

function profiles(env: NodeJS.ProcessEnv): Record<string, { url: string; token?: string }> {
  const file = join(env.KB_CONFIG_DIR as string, 'config.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { profiles: Record<string, { url: string; token?: string }> }).profiles : {};
}

/** The command a start names to get a token saved (`kb serve token create ... --save`), without `kb`. */
function saveCommand(server: ServeProcess): string | undefined {
  for (const message of logMessages(server.stderr())) {
    const command = /`kb (serve token create --org local --save --url [^`]+)`/.exec(message)?.[1];
    if (command !== undefined) return command;
  }
  return undefined;
}

describe('kb serve: the first token always reaches its user', () => {
  it('shows the token before saving it, so a broken CLI config costs the profile, not the token', async () => {
    const env = isolatedEnv();
    const config = join(env.KB_CONFIG_DIR as string, 'config.json');
    writeFileSync(config, '{ "profiles": ', { mode: 0o600 });
    const server = await serve([], env);
    await expect.poll(() => firstToken(server)).toBeDefined();
    await expect.poll(() => server.stderr()).toMatch(/could not save the token as a CLI profile/);
    expect(server.stderr()).toContain(`kb auth login --url ${server.url}`);
    expect(await works(server.url, firstToken(server) as string)).toBe(true);
    expect(readFileSync(config, 'utf8')).toBe('{ "profiles": ');
  });

  it('names itself in the first start\'s hint as the shell would find it: kb on PATH, else the path of the script', async () => {
    const { mkdirSync, symlinkSync } = await import('node:fs');
    const env = isolatedEnv();
    // Not on PATH (run by its path, from a clone): the hint gives the script, so that it works as printed.
    const offPath = await serve([], env);
    await expect.poll(() => offPath.stdout()).toMatch(/Saved as CLI profile "local"/);
    expect(offPath.stdout()).toContain(`Try \`${KB_BIN} ns list\` in another terminal`);
    // A link to it on PATH (the quick start's ~/.local/bin/kb): the hint says kb.
    const bin = join(env.KB_CONFIG_DIR as string, '..', `bin-${Date.now()}`);
    mkdirSync(bin);
    symlinkSync(KB_BIN, join(bin, 'kb'));
    const onPath = await serve([], { ...env, KB_CONFIG_DIR: `${env.KB_CONFIG_DIR as string}-2`, KB_DATA_DIR: `${env.KB_DATA_DIR as string}-2`, PATH: `${bin}:${env.PATH ?? ''}` });
    await expect.poll(() => onPath.stdout()).toMatch(/Saved as CLI profile "local"/);
    expect(onPath.stdout()).toContain('Try `kb ns list` in another terminal');
    // Each line of it fits an 80-column terminal (the quick start's), the token on a line of its own.
    const greeting = onPath.stdout().split('\n').slice(0, 6);
    expect(greeting[0]).toMatch(/^Created the first token, for organization "local" at http:\/\/127\.0\.0\.1:\d+\.$/);
    expect(greeting[1]).toBe('It is shown only this once:');
    for (const line of greeting) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it('a second server (another data dir) saves local-<port>, never over the first one\'s profile, and says so', async () => {
    const env = isolatedEnv();
    const first = await serve([], env);
    await expect.poll(() => first.stdout()).toMatch(/Saved as CLI profile "local" \(the default\)/);
    const second = await serve([], { ...env, KB_DATA_DIR: join(env.KB_CONFIG_DIR as string, '..', `other-${Date.now()}`) });
    const port = new URL(second.url).port;
    await expect.poll(() => second.stdout()).toMatch(new RegExp(`Saved as CLI profile "local-${port}"`));
    const saved = profiles(env);
    expect(saved.local?.token).toBe(firstToken(first));
    expect(saved[`local-${port}`]?.token).toBe(firstToken(second));
    expect(await works(first.url, saved.local?.token as string)).toBe(true);
    expect(await works(second.url, saved[`local-${port}`]?.token as string)).toBe(true);
    // --profile names it, and a name holding another server's token is refused, with the token still shown.
    const third = await serve(['--profile', 'local'], { ...env, KB_DATA_DIR: join(env.KB_CONFIG_DIR as string, '..', `third-${Date.now()}`) });
    await expect.poll(() => third.stderr()).toMatch(/could not save the token as a CLI profile/);
    expect(await works(third.url, firstToken(third) as string)).toBe(true);
    expect(profiles(env).local?.token).toBe(firstToken(first));
  });

  it('on a later start with no profile holding a token, says the exact command that saves one, and that command works', async () => {
    const env = isolatedEnv();
    const first = await serve([], env);
    await expect.poll(() => firstToken(first)).toBeDefined();
    first.child.kill('SIGTERM');
    await first.exited;
    running.splice(0);
    // The profile is lost (another tool rewrote the config, say).
    writeFileSync(join(env.KB_CONFIG_DIR as string, 'config.json'), '{"profiles":{}}', { mode: 0o600 });
    const again = await serve([], env);
    await expect.poll(() => again.stderr()).toMatch(/no CLI profile holds a token of this server/);
    const command = saveCommand(again);
    expect(command).toBeDefined();
    const saved = await runKb((command as string).split(' '), { env });
    expect(saved.code, saved.stderr).toBe(0);
    expect((await runKb(['ns', 'list', '--json'], { env })).code).toBe(0);

    const third = await serve([], env);
    await expect.poll(() => logMessages(third.stderr()).some((message) => message.startsWith('CLI profile "local" holds a token of this server'))).toBe(true);
  });

  /** A loopback port free a moment ago. */
  async function freePort(): Promise<number> {
    return new Promise<number>((resolve) => {
      const probe = createNetServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
  }

  /** Serves a new data dir once (its first token saved as profile local) and stops it; the env keeps both. */
  async function servedOnce(env: NodeJS.ProcessEnv): Promise<{ url: string; token: string }> {
    const first = await serve([], env);
    await expect.poll(() => first.stdout()).toMatch(/Saved as CLI profile "local"/);
    first.child.kill('SIGTERM');
    await first.exited;
    running.splice(running.indexOf(first), 1);
    return { url: first.url, token: firstToken(first) as string };
  }

  it('served again on another port, the profile it saved follows it there, token kept, said in one line; kb works at once', async () => {
    const env = isolatedEnv();
    const before = await servedOnce(env);
    const again = await serve(['--port', String(await freePort())], env);
    expect(again.url).not.toBe(before.url);
    await expect.poll(() => logMessages(again.stderr()), { timeout: 10_000 }).toContain(
      `CLI profile "local" holds a token of this server: its URL was ${before.url}, it is now ${again.url}`,
    );
    expect(profiles(env)).toEqual({ local: { url: again.url, token: before.token } });
    const listed = await runKb(['ns', 'list', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });

  it('leaves the profile where something else listens now, naming the stale URL and a command that points it here', async () => {
    const env = isolatedEnv();
    const before = await servedOnce(env);
    const squatter = createNetServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => squatter.listen(Number(new URL(before.url).port), '127.0.0.1', resolve));
    try {
      const again = await serve([], env);
      const said = () => logMessages(again.stderr()).find((message) => message.startsWith('CLI profile "local"'));
      await expect.poll(said, { timeout: 10_000 }).toBeDefined();
      expect(said()).toBe(
        `CLI profile "local" holds a token of this server but points at ${before.url} (something listens there). Point it here with ` +
          `\`kb auth token --profile local | kb auth login --profile local --url ${again.url} --with-token\``,
      );
      expect(profiles(env).local).toEqual({ url: before.url, token: before.token });
      const printed = await runKb(['auth', 'token', '--profile', 'local'], { env });
      const login = await runKb(['auth', 'login', '--profile', 'local', '--url', again.url, '--with-token'], { env, input: printed.stdout });
      expect(login.code, login.stderr).toBe(0);
      expect(profiles(env).local).toEqual({ url: again.url, token: before.token });
      expect((await runKb(['ns', 'list', '--json'], { env })).code).toBe(0);
    } finally {
      squatter.close();
    }
  });

  it('saves the first token into a logged-out profile that --profile names (it holds no token to lose)', async () => {
    const env = isolatedEnv();
    writeFileSync(join(env.KB_CONFIG_DIR as string, 'config.json'), JSON.stringify({ profiles: { dev: { url: 'https://kb.example.com' } } }), { mode: 0o600 });
    const server = await serve(['--profile', 'dev'], env);
    await expect.poll(() => server.stdout()).toMatch(/Saved as CLI profile "dev" \(the default\)/);
    expect(profiles(env)).toEqual({ dev: { url: server.url, token: firstToken(server) } });
    expect((await runKb(['ns', 'list', '--json'], { env })).code).toBe(0);
  });

  /** `npm test` kills 16 first starts; `npm run test:torture` sets KB_KILL_CYCLES=100. */
  const cycles = Number(process.env.KB_KILL_CYCLES ?? 16);
  it(`killed at any of ${cycles} points of a first start, leaves a working token in a profile or an exact way to get one`, async () => {
    const outcomes = { saved: 0, told: 0 };
    for (let cycle = 0; cycle < cycles; cycle++) {
      const env = isolatedEnv();
      // Kill points spread over the whole start: before the database exists, while it is built, after the token is
      // made, while the profile is written, and after.
      const delayMs = (cycle * 37) % 700;
      const child = spawn(process.execPath, [KB_BIN, 'serve', '--port', '0'], { env, stdio: 'ignore' });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));

      const next = await serve([], env);
      await expect.poll(() => next.stdout() + next.stderr()).toMatch(/Saved as CLI profile|holds a token of this server|--save --url/);
      const held = Object.values(profiles(env)).some((profile) => profile.token !== undefined);
      if (/no CLI profile holds a token/.test(next.stderr())) {
        outcomes.told++;
        const command = saveCommand(next) as string;
        expect((await runKb(command.split(' '), { env })).code).toBe(0);
      } else {
        expect(held).toBe(true);
        outcomes.saved++;
      }
      const token = Object.values(profiles(env)).find((profile) => profile.token)?.token as string;
      expect(await works(next.url, token)).toBe(true);
      // Nothing half-built is left in the data dir.
      expect(readdirSync(env.KB_DATA_DIR as string).filter((name) => name.endsWith('.new'))).toEqual([]);
      next.child.kill('SIGKILL');
      await next.exited;
      running.splice(0);
    }
    expect(outcomes.saved + outcomes.told).toBe(cycles);
    console.info(`first start killed at ${cycles} points: ${outcomes.saved} left a saved profile, ${outcomes.told} were told the command`);
  }, 60_000 + cycles * 10_000);
});

describe('kb serve: opening a data dir', () => {
  it('lets several processes create one new data dir at once, then write it at once: all succeed, one database, every token kept', async () => {
    const env = isolatedEnv();
    // First into a data dir that does not exist, then into the one they made: there, each process's -wal check meets
    // logs that others' last connections checkpoint and delete as they close.
    for (const round of [0, 1]) {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => runKb(['serve', 'token', 'create', '--org', `org-${round}-${i}`], { env })),
      );
      for (const result of results) expect(result.code, result.stderr).toBe(0);
    }
    const listed = await runKb(['serve', 'token', 'list', '--json'], { env });
    expect((JSON.parse(listed.stdout) as unknown[]).length).toBe(12);
    expect(readdirSync(env.KB_DATA_DIR as string).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  // Under /proc no directory can be made (ENOENT under a parent that exists): Node's recursive mkdirSync never returns
  // there, and kb hung, deaf even to SIGTERM. Linux only, as /proc is.
  it.skipIf(!existsSync('/proc/self'))('refuses at once a data dir or a config dir that cannot be made (under /proc), and still serves without the profile', async () => {
    const env = isolatedEnv();
    const data = await runKb(['serve', '--port', '0'], { env: { ...env, KB_DATA_DIR: '/proc/kb-no-such-dir/data' }, timeoutMs: 20_000 });
    expect(data.code, data.stderr).toBe(1);
    expect(data.stderr).toContain('cannot create data dir /proc/kb-no-such-dir/data');
    // A config dir that cannot be made costs the profile, not the server: the token is shown with how to save it.
    const server = await serve([], { ...env, KB_CONFIG_DIR: '/proc/kb-no-such-dir/config' });
    expect(server.stderr()).toMatch(/could not save the token as a CLI profile: cannot save the config in \/proc\/kb-no-such-dir\/config/);
    expect(await works(server.url, firstToken(server) as string)).toBe(true);
  });

  it('refuses a data dir it may not read, naming the path, without a stack trace (run as an unprivileged user)', async () => {
    const env = isolatedEnv();
    expect((await runKb(['serve', 'token', 'create', '--org', 'acme'], { env })).code).toBe(0);
    const dir = env.KB_DATA_DIR as string;
    const before = readFileSync(join(dir, 'kb.db'));
    chmodSync(dir, 0o700);
    // As root, permissions do not bind: the command runs as "nobody" instead. Otherwise the directory is closed.
    const asRoot = process.getuid?.() === 0;
    if (!asRoot) chmodSync(dir, 0o000);
    try {
      const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [KB_BIN, 'serve', 'token', 'list'], {
          env: { ...env, HOME: '/tmp' },
          ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('close', (code) => resolve({ code, stderr }));
      });
      expect(result.code).toBe(1);
      // The data dir, or kb.db in it: whichever the user was first refused.
      expect(result.stderr).toMatch(/^Error: cannot (use|create data dir|open) /m);
      expect(result.stderr).toContain(dir);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    } finally {
      chmodSync(dir, 0o700);
    }
    expect(readFileSync(join(dir, 'kb.db')).equals(before)).toBe(true);
  });
});

describe('kb serve: its data dir removed while it runs', () => {
  it('puts back the database it holds, says so in its log, and loses no write it acknowledged', async () => {
    const env = isolatedEnv();
    const server = await serve([], env);
    await expect.poll(() => firstToken(server)).toBeDefined();
    const token = firstToken(server) as string;
    const post = (key: string) =>
      fetch(`${server.url}/v1/ns_create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ key }),
      });
    expect((await post('before')).status).toBe(200);
    // The database and its -wal and -shm are the owner's alone, whatever the umask kb serve ran under.
    for (const file of ['kb.db', 'kb.db-wal', 'kb.db-shm']) expect(statSync(join(env.KB_DATA_DIR as string, file)).mode & 0o777, file).toBe(0o600);
    rmSync(env.KB_DATA_DIR as string, { recursive: true });
    expect((await post('after')).status).toBe(200);
    await expect.poll(() => logMessages(server.stderr()).join('\n')).toMatch(/kb\.db was deleted or moved away while kb serve ran: a copy of the database it held/);
    for (const file of ['kb.db', 'kb.db-wal', 'kb.db-shm']) expect(statSync(join(env.KB_DATA_DIR as string, file)).mode & 0o777, file).toBe(0o600);
    server.child.kill('SIGKILL');
    await server.exited;
    running.splice(0);
    const again = await serve([], env);
    const listed = await fetch(`${again.url}/v1/ns_list`, { headers: { authorization: `Bearer ${token}` } });
    expect(await listed.json()).toEqual({ success: true, data: [{ key: 'after', description: null }, { key: 'before', description: null }] });
  });
});

describe('kb serve token revoke', () => {
  it('never echoes what looks like a token, and revokes by the token itself from stdin', async () => {
    const env = isolatedEnv();
    const token = (await runKb(['serve', 'token', 'create', '--org', 'acme'], { env })).stdout.trim();
    const refused = await runKb(['serve', 'token', 'revoke', token], { env });
    expect(refused.code).toBe(2);
    expect(refused.stdout + refused.stderr).not.toContain(token.slice(4, 20));
    expect(refused.stderr).toMatch(/neither a token id .* nor a token name/);

    const server = await serve([], env);
    expect(await works(server.url, token)).toBe(true);
    const revoked = await runKb(['serve', 'token', 'revoke', '-'], { env, input: `${token}\n` });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout + revoked.stderr).not.toContain(token.slice(4, 20));
    expect(await works(server.url, token)).toBe(false);
    const again = await runKb(['serve', 'token', 'revoke', '-'], { env, input: token });
    expect(again.code).toBe(3);
  });
});

describe('kb serve backup', () => {
  it('copies a running server under concurrent writes; the copy serves every write acknowledged before it began', async () => {
    const env = isolatedEnv();
    const token = (await runKb(['serve', 'token', 'create', '--org', 'acme'], { env })).stdout.trim();
    const server = await serve([], env);
    const acked: string[] = [];
    let writing = true;
    let n = 0;
    // Half the writes carry an Idempotency-Key, as the CLI's do; a write counts once its 200 is read.
    const create = async (key: string, keyed: boolean): Promise<boolean> => {
      if (!keyed) return acknowledged(server.url, token, 'POST', '/ns_create', { key });
      const response = await fetch(`${server.url}/v1/ns_create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `k-${key}` },
        body: JSON.stringify({ key }),
      });
      return response.status === 200;
    };
    const writer = async (lane: number) => {
      while (writing) {
        const key = `w${lane}-${n++}`;
        if (await create(key, n % 2 === 0).catch(() => false)) acked.push(key);
      }
    };
    const writers = Array.from({ length: 4 }, (_, lane) => writer(lane));
    await expect.poll(() => acked.length, { timeout: 30_000 }).toBeGreaterThan(200);
    const before = [...acked];
    const dest = join(env.KB_CONFIG_DIR as string, '..', `${Date.now()}-backup`);
    const backup = await runKb(['serve', 'backup', dest], { env });
    writing = false;
    await Promise.all(writers);
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stderr).toContain(`kb serve --data-dir ${dest}`);

    const restored = await serve(['--data-dir', dest], env);
    const listed = (await (await fetch(`${restored.url}/v1/ns_list`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      data: Array<{ key: string }>;
    };
    const keys = new Set(listed.data.map((ns) => ns.key));
    expect(before.filter((key) => !keys.has(key))).toEqual([]);

    const twice = await runKb(['serve', 'backup', dest], { env });
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain(`${dest} already holds ${join(dest, 'kb.db')}`);
    expect(twice.stderr).toMatch(/a backup never replaces a database/);
  }, 120_000);

  it('points PostgreSQL users to pg_dump', async () => {
    const result = await runKb(['serve', 'backup', '/tmp/nowhere', '--database', 'postgres://kb:pw@127.0.0.1:1/kb'], { env: isolatedEnv() });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/pg_dump/);
  });
});

describe('kb serve shutdown', () => {
  /**
   * A request that never finishes by itself, and that the server surely holds: its headers carry a valid token and
   * `Expect: 100-continue`, so the server's "100 Continue" proves it has read and authenticated them; then half a
   * body, and nothing more.
   */
  async function stalledRequest(server: ServeProcess): Promise<void> {
    await expect.poll(() => firstToken(server)).toBeDefined();
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /v1/ns_create HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${firstToken(server)}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n',
    );
    await expect.poll(() => received, { timeout: 10_000 }).toContain('100 Continue');
    socket.write('{"key":');
  }

  it('on SIGTERM, cuts a request that is still unfinished after --shutdown-timeout and exits 0', async () => {
    const server = await serve(['--shutdown-timeout', '1s'], isolatedEnv());
    await stalledRequest(server);
    server.child.kill('SIGTERM');
    const exit = await server.exited;
    expect(exit.code).toBe(0);
    expect(server.stderr()).toMatch(/cut the connections still busy after 1s/);
  });

  it('finishes a request it was serving when it was paused (SIGSTOP) for longer than the request timeout', async () => {
    const env = isolatedEnv();
    const token = (await runKb(['serve', 'token', 'create', '--org', 'paused'], { env })).stdout.trim();
    const server = await serve([], env);
    const create = await halfSentCreate(server.url, token, 'made-across-a-pause');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Longer than the request timeout (10 s): the clock runs on while the process is stopped.
    server.child.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    create.finish();
    server.child.kill('SIGCONT');
    await expect.poll(create.reply, { timeout: 10_000 }).toMatch(/\r\n\r\n\{.*\}$/s);
    expect(create.reply().split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(create.reply()).toContain('"made-across-a-pause"');
    create.close();
  }, 60_000);

  it('answers a request sent on an idle kept-alive connection while it was paused (SIGSTOP) past the keep-alive timeout', async () => {
    const server = await serve([], isolatedEnv());
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    let reply = '';
    let ended: string | undefined;
    socket.on('data', (chunk: Buffer) => (reply += chunk.toString()));
    socket.on('error', (error: NodeJS.ErrnoException) => (ended ??= error.code));
    socket.on('close', () => (ended ??= 'closed'));
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
    await expect.poll(() => reply).toMatch(/\r\n\r\n\{.*\}$/s);
    expect(reply).toMatch(/\r\nkeep-alive: timeout=5\r\n/i);
    reply = '';
    server.child.kill('SIGSTOP');
    // Longer than the keep-alive timeout (5 s): the idle connection's timer is due when the process resumes, before
    // the request below is read.
    await new Promise((resolve) => setTimeout(resolve, 7000));
    socket.write('GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Request-Id: after-the-pause\r\n\r\n');
    server.child.kill('SIGCONT');
    await expect.poll(() => (/\r\n\r\n\{.*\}$/s.test(reply) ? 'answered' : ended), { timeout: 10_000 }).toBeDefined();
    expect(ended).toBeUndefined();
    expect(reply.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(reply).toMatch(/\r\nx-request-id: after-the-pause\r\n/i);
    socket.destroy();
  }, 60_000);

  it('exits at once on a second signal, while a request holds the first shutdown', async () => {
    const server = await serve(['--shutdown-timeout', '120s'], isolatedEnv());
    await stalledRequest(server);
    server.child.kill('SIGTERM');
    await expect.poll(() => server.stderr()).toMatch(/SIGTERM again exits at once/);
    server.child.kill('SIGINT');
    const exit = await server.exited;
    expect(exit.code).toBe(130);
    expect(server.stderr()).toMatch(/SIGINT again, exiting now/);
  });
});

describe('kb serve with nobody reading its output', () => {
  it('keeps serving when its stdout and stderr are closed (`kb serve | head`), and stops cleanly on SIGTERM', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createNetServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const child = spawn(process.execPath, [KB_BIN, 'serve', '--port', String(port), '--log-level', 'info'], {
      env: isolatedEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Both readers go away at once: the first token, "listening" and every log line meet a closed pipe.
    child.stdout.destroy();
    child.stderr.destroy();
    try {
      const url = `http://127.0.0.1:${port}`;
      const status = async () => (await fetch(`${url}/v1/health`).catch(() => undefined))?.status;
      await expect.poll(status, { timeout: 20_000, interval: 100 }).toBe(200);
      for (let i = 0; i < 50; i++) expect(await status()).toBe(200);
      expect(child.exitCode).toBeNull();
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
