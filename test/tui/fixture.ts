import { afterAll, afterEach, beforeAll } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type AppOptions, renderApp, type Screen } from './harness.js';
import { type Proxy, startProxy } from './proxy.js';

export interface TuiFixture {
  /** The test server of the file, started before its first test and closed after its last. */
  readonly server: TestServer;
  /** The app in a fake terminal (see renderApp), unmounted after the test. */
  open(options: AppOptions): Screen;
  /** A proxy in front of the server (see startProxy), closed after the test. */
  proxy(options?: Parameters<typeof startProxy>[1]): Promise<Proxy>;
}

/**
 * What every file of in-process TUI tests sets up: a test server whose first organization is `org` (each test then
 * makes an organization of its own, see orgClient), and the screens and proxies of a test, ended after it.
 */
export function tuiFixture(org: string): TuiFixture {
  let server: TestServer | undefined;
  const screens: Screen[] = [];
  const proxies: Proxy[] = [];
  beforeAll(async () => {
    server = await startTestServer({ org });
  });
  afterEach(async () => {
    for (const screen of screens.splice(0)) screen.unmount();
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  });
  afterAll(async () => {
    await server?.close();
  });
  const fixture: TuiFixture = {
    get server() {
      if (server === undefined) throw new Error('the test server starts in beforeAll: use it in a test or a hook');
      return server;
    },
    open(options) {
      const screen = renderApp(options);
      screens.push(screen);
      return screen;
    },
    async proxy(options) {
      const proxy = await startProxy(fixture.server.url, options);
      proxies.push(proxy);
      return proxy;
    },
  };
  return fixture;
}

/** The rows of a list on screen: "> key ..." for the selection, "  key ..." for the others. */
export function rows(frame: string): string[] {
  return frame.split('\n').filter((line) => /^[> ] [A-Za-z0-9_-]{3,63}( |$)/.test(line));
}

/** The key of the selected row. */
export function selected(frame: string): string | undefined {
  return rows(frame).find((line) => line.startsWith('> '))?.split(/\s+/)[1];
}
