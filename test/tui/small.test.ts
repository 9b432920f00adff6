import { describe, expect, it } from 'vitest';
import stringWidth from '../../node_modules/ink/node_modules/string-width/index.js';
import { tuiFixture } from './fixture.js';
import { KEY, orgClient } from './harness.js';

const tui = tuiFixture('tui-small');
const { open } = tui;

const LONG_ORG = 'small-org-with-a-rather-long-name';
const DEPLOYMENT = { profile: 'staging-profile', url: 'https://kb.example.com:8443/some/path' };

function fitsIn(frame: string, columns: number, rows: number): void {
  const lines = frame.split('\n');
  expect(lines.length).toBeLessThanOrEqual(rows);
  for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(columns);
}

describe('kb tui on small terminals', () => {
  it("keeps a base's key row at 60x20 and cuts a long description with …", async () => {
    const { client } = await orgClient(tui.server, 'small-base');
    await client.nsCreate({ key: 'docs' });
    const words = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ').slice(0, 1024);
    await client.baseCreate({ namespace: 'docs', key: 'base-01', description: words });
    const screen = open({ client, organization: 'small-base', columns: 60, rows: 20 });
    await screen.waitFor('docs');
    await screen.press(KEY.enter);
    await screen.waitFor('base-01');
    await screen.press(KEY.enter);
    const frame = await screen.waitFor('base base-01');
    fitsIn(frame, 60, 20);
    const lines = frame.split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^namespace {5}docs$/));
    expect(lines).toContainEqual(expect.stringMatching(/^key {11}base-01$/));
    const description = lines.filter((line) => /^(description {3}| {14})\S/.test(line) && !line.startsWith('key'));
    expect(description[0]).toMatch(/^description {3}word0 word1 /);
    expect(description.at(-1)).toMatch(/…$/);
    // Nothing of the description starts a line with a space.
    for (const line of description.slice(1)) expect(line).toMatch(/^ {14}\S/);
    expect(lines.at(-1)).toContain('? help');
  });

  for (const [columns, rows] of [
    [60, 14],
    [40, 10],
  ] as const) {
    it(`draws the new-namespace form at ${columns}x${rows} with every field on a line of its own, nothing over another`, async () => {
      const { client } = await orgClient(tui.server, `small-form-${columns}`);
      const screen = open({ client, organization: 'small', columns, rows });
      await screen.waitFor('No namespaces yet');
      await screen.press('n');
      await screen.type('ab');
      let frame = await screen.waitFor('invalid:');
      const check = (current: string) => {
        fitsIn(current, columns, rows);
        const lines = current.split('\n');
        const key = lines.findIndex((line) => /^[> ] key {9}\[/.test(line));
        const description = lines.findIndex((line) => /^[> ] description \[/.test(line));
        expect(key, current).toBeGreaterThan(0);
        expect(description, current).toBeGreaterThan(key);
        // The field rows hold their field alone, from [ to ].
        expect(lines[key]).toMatch(/\]$/);
        expect(lines[description]).toMatch(/\]$/);
        // A note under a field starts at its column, never with a space.
        for (const line of lines.slice(key + 1, description)) expect(line, current).toMatch(/^ {14}\S/);
      };
      check(frame);
      expect(frame.split('\n').at(-1)).toContain('esc cancel');
      await screen.press(KEY.tab);
      await screen.type('Words');
      frame = await screen.waitFor((f) => f.includes('Words'));
      check(frame);
    });
  }

  it('cuts the URL and the profile of the top line before the organization', async () => {
    const { client } = await orgClient(tui.server, 'small-header');
    const screen = open({ client, organization: LONG_ORG, deployment: DEPLOYMENT, columns: 60, rows: 14 });
    const frame = await screen.waitFor('No namespaces yet');
    const top = frame.split('\n')[0] ?? '';
    expect(stringWidth(top)).toBeLessThanOrEqual(60);
    expect(top).toMatch(new RegExp(`^kb {2}profile \\S+ {2}url \\S+ {2}org ${LONG_ORG}$`));
    screen.resize(120, 14);
    const wide = await screen.waitFor((f) => f.includes('url https://'));
    expect(wide.split('\n')[0]).toBe(`kb  profile staging-profile  url https://kb.example.com:8443/some/path  org ${LONG_ORG}`);
  });
});
