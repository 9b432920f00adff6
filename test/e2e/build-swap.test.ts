import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, ROOT, runKb } from '../helpers/cli.js';
import { startTestServer } from '../helpers/server.js';

/** What a build leaves beside dist/ while it runs (scripts/build.mjs): nothing of it may outlive the build. */
const BUILD_LEFTOVERS = /^(dist\.(new|old)|\.build)-/;

describe('npm run build while kb runs', () => {
  it('swaps the new build in whole: kb --version and kb ns list --json never fail while it builds twice, and the manifest is always there', async () => {
    const server = await startTestServer();
    try {
      const env = isolatedEnv({ KB_URL: server.url, KB_TOKEN: server.token });
      const created = await runKb(['ns', 'create', 'swap-check'], { env });
      expect(created.code, created.stderr).toBe(0);

      let building = true;
      const failures: string[] = [];
      let runs = 0;
      const loop = async (): Promise<void> => {
        while (building) {
          for (const args of [['--version'], ['ns', 'list', '--json']]) {
            const run = await runKb(args, { env, timeoutMs: 60_000 });
            runs++;
            if (run.code !== 0) failures.push(`kb ${args.join(' ')}: exit ${run.code}: ${run.stderr.trim().split('\n')[0] ?? ''}`);
            else if (args[0] === 'ns' && !run.stdout.includes('"swap-check"')) failures.push(`kb ns list --json printed ${run.stdout}`);
          }
        }
      };
      // The manifest a kb reads at its start is there all along: without it oclif would look for every command. So is
      // dist/, which the build exchanges with the new one in one step. A look every 2 ms catches a dist/ missing for
      // longer; the instant between two renames it rarely sees, and a kb that loaded a file in it failed (CI, 2026-11-30).
      let [manifestGone, distGone] = [0, 0];
      const watch = setInterval(() => {
        if (!existsSync(join(ROOT, 'oclif.manifest.json'))) manifestGone++;
        if (!existsSync(join(ROOT, 'dist/cli/run.js'))) distGone++;
      }, 2);
      const loops = [loop(), loop()];
      try {
        for (let i = 0; i < 2; i++) await promisify(execFile)('npm', ['run', 'build', '--silent'], { cwd: ROOT, timeout: 180_000 });
      } finally {
        building = false;
        clearInterval(watch);
        await Promise.all(loops);
      }
      expect(failures).toEqual([]);
      expect(manifestGone).toBe(0);
      expect(distGone).toBe(0);
      // The loops ran while the builds did (each run is a whole kb process).
      expect(runs).toBeGreaterThan(4);
      expect(readdirSync(ROOT).filter((name) => BUILD_LEFTOVERS.test(name))).toEqual([]);
    } finally {
      await server.close();
    }
  }, 400_000);
});
