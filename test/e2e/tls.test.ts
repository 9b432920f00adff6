import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { describeRun, expectFailure, jsonOut, kb, lines, TEST_TIMEOUT_MS } from '../helpers/cli-e2e.js';
import { isolatedEnv, killedAfterEach, logLines, type ServeProcess, startServe } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// kb serve --tls-cert/--tls-key and the CLI's trust in it (docs/contract.md, TLS), through the built bin,
// with a CA and certificates made here by openssl.

const running = killedAfterEach();

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

interface Pki {
  dir: string;
  ca: string;
  /** A certificate the CA signed for `names` (127.0.0.1 and localhost by default), and its key. */
  issue(name: string, names?: string): { cert: string; key: string };
}

/** A CA of the test's own; each certificate it issues has the subject CN=<name>. */
function makePki(): Pki {
  const dir = tempDir('kb-tls-');
  openssl(dir, 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=kb test CA');
  return {
    dir,
    ca: join(dir, 'ca.pem'),
    issue(name, names = 'IP:127.0.0.1,DNS:localhost') {
      writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${names}\n`);
      openssl(dir, 'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
      openssl(dir, 'x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`);
      return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
    },
  };
}

async function serveTls(env: NodeJS.ProcessEnv, pair: { cert: string; key: string }, ...args: string[]): Promise<ServeProcess> {
  const server = await startServe(['--tls-cert', pair.cert, '--tls-key', pair.key, '--log-level', 'info', ...args], env);
  running.push(server);
  return server;
}

/** The SHA-256 fingerprint of the certificate a new connection to the server is shown. */
function servedFingerprint(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.destroy();
    });
    socket.on('error', reject);
  });
}

function fingerprintOf(file: string): string {
  return new X509Certificate(readFileSync(file)).fingerprint256;
}

/** GET /v1/health over HTTPS trusting `ca`, through `agent` (kept-alive connections) or a connection of its own. */
function health(url: string, ca: string, agent: Agent | false): Promise<number> {
  return new Promise((resolve, reject) => {
    const sent = request(`${url}/v1/health`, { ca, agent }, (reply) => {
      reply.resume();
      reply.on('end', () => resolve(reply.statusCode ?? 0));
    });
    sent.on('error', reject);
    sent.end();
  });
}

/** Waits for a line of the server's JSON log that `match` takes; fails if the server exits first. */
async function logLine(server: ServeProcess, match: (msg: string) => boolean): Promise<{ level: string; msg: string }> {
  for (;;) {
    const found = logLines(server.stderr()).find((line) => match(line.msg));
    if (found !== undefined) return found;
    if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`kb serve exited (${server.child.exitCode ?? server.child.signalCode}):\n${server.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('kb serve --tls-cert --tls-key', () => {
  it('serves HTTPS: the listening line, the first-start profile and its URL say https; the profile trusts the certificate, for requests and the change stream', { timeout: TEST_TIMEOUT_MS }, async () => {
    const pki = makePki();
    const pair = pki.issue('kb-first');
    const env = isolatedEnv();
    const server = await serveTls(env, pair);
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(server.stdout()).toContain(`Created the first token, for organization "local" at ${server.url}.`);
    const config = JSON.parse(readFileSync(join(env.KB_CONFIG_DIR as string, 'config.json'), 'utf8')) as { profiles: Record<string, { url: string; ca?: string }> };
    expect(config.profiles.local).toMatchObject({ url: server.url, ca: pair.cert });
    // The profile's CA is the server's own certificate, not its CA: trusted all the same.
    const listed = await kb(['ns', 'list', '--json'], { env });
    expect(jsonOut(expect, listed)).toEqual([]);
    // The change stream goes through the same client and trusts the same CA: kb wait reads the state from it.
    expect((await kb(['ns', 'create', 'docs'], { env })).code).toBe(0);
    const waited = await kb(['wait', 'ns', 'docs', '--timeout', '20s'], { env });
    expect(waited.code, describeRun(waited)).toBe(0);
    // The token travels and is logged nowhere.
    const token = lines(server.stdout())[3]?.trim() as string;
    expect(token).toMatch(/^kbt_/);
    expect(server.stderr()).not.toContain(token);
  });

  it('started again on another port, its first-start profile follows it, https and its CA kept', { timeout: TEST_TIMEOUT_MS }, async () => {
    const pki = makePki();
    const pair = pki.issue('kb-moves');
    const env = isolatedEnv();
    const first = await serveTls(env, pair);
    first.child.kill('SIGTERM');
    await first.exited;
    const again = await serveTls(env, pair);
    expect(again.url).not.toBe(first.url);
    expect(again.stderr()).toContain(`"msg":"CLI profile \\"local\\" holds a token of this server: its URL was ${first.url}, it is now ${again.url}"`);
    const config = JSON.parse(readFileSync(join(env.KB_CONFIG_DIR as string, 'config.json'), 'utf8')) as { profiles: Record<string, { url: string; ca?: string }> };
    expect(config.profiles.local).toMatchObject({ url: again.url, ca: pair.cert });
    expect(jsonOut(expect, await kb(['ns', 'list', '--json'], { env }))).toEqual([]);
  });

  it('the CLI trusts a CA from --cacert or KB_CA_CERT; without one it exits 6 naming the host, the subject and the fix', { timeout: TEST_TIMEOUT_MS }, async () => {
    const pki = makePki();
    // For 127.0.0.1 only: `localhost` reaches the server under a name the certificate does not hold.
    const server = await serveTls(isolatedEnv(), pki.issue('kb-trust', 'IP:127.0.0.1'));
    const token = lines(server.stdout())[3]?.trim() as string;
    // No profile: the URL and token from the environment, and no CA but the system's.
    const env = isolatedEnv({ KB_URL: server.url, KB_TOKEN: token });
    const port = new URL(server.url).port;
    const untrusted = await kb(['ns', 'list'], { env });
    expectFailure(
      expect,
      untrusted,
      6,
      `cannot reach ${server.url}/v1/ns_list: the certificate of 127.0.0.1:${port} (subject CN=kb-trust) is not trusted: unable to verify the first certificate`,
      'If you trust it, give the CA that signed it (or the certificate itself) with --cacert FILE or KB_CA_CERT=FILE; `kb auth login --cacert FILE` saves it in the profile.',
    );
    expect(jsonOut(expect, await kb(['ns', 'list', '--json', '--cacert', pki.ca], { env }))).toEqual([]);
    expect(jsonOut(expect, await kb(['ns', 'list', '--json'], { env: { ...env, KB_CA_CERT: pki.ca } }))).toEqual([]);
    // A name the certificate does not hold is refused even with the CA trusted.
    const otherName = await kb(['health', '--cacert', pki.ca], { env: { ...env, KB_URL: server.url.replace('127.0.0.1', 'localhost') } });
    expect(otherName.code, describeRun(otherName)).toBe(6);
    expect(lines(otherName.stderr)[0]).toMatch(new RegExp(`the certificate of localhost:${port} \\(subject CN=kb-trust\\) does not name localhost: `));
    // A CA file that is not one is refused before anything is sent.
    const notPem = await kb(['ns', 'list', '--cacert', join(pki.dir, 'ca.key')], { env });
    expectFailure(expect, notPem, 2, `the CA file ${join(pki.dir, 'ca.key')} (from --cacert) holds no readable PEM certificate (-----BEGIN CERTIFICATE-----)`, 'Nothing was sent.');
    for (const run of [untrusted, notPem, otherName]) expect(`${run.stdout}${run.stderr}`).not.toContain(token);
  });

  it('a CA given with --cacert adds to those Node trusts by default: NODE_EXTRA_CA_CERTS\'s stay trusted', { timeout: TEST_TIMEOUT_MS }, async () => {
    const nodes = makePki();
    const server = await serveTls(isolatedEnv(), nodes.issue('kb-extra', 'IP:127.0.0.1'));
    const token = lines(server.stdout())[3]?.trim() as string;
    const env = isolatedEnv({ KB_URL: server.url, KB_TOKEN: token, NODE_EXTRA_CA_CERTS: nodes.ca });
    expect(jsonOut(expect, await kb(['ns', 'list', '--json'], { env }))).toEqual([]);
    // A CA of another deployment, given as well (Node 20 replaced the default CAs, extra ones included, with it).
    expect(jsonOut(expect, await kb(['ns', 'list', '--json', '--cacert', makePki().ca], { env }))).toEqual([]);
  });

  it('kb auth login --cacert saves the CA in the profile, which later commands trust', { timeout: TEST_TIMEOUT_MS }, async () => {
    const pki = makePki();
    const server = await serveTls(isolatedEnv(), pki.issue('kb-login'));
    const token = lines(server.stdout())[3]?.trim() as string;
    const env = isolatedEnv();
    const refused = await kb(['auth', 'login', '--url', server.url, '--with-token'], { env, input: token });
    expect(refused.code, describeRun(refused)).toBe(6);
    expect(existsSync(join(env.KB_CONFIG_DIR as string, 'config.json'))).toBe(false);
    const login = await kb(['auth', 'login', '--url', server.url, '--cacert', pki.ca, '--with-token'], { env, input: token });
    expect(login.code, describeRun(login)).toBe(0);
    const config = JSON.parse(readFileSync(join(env.KB_CONFIG_DIR as string, 'config.json'), 'utf8')) as { profiles: Record<string, { ca?: string }> };
    expect(config.profiles.default?.ca).toBe(pki.ca);
    expect(jsonOut(expect, await kb(['ns', 'list', '--json'], { env }))).toEqual([]);
  });

  it('takes one CA: --cacert before KB_CA_CERT before the profile\'s saved CA', { timeout: TEST_TIMEOUT_MS }, async () => {
    const pki = makePki();
    const other = makePki().ca;
    const server = await serveTls(isolatedEnv(), pki.issue('kb-order', 'IP:127.0.0.1'));
    const token = lines(server.stdout())[3]?.trim() as string;
    const env = isolatedEnv();
    const login = await kb(['auth', 'login', '--url', server.url, '--cacert', pki.ca, '--with-token'], { env, input: token });
    expect(login.code, describeRun(login)).toBe(0);
    const list = (extra: Record<string, string>, ...args: string[]) => kb(['ns', 'list', '--json', ...args], { env: { ...env, ...extra } });

    // The profile's CA, alone: trusted.
    expect(jsonOut(expect, await list({}))).toEqual([]);
    // KB_CA_CERT is used instead of the profile's (not beside it), and --cacert instead of KB_CA_CERT.
    const envOverProfile = await list({ KB_CA_CERT: other });
    expect(envOverProfile.code, describeRun(envOverProfile)).toBe(6);
    expect(jsonOut(expect, await list({ KB_CA_CERT: other }, '--cacert', pki.ca))).toEqual([]);
    const flagOverEnv = await list({ KB_CA_CERT: pki.ca }, '--cacert', other);
    expect(flagOverEnv.code, describeRun(flagOverEnv)).toBe(6);
    // And the other way round: a profile whose CA does not sign the certificate, saved over by KB_CA_CERT.
    const file = join(env.KB_CONFIG_DIR as string, 'config.json');
    const config = JSON.parse(readFileSync(file, 'utf8')) as { profiles: Record<string, { ca?: string }> };
    expect(config.profiles.default?.ca).toBe(pki.ca);
    (config.profiles.default as { ca?: string }).ca = other;
    writeFileSync(file, JSON.stringify(config));
    const profileAlone = await list({});
    expect(profileAlone.code, describeRun(profileAlone)).toBe(6);
    expect(jsonOut(expect, await list({ KB_CA_CERT: pki.ca }))).toEqual([]);
    for (const run of [envOverProfile, flagOverEnv, profileAlone]) {
      expect(run.stderr).toContain('(subject CN=kb-order) is not trusted');
      expect(`${run.stdout}${run.stderr}`).not.toContain(token);
    }
  });

  it('kb serve token create --save --cacert saves the CA in the profile, which later commands trust; a --cacert that is not there creates nothing', { timeout: TEST_TIMEOUT_MS }, async () => {
    const pki = makePki();
    const serverEnv = isolatedEnv();
    const server = await serveTls(serverEnv, pki.issue('kb-save'));
    const env: NodeJS.ProcessEnv = { ...isolatedEnv(), KB_DATA_DIR: serverEnv.KB_DATA_DIR };
    const missing = await kb(['serve', 'token', 'create', '--org', 'local', '--save', '--url', server.url, '--cacert', join(pki.dir, 'nope.pem')], { env });
    expectFailure(expect, missing, 2, `--cacert ${join(pki.dir, 'nope.pem')}: no such file. Nothing was created.`);
    const saved = await kb(['serve', 'token', 'create', '--org', 'local', '--save', '--url', server.url, '--cacert', pki.ca], { env });
    expect(saved.code, describeRun(saved)).toBe(0);
    const config = JSON.parse(readFileSync(join(env.KB_CONFIG_DIR as string, 'config.json'), 'utf8')) as { profiles: Record<string, { ca?: string; url?: string }> };
    expect(config.profiles.local).toMatchObject({ url: server.url, ca: pki.ca });
    expect(jsonOut(expect, await kb(['ns', 'list', '--json'], { env }))).toEqual([]);
    // The first start's token and the saved one: the refused command made none.
    expect(jsonOut(expect, await kb(['serve', 'token', 'list', '--json'], { env }))).toHaveLength(2);
  });

  it('answers plain HTTP on the TLS port with a 400 saying to use https, logged and counted as a request; the admin port stays plain', { timeout: TEST_TIMEOUT_MS }, async () => {
    const pki = makePki();
    const server = await serveTls(isolatedEnv(), pki.issue('kb-plain'), '--admin-port', '0');
    const admin = /admin port: (http:\/\/\S+)\/live/.exec(server.stderr())?.[1] as string;
    expect(admin, server.stderr()).toBeDefined();
    const plain = server.url.replace('https:', 'http:');
    const reply = await fetch(`${plain}/v1/health`);
    expect(reply.status).toBe(400);
    const host = new URL(server.url).host;
    expect(await reply.json()).toEqual({ success: false, message: 'This port speaks HTTPS, not plain HTTP', help: `Send the request to https://${host}/v1/health.` });
    const logged = await logLine(server, (msg) => msg === 'request');
    expect(logged).toMatchObject({ method: 'GET', path: '/v1/health', status: 400 });
    // The CLI pointed at http:// says the same, exit 2.
    const cli = await kb(['health'], { env: isolatedEnv({ KB_URL: plain }) });
    expectFailure(expect, cli, 2, 'This port speaks HTTPS, not plain HTTP', `Send the request to https://${host}/v1/health.`);
    expect(await health(server.url, readFileSync(pki.ca, 'utf8'), false)).toBe(200);
    const metrics = await (await fetch(`${admin}/metrics`)).text();
    expect(metrics).toMatch(/^kb_http_requests_total\{[^}]*method="GET"[^}]*status="400"\} 2$/m);
    expect(metrics).toMatch(/^kb_http_requests_total\{route="health",method="GET",status="200"\} 1$/m);
    // Each on the request log, the HTTPS one as the plain ones.
    const requests = () => logLines(server.stderr()).filter((line) => line.msg === 'request');
    await logLine(server, () => requests().length >= 3);
    expect(requests().map((line) => [line.path, line.status])).toEqual([['/v1/health', 400], ['/v1/health', 400], ['/v1/health', 200]]);
  });

  it('SIGHUP serves the new pair from the next handshake while requests run, none failing; a bad pair keeps the old and logs why', { timeout: TEST_TIMEOUT_MS }, async () => {
    const pki = makePki();
    const first = pki.issue('kb-one');
    const second = pki.issue('kb-two');
    // The server reads the pair from these paths; the test replaces their contents, as a renewal does.
    const live = { cert: join(pki.dir, 'live.pem'), key: join(pki.dir, 'live.key') };
    copyFileSync(first.cert, live.cert);
    copyFileSync(first.key, live.key);
    const server = await serveTls(isolatedEnv(), live);
    expect(await servedFingerprint(server.url)).toBe(fingerprintOf(first.cert));

    const ca = readFileSync(pki.ca, 'utf8');
    const kept = new Agent({ keepAlive: true, maxSockets: 2 });
    const statuses: number[] = [];
    let reloaded = false;
    let afterReload = 0;
    // Requests on kept-alive connections and on new ones, until 40 have been answered after the reload was logged.
    const load = async () => {
      for (let i = 0; afterReload < 40; i++) {
        statuses.push(await health(server.url, ca, i % 2 === 0 ? kept : false));
        if (reloaded) afterReload++;
      }
    };
    const loading = Promise.all([load(), load(), load()]);
    while (statuses.length < 20) await new Promise((resolve) => setTimeout(resolve, 10));
    // Replaced whole (written beside, renamed over), as certbot and the like do.
    copyFileSync(second.cert, `${live.cert}.new`);
    copyFileSync(second.key, `${live.key}.new`);
    renameSync(`${live.cert}.new`, live.cert);
    renameSync(`${live.key}.new`, live.key);
    server.child.kill('SIGHUP');
    const line = await logLine(server, (msg) => msg.startsWith('SIGHUP'));
    reloaded = true;
    expect(line).toMatchObject({ level: 'info', msg: expect.stringContaining('SIGHUP: serving the TLS certificate CN=kb-two') });
    await loading;
    kept.destroy();
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(await servedFingerprint(server.url)).toBe(fingerprintOf(second.cert));

    // A key that is not the certificate's: the pair in use stays, and the log says why.
    copyFileSync(first.key, live.key);
    server.child.kill('SIGHUP');
    const refused = await logLine(server, (msg) => msg.startsWith('SIGHUP: kept'));
    expect(refused).toMatchObject({ level: 'warn', msg: `SIGHUP: kept the TLS certificate in use: the TLS key ${live.key} does not match the certificate ${live.cert}` });
    expect(await servedFingerprint(server.url)).toBe(fingerprintOf(second.cert));
    expect(await health(server.url, ca, false)).toBe(200);
    // SIGTERM over TLS as over plain HTTP: the requests finish, then a clean exit.
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(logLines(server.stderr()).at(-1)?.msg).toBe('stopped');
  });

  it('without --tls-cert, SIGHUP (a `systemctl reload`) is logged and ignored: the server keeps serving, and SIGTERM still stops it', { timeout: TEST_TIMEOUT_MS }, async () => {
    const server = await startServe(['--log-level', 'info'], isolatedEnv());
    running.push(server);
    server.child.kill('SIGHUP');
    expect(await logLine(server, (msg) => msg.startsWith('SIGHUP'))).toMatchObject({ level: 'info', msg: 'SIGHUP: nothing to reload without --tls-cert' });
    expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it('refuses at start, exit 2 and creating nothing, a key that is not the certificate\'s, a file it cannot read, or one flag without the other', { timeout: TEST_TIMEOUT_MS }, async () => {
    const pki = makePki();
    const one = pki.issue('kb-a');
    const other = pki.issue('kb-b');
    const env = isolatedEnv();
    const wrongKey = await kb(['serve', '--port', '0', '--tls-cert', one.cert, '--tls-key', other.key], { env });
    expectFailure(expect, wrongKey, 2, `the TLS key ${other.key} does not match the certificate ${one.cert}`, 'Nothing was started. Give a readable PEM certificate and its own key.');
    const missing = join(pki.dir, 'missing.pem');
    const unreadable = await kb(['serve', '--port', '0', '--tls-cert', missing, '--tls-key', one.key], { env });
    expectFailure(expect, unreadable, 2, `cannot read the TLS certificate ${missing}: no such file`, 'Nothing was started. Give a readable PEM certificate and its own key.');
    const notACert = await kb(['serve', '--port', '0', '--tls-cert', one.key, '--tls-key', one.key], { env });
    expectFailure(expect, notACert, 2, `the TLS certificate ${one.key} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`, 'Nothing was started. Give a readable PEM certificate and its own key.');
    const alone = await kb(['serve', '--port', '0', '--tls-cert', one.cert], { env });
    expect(alone.code, describeRun(alone)).toBe(2);
    expect(alone.stderr).toContain('--tls-key');
    expect(readdirSync(env.KB_DATA_DIR as string)).toEqual([]);
    expect(readdirSync(env.KB_CONFIG_DIR as string)).toEqual([]);
  });
});
