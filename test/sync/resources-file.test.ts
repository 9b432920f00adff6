import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Description, Key } from '../../src/api/schemas.js';
import {
  normalizeResources,
  parseResources,
  ResourcesFileError,
  type Resources,
  serializeResources,
} from '../../src/sync/resources-file.js';

/** The problems a text gives, one `SOURCE:LINE:COL: ...` line each; fails the test when the text parses. */
async function problems(text: string, source = 'kb.yaml'): Promise<string[]> {
  try {
    await parseResources(text, source);
  } catch (error) {
    expect(error).toBeInstanceOf(ResourcesFileError);
    expect((error as ResourcesFileError).exitCode).toBe(2);
    return [...(error as ResourcesFileError).problems];
  }
  throw new Error('expected the file to be rejected');
}

const SAMPLE: Resources = {
  namespaces: [
    {
      key: 'docs',
      description: 'Product documentation',
      bases: [
        { key: 'faq', description: null },
        { key: 'guides', description: 'How-to guides' },
      ],
    },
    { key: 'empty', description: null, bases: [] },
  ],
};

describe('parseResources', () => {
  it('reads the YAML that export writes', async () => {
    const text = [
      'version: 1',
      'namespaces:',
      '  - key: docs',
      '    description: Product documentation',
      '    bases:',
      '      - key: guides',
      '        description: How-to guides',
      '      - key: faq',
      '        description: null',
      '  - key: empty',
      '    description: null',
      '    bases: []',
      '',
    ].join('\n');
    expect(await parseResources(text, 'kb.yaml')).toEqual(SAMPLE);
  });

  it('reads JSON too, and sorts what it reads by key', async () => {
    const text = JSON.stringify({
      version: 1,
      namespaces: [
        { key: 'empty', bases: [] },
        { key: 'docs', description: 'Product documentation', bases: [{ key: 'guides', description: 'How-to guides' }, { key: 'faq' }] },
      ],
    });
    expect(await parseResources(text, 'kb.json')).toEqual(SAMPLE);
  });

  it('takes a missing description as none and missing bases as none', async () => {
    expect(await parseResources('version: 1\nnamespaces:\n  - key: docs\n', 'f')).toEqual({ namespaces: [{ key: 'docs', description: null, bases: [] }] });
  });

  it('keeps keys that YAML would read as other types when they are quoted', async () => {
    const text = 'version: 1\nnamespaces:\n  - key: "null"\n    bases:\n      - key: "123"\n      - key: "true"\n';
    expect((await parseResources(text, 'f')).namespaces[0]).toEqual({
      key: 'null',
      description: null,
      bases: [{ key: '123', description: null }, { key: 'true', description: null }],
    });
  });

  it('names the line, column and path of a key that breaks the rules', async () => {
    const text = 'version: 1\nnamespaces:\n  - key: docs\n    bases:\n      - key: ok-base\n      - key: no\n';
    expect(await problems(text)).toEqual([expect.stringMatching(/^kb\.yaml:6:14: namespaces\[0\]\.bases\[1\]\.key: .*3 to 63/)]);
  });

  it('points at an unknown field itself, and says which fields are allowed', async () => {
    const text = 'version: 1\nnamespaces:\n  - key: docs\n    descripton: typo\n';
    expect(await problems(text)).toEqual([
      'kb.yaml:4:5: namespaces[0]: unknown field descripton (allowed: key, description, bases)',
    ]);
  });

  it('reports a namespace listed twice at the second one', async () => {
    const text = 'version: 1\nnamespaces:\n  - key: docs\n  - key: other\n  - key: docs\n';
    expect(await problems(text)).toEqual(['kb.yaml:5:10: namespaces[2].key: namespace docs is listed twice (first at namespaces[0])']);
  });

  it('reports a base listed twice in one namespace', async () => {
    const text = 'version: 1\nnamespaces:\n  - key: docs\n    bases:\n      - key: faq\n      - key: faq\n';
    expect(await problems(text)).toEqual(['kb.yaml:6:14: namespaces[0].bases[1].key: base faq is listed twice in namespace docs (first at bases[0])']);
  });

  it('allows one base key in two namespaces', async () => {
    const text = 'version: 1\nnamespaces:\n  - key: docs\n    bases: [{key: faq}]\n  - key: help\n    bases: [{key: faq}]\n';
    expect((await parseResources(text, 'f')).namespaces.map((ns) => ns.bases.length)).toEqual([1, 1]);
  });

  it('suggests quoting a key that YAML read as a number', async () => {
    const text = 'version: 1\nnamespaces:\n  - key: 12345\n';
    expect(await problems(text)).toEqual([expect.stringMatching(/^kb\.yaml:3:10: namespaces\[0\]\.key: .*quote it, "12345"/)]);
  });

  it.each([
    ['0x10', 'number'],
    ['1e999', 'number'],
    ['0o17', 'number'],
    ['+12', 'number'],
    ['1.50', 'number'],
    ['True', 'boolean'],
  ])('suggests quoting %s as it is written, not as YAML read it', async (written, type) => {
    const text = `version: 1\nnamespaces:\n  - key: docs\n    description: ${written}\n`;
    const [problem] = await problems(text);
    expect(problem).toContain(`(YAML read ${written} as a ${type}: quote it, "${written}")`);
    // The hint, followed, gives the text as written.
    expect((await parseResources(`version: 1\nnamespaces:\n  - key: docs\n    description: "${written}"\n`, 'f')).namespaces[0]?.description).toBe(written);
  });

  it('names a missing required field at its object', async () => {
    expect(await problems('version: 1\nnamespaces:\n  - description: no key\n')).toEqual(['kb.yaml:3:5: namespaces[0].key: is required']);
    expect(await problems('namespaces: []\n')).toEqual([expect.stringMatching(/^kb\.yaml:1:1: version: is required$/)]);
  });

  it('rejects another version of the format', async () => {
    expect(await problems('version: 2\nnamespaces: []\n')).toEqual([expect.stringMatching(/^kb\.yaml:1:10: version: must be 1/)]);
  });

  it('rejects a description of 1025 code points, and accepts 1024 emoji', async () => {
    const long = 'x'.repeat(1025);
    expect(await problems(`version: 1\nnamespaces:\n  - key: docs\n    description: ${long}\n`)).toEqual([
      expect.stringMatching(/^kb\.yaml:4:18: namespaces\[0\]\.description: .*1 to 1024/),
    ]);
    const emoji = '\u{1F600}'.repeat(1024);
    expect((await parseResources(`version: 1\nnamespaces:\n  - key: docs\n    description: ${emoji}\n`, 'f')).namespaces[0]?.description).toBe(emoji);
  });

  it('reports YAML syntax errors with their line', async () => {
    const [problem] = await problems('version: 1\nnamespaces:\n  - key: docs\n   bad: [\n');
    expect(problem).toMatch(/^kb\.yaml:\d+:\d+: not valid YAML or JSON: /);
    const [json] = await problems('{\n  "version": 1,\n  "namespaces": [\n    {"key": "docs" "bases": []}\n  ]\n}\n', 'kb.json');
    expect(json).toMatch(/^kb\.json:4:\d+: not valid YAML or JSON: /);
  });

  it('reports duplicate mapping keys instead of keeping the last', async () => {
    expect(await problems('version: 1\nversion: 1\nnamespaces: []\n')).toEqual([expect.stringMatching(/^kb\.yaml:2:1: not valid YAML or JSON: Map keys must be unique/)]);
  });

  it('reports an empty file, a file that is a list, and a namespaces that is not a list', async () => {
    expect(await problems('', 'in.yaml')).toEqual(['in.yaml: the file is empty: expected version: 1 and namespaces']);
    expect(await problems('# only a comment\n', 'in.yaml')).toEqual(['in.yaml: the file is empty: expected version: 1 and namespaces']);
    expect(await problems('- a\n- b\n')).toEqual([expect.stringMatching(/^kb\.yaml:1:1: the file: /)]);
    expect(await problems('version: 1\nnamespaces: docs\n')).toEqual(['kb.yaml:2:13: namespaces: must be a list of namespaces']);
  });

  it('reports every problem, the first as the message and the rest in the help', async () => {
    const text = 'version: 1\nnamespaces:\n  - key: a\n  - key: b\n  - key: c\n';
    let error: unknown;
    try {
      await parseResources(text, 'kb.yaml');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ResourcesFileError);
    const { message, help } = error as ResourcesFileError;
    expect(message).toMatch(/^kb\.yaml:3:10: namespaces\[0\]\.key: /);
    expect(help?.split('\n')).toEqual([
      '2 more problems:',
      expect.stringMatching(/^ {2}kb\.yaml:4:10: namespaces\[1\]\.key: /),
      expect.stringMatching(/^ {2}kb\.yaml:5:10: namespaces\[2\]\.key: /),
    ]);
  });

  it('treats __proto__ as an ordinary unknown field, never as the prototype', async () => {
    expect(await problems('version: 1\nnamespaces: []\n__proto__: {polluted: true}\n')).toEqual([
      'kb.yaml:3:1: the file: unknown field __proto__ (allowed: version, namespaces)',
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('serializeResources', () => {
  it('writes YAML with every field, sorted by key whatever the input order', async () => {
    const shuffled: Resources = {
      namespaces: [
        { key: 'empty', description: null, bases: [] },
        { ...(SAMPLE.namespaces[0] as Resources['namespaces'][number]), bases: [...(SAMPLE.namespaces[0]?.bases ?? [])].reverse() },
      ],
    };
    const expected = [
      'version: 1',
      'namespaces:',
      '  - key: docs',
      '    description: Product documentation',
      '    bases:',
      '      - key: faq',
      '        description: null',
      '      - key: guides',
      '        description: How-to guides',
      '  - key: empty',
      '    description: null',
      '    bases: []',
      '',
    ].join('\n');
    expect(await serializeResources(shuffled, 'yaml')).toBe(expected);
    expect(await serializeResources(SAMPLE, 'yaml')).toBe(expected);
  });

  it('writes JSON with two-space indentation and a final newline', async () => {
    const text = await serializeResources(SAMPLE, 'json');
    expect(text.endsWith('}\n')).toBe(true);
    expect(JSON.parse(text)).toEqual({
      version: 1,
      namespaces: [
        { key: 'docs', description: 'Product documentation', bases: [{ key: 'faq', description: null }, { key: 'guides', description: 'How-to guides' }] },
        { key: 'empty', description: null, bases: [] },
      ],
    });
  });

  it('sorts in byte order, as the server does (upper case before lower case, - before _)', async () => {
    const keys = ['beta', 'Zeta', 'a-b', 'a_b', '123'];
    const text = await serializeResources(normalizeResources({ namespaces: keys.map((key) => ({ key })) }), 'json');
    expect((JSON.parse(text) as { namespaces: { key: string }[] }).namespaces.map((ns) => ns.key)).toEqual(['123', 'Zeta', 'a-b', 'a_b', 'beta']);
  });

  it('writes an organization with nothing in it as an empty list', async () => {
    expect(await serializeResources({ namespaces: [] }, 'yaml')).toBe('version: 1\nnamespaces: []\n');
  });

  // Keys and descriptions drawn from the API's own schemas, with the characters most likely to trip YAML up.
  const keyArb = fc.oneof(
    fc.constantFrom('null', 'true', 'false', 'yes', 'off', '123', '0x1F', '1e10', '-_-', '__proto__', 'constructor', '---', '~~~'),
    fc.stringMatching(/^[A-Za-z0-9_-]{3,12}$/),
  ).filter((key) => Key.safeParse(key).success);
  const descriptionArb = fc.oneof(
    fc.constant(null),
    fc.constantFrom('null', '~', ' leading', 'trailing ', 'a: b', '# not a comment', '- dash', '"quoted"', "'single'", 'line\nbreak\n', '\t tab', '\u0000\u0007', '\u2028', '\u{1F600}', '|', '>', '&anchor', '*alias', '!tag', '%', '@', '`', '{}', '[]', '12', 'true'),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
  ).filter((description) => description === null || Description.safeParse(description).success);
  const resourcesArb = fc
    .uniqueArray(
      fc.record({
        key: keyArb,
        description: descriptionArb,
        bases: fc.uniqueArray(fc.record({ key: keyArb, description: descriptionArb }), { selector: (base) => base.key, maxLength: 4 }),
      }),
      { selector: (ns) => ns.key, maxLength: 5 },
    )
    .map((namespaces) => normalizeResources({ namespaces }));

  it('reads back exactly what it wrote, in both formats (property)', async () => {
    await fc.assert(
      fc.asyncProperty(resourcesArb, fc.constantFrom('yaml' as const, 'json' as const), async (resources, format) => {
        const text = await serializeResources(resources, format);
        expect(await parseResources(text, 'f')).toEqual(resources);
        // And writing what was read gives the same bytes: the output is a fixed point.
        expect(await serializeResources(await parseResources(text, 'f'), format)).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('gives the same bytes for the same content in any order (property)', async () => {
    await fc.assert(
      fc.asyncProperty(resourcesArb, async (resources) => {
        const reversed: Resources = {
          namespaces: [...resources.namespaces].reverse().map((ns) => ({ ...ns, bases: [...ns.bases].reverse() })),
        };
        expect(await serializeResources(reversed, 'yaml')).toBe(await serializeResources(resources, 'yaml'));
        expect(await serializeResources(reversed, 'json')).toBe(await serializeResources(resources, 'json'));
      }),
      { numRuns: 100 },
    );
  });
});

describe('serializeResources: a file that is safe to cat', () => {
  // A bidi override (which makes "exe.txt" read backwards), C1 controls (NEL, 8-bit CSI), an escape and a tab.
  const hostile = 'invoice\u202Etxt.exe \u0085 \u009B31m \u001B[2J\tend';
  const resources = { namespaces: [{ key: 'docs', description: hostile, bases: [{ key: 'faq', description: `${hostile}!` }, { key: 'plain', description: 'café 日本' }] }] };

  it.each(['yaml', 'json'] as const)('%s: what would drive or reorder a terminal is written as an escape, and reads back the same', async (format) => {
    const text = await serializeResources(resources, format);
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/);
    expect(text).toContain('\\u202e');
    expect(text).toContain('café 日本');
    expect(await parseResources(text, `kb.${format}`)).toEqual(await parseResources(await serializeResources(await parseResources(text, `kb.${format}`), format), `kb.${format}`));
    expect((await parseResources(text, `kb.${format}`)).namespaces[0]).toMatchObject({ description: hostile, bases: [{ description: `${hostile}!` }, { description: 'café 日本' }] });
  });

  it.each(['yaml', 'json'] as const)('%s: an invisible character is written as an escape (quoted in YAML), an emoji as it is', async (format) => {
    const invisible = { namespaces: [{ key: 'docs', description: 'do\u200Bcs\u2028 👨‍👩‍👧', bases: [{ key: 'faq', description: 'plain' }] }] };
    const text = await serializeResources(invisible, format);
    expect(text).toContain('"do\\u200bcs\\u2028 👨‍👩‍👧"');
    expect(text).not.toMatch(/[\u200B\u2028]/);
    expect((await parseResources(text, `kb.${format}`)).namespaces[0]?.description).toBe('do\u200Bcs\u2028 👨‍👩‍👧');
  });
});
