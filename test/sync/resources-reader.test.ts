import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import YAML, { isMap, isScalar, LineCounter, Scalar, type Node as YamlNode } from 'yaml';
import { pathId, readResourcesText } from '../../src/sync/resources-reader.js';
import {
  normalizeResources,
  parseResources,
  plainlyValid,
  ResourcesFileError,
  type Resources,
  serializeResources,
} from '../../src/sync/resources-file.js';
import { ResourcesFileSchema } from '../../src/sync/resources-check.js';
import { escapeJsonControls, hasJsonUnsafe } from '../../src/text/controls.js';

/** kb's YAML file as the `yaml` package writes the whole document: what serializeResources must give, byte for byte. */
function referenceYaml(resources: Resources): string {
  const safe = (description: string | null) => {
    if (description === null || !hasJsonUnsafe(description)) return description;
    const scalar = new Scalar(description);
    scalar.type = Scalar.QUOTE_DOUBLE;
    return scalar;
  };
  const { namespaces } = normalizeResources(resources);
  const document = {
    version: 1,
    namespaces: namespaces.map((ns) => ({
      key: ns.key,
      description: safe(ns.description),
      bases: ns.bases.map((base) => ({ key: base.key, description: safe(base.description) })),
    })),
  };
  return escapeJsonControls(YAML.stringify(document, { lineWidth: 0, aliasDuplicateObjects: false }));
}

/** Every node of a document by path id, with where the `yaml` package says it starts, and every key's place. */
function referencePlaces(text: string): { nodes: Map<string, number>; keys: Map<string, number> } {
  const doc = YAML.parseDocument(text, { lineCounter: new LineCounter(), uniqueKeys: true });
  const nodes = new Map<string, number>();
  const keys = new Map<string, number>();
  const walk = (node: unknown, path: PropertyKey[]) => {
    if (node === null || typeof node !== 'object' || !('range' in node)) return;
    const { range } = node as YamlNode;
    if (range) nodes.set(pathId(path), range[0]);
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isScalar(pair.key)) continue;
        const child = [...path, String(pair.key.value)];
        if (pair.key.range) keys.set(pathId(child), pair.key.range[0]);
        walk(pair.value, child);
      }
    } else if ('items' in node && Array.isArray((node as { items: unknown }).items)) {
      (node as { items: unknown[] }).items.forEach((item, index) => walk(item, [...path, index]));
    }
  };
  walk(doc.contents, []);
  return { nodes, keys };
}

/** The paths of every node of a plain value. */
function pathsOf(value: unknown, path: PropertyKey[] = []): PropertyKey[][] {
  const paths = [path];
  if (Array.isArray(value)) value.forEach((item, index) => paths.push(...pathsOf(item, [...path, index])));
  else if (value !== null && typeof value === 'object') for (const [key, item] of Object.entries(value)) paths.push(...pathsOf(item, [...path, key]));
  return paths;
}

/**
 * The fast reader gives what the `yaml` package gives, or nothing: the same value, and the same places for every
 * node and key.
 */
function expectSameAsYaml(text: string): boolean {
  const fast = readResourcesText(text);
  if (fast === undefined) return false;
  const reference = YAML.parseDocument(text, { uniqueKeys: true });
  expect(reference.errors).toEqual([]);
  expect(fast.value).toEqual(reference.toJS());
  const paths = pathsOf(fast.value);
  const places = fast.locate(paths);
  const expected = referencePlaces(text);
  for (const path of paths) {
    const id = pathId(path);
    expect({ id, at: places.nodes.get(id)?.start }).toEqual({ id, at: expected.nodes.get(id) });
    if (path.length > 0 && typeof path[path.length - 1] === 'string') expect({ id, key: places.keys.get(id) }).toEqual({ id, key: expected.keys.get(id) });
  }
  return true;
}

const keyArb = fc.oneof(fc.constantFrom('null', 'true', '123', '0x1F', '1e10', '-_-', '---', '~~~', 'docs'), fc.stringMatching(/^[A-Za-z0-9_-]{3,12}$/));
const descriptionArb = fc.oneof(
  fc.constant(null),
  fc.constantFrom('null', '~', ' leading', 'trailing ', 'a: b', 'a:b', '# not', 'a #b', 'a#b', '- dash', '-dash', '?q', ':c', '"quoted"', "'single'", "it's", 'line\nbreak', '\t tab', '\u0007', '\u0085', '\u2028', '\u202E', '\u{1F600}', '|', '>', '&a', '*a', '!t', '%', '@', '`', '{}', '[]', '[a]', '12', '1.5', '.inf', 'true', 'Yes', '0o17', '---x', '...', 'x...'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }),
);
const resourcesArb = fc
  .array(
    fc.record({
      key: keyArb,
      description: descriptionArb,
      bases: fc.array(fc.record({ key: keyArb, description: descriptionArb }), { maxLength: 3 }),
    }),
    { maxLength: 4 },
  )
  .map((namespaces) => normalizeResources({ namespaces }));

describe('serializeResources writes YAML as the yaml package does', () => {
  it('byte for byte, for any keys and descriptions (property)', async () => {
    await fc.assert(
      fc.asyncProperty(resourcesArb, async (resources) => {
        expect(await serializeResources(resources, 'yaml')).toBe(referenceYaml(resources));
      }),
      { numRuns: 500 },
    );
  });
});

describe('the fast reader', () => {
  it('reads what export writes, giving the yaml package\'s values and places, in YAML and JSON (property)', async () => {
    await fc.assert(
      fc.asyncProperty(resourcesArb, async (resources) => {
        expectSameAsYaml(await serializeResources(resources, 'yaml'));
        expectSameAsYaml(await serializeResources(resources, 'json'));
      }),
      { numRuns: 300 },
    );
  });

  it('reads an export of ordinary keys and descriptions itself, in both formats', async () => {
    const resources = normalizeResources({
      namespaces: [
        { key: 'docs', description: 'Product documentation, v2 (draft): see https://x.test/a#b', bases: [{ key: 'faq', description: "It's -1 and 100%" }] },
        { key: 'empty', description: null, bases: [] },
        { key: 'emoji', description: 'café 日本 \u{1F600}', bases: [{ key: 'n-1', description: null }] },
      ],
    });
    for (const format of ['yaml', 'json'] as const) expect(expectSameAsYaml(await serializeResources(resources, format))).toBe(true);
  });

  it('reads the same file written in other block styles, or leaves it to the yaml package (property)', () => {
    const styles = fc.record({
      indent: fc.constantFrom(2, 3, 4),
      indentSeq: fc.boolean(),
      comments: fc.boolean(),
      singleQuote: fc.constantFrom(null, true, false),
      nullStr: fc.constantFrom('null', '~', ''),
      defaultStringType: fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE') as fc.Arbitrary<Scalar.Type>,
    });
    let read = 0;
    fc.assert(
      fc.property(resourcesArb, styles, (resources, style) => {
        const { comments, ...options } = style;
        const doc = new YAML.Document({ version: 1, namespaces: resources.namespaces });
        if (comments) {
          doc.commentBefore = ' kb resources';
          const list = doc.get('namespaces', true);
          if (isMap(list) || (list && typeof list === 'object' && 'items' in list)) (list as { comment?: string }).comment = ' the end';
        }
        const text = doc.toString({ ...options, lineWidth: 0 });
        if (expectSameAsYaml(text)) read++;
      }),
      { numRuns: 400 },
    );
    // Many of them are read by the fast reader, not handed on (quoted keys and odd descriptions are handed on).
    expect(read).toBeGreaterThan(40);
  });

  it('reads a file with random edits as the yaml package does, or leaves it to it (property)', async () => {
    const base = await serializeResources(
      normalizeResources({
        namespaces: [
          { key: 'docs', description: 'Product docs', bases: [{ key: 'faq', description: null }, { key: 'guides', description: "it's" }] },
          { key: 'empty', description: 'true', bases: [] },
        ],
      }),
      'yaml',
    );
    const edit = fc.record({ at: fc.nat(), remove: fc.nat({ max: 3 }), insert: fc.constantFrom('', ' ', '  ', ':', ': ', '-', '- ', '#', ' #', '"', "'", '\n', '\n  ', 'a', '[', ']', '{}', '[]', '|', '>', '&a ', '*a', '!', '?', '1', '~', 'null') });
    let read = 0;
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 3 }), (edits) => {
        let text = base;
        for (const { at, remove, insert } of edits) {
          const where = at % (text.length + 1);
          text = text.slice(0, where) + insert + text.slice(where + remove);
        }
        const fast = readResourcesText(text);
        if (fast === undefined) return;
        read++;
        const reference = YAML.parseDocument(text, { uniqueKeys: true });
        expect({ text, errors: reference.errors.map((error) => error.message) }).toEqual({ text, errors: [] });
        expect({ text, value: fast.value }).toEqual({ text, value: reference.toJS() });
      }),
      { numRuns: 3000 },
    );
    expect(read).toBeGreaterThan(100);
  });

  it.each([
    ['a plain scalar that goes on, on the next line', 'version: 1\nnamespaces:\n  - key: docs\n    description: two\n      lines\n'],
    ['a plain scalar that goes on after a blank line', 'version: 1\nnamespaces:\n  - key: docs\n    description: two\n\n      lines\n'],
    ['a list at the indentation of its key', 'version: 1\nnamespaces:\n- key: docs\n  bases:\n  - key: faq\n'],
    ['an empty value, an empty item and trailing comments', 'version: 1 # v\nnamespaces: # n\n  - key: docs   # k\n    description:\n    bases:\n  -\n'],
    ['a comment line in a list', 'version: 1\nnamespaces:\n  # first\n  - key: docs\n    # its description\n    description: "x # y"\n'],
    ['quotes with escapes', 'version: 1\nnamespaces:\n  - key: \'it\'\'s\'\n    description: "tab\\there \\u00e9 \\ud83d\\ude00 \\/"\n'],
    ['YAML-only escapes', 'version: 1\nnamespaces:\n  - key: docs\n    description: "\\e\\x41\\N"\n'],
    ['a multi-line quoted scalar', 'version: 1\nnamespaces:\n  - key: docs\n    description: "two\n      lines"\n'],
    ['a block scalar', 'version: 1\nnamespaces:\n  - key: docs\n    description: |\n      two\n      lines\n'],
    ['anchors and aliases', 'version: 1\nnamespaces:\n  - &a\n    key: docs\n  - *a\n'],
    ['a tag', 'version: 1\nnamespaces:\n  - key: !!str 123\n'],
    ['flow collections', 'version: 1\nnamespaces: [{key: docs, bases: [{key: faq}]}]\n'],
    ['a document marker', '---\nversion: 1\nnamespaces: []\n...\n'],
    ['a key that is a number', 'version: 1\n123: x\nnamespaces: []\n'],
    ['a quoted key', '"version": 1\nnamespaces: []\n'],
    ['numbers, booleans and nulls', 'version: 1\nnamespaces:\n  - key: 0x1F\n    description: .NaN\n  - key: -12\n    description: ~\n  - key: True\n    description: 1e3\n  - key: 0o17\n    description: +.5\n'],
    ['CRLF line ends', 'version: 1\r\nnamespaces: []\r\n'],
    ['a tab', 'version: 1\nnamespaces:\n  - key: docs\n    description: a\tb\n'],
    ['a key given twice', 'version: 1\nversion: 1\nnamespaces: []\n'],
    ['JSON with a key given twice', '{"version": 1, "namespaces": [{"key": "a", "key": "b"}]}'],
    ['JSON with escapes and spaces', '{ "version" : 1 ,\n "namespaces" : [ { "key" : "d\\u006fcs" , "description" : "a\\"b\\\\" , "bases" : [ ] } ] }'],
    ['JSON nested deeper than the stack', `{"version": 1, "namespaces": [], "deep": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`],
    ['a mis-indented key', 'version: 1\nnamespaces:\n  - key: docs\n   description: x\n'],
    ['a key after a list item\'s map', 'version: 1\nnamespaces:\n  - key: docs\n  other: x\n'],
  ])('gives what the yaml package gives, or nothing: %s', (_name, text) => {
    const fast = readResourcesText(text);
    if (fast === undefined) {
      expect(fast).toBeUndefined();
      return;
    }
    expect(expectSameAsYaml(text)).toBe(true);
  });
});

describe('the check without zod', () => {
  const anything = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer(), fc.boolean(), fc.constant([]), fc.constant({}));
  const keyish = fc.oneof(keyArb, fc.constantFrom('ab', 'x'.repeat(64), 'a b', 'ké1', ''), anything);
  const describish = fc.oneof(
    descriptionArb,
    fc.constantFrom('', 'x'.repeat(1024), 'x'.repeat(1025), '\u{1F600}'.repeat(1024), '\u{1F600}'.repeat(1025), 'a\uD800b', '\uDC00'),
    anything,
  );
  const extra = fc.option(fc.constantFrom('extra', 'descripton', '__proto__', 'constructor'), { nil: undefined });
  const withExtra = <T extends object>(object: T, field: string | undefined) => (field === undefined ? object : { ...object, [field]: 1 });
  const fileArb = fc
    .record({
      version: fc.oneof(fc.constant(1), anything, fc.constant('1')),
      namespaces: fc.oneof(
        fc.array(
          fc.oneof(
            fc.record(
              {
                key: keyish,
                description: describish,
                bases: fc.oneof(fc.array(fc.oneof(fc.record({ key: keyish, description: describish }, { requiredKeys: ['key'] }), anything), { maxLength: 3 }), anything),
                extra,
              },
              { requiredKeys: [] },
            ),
            anything,
          ),
          { maxLength: 4 },
        ),
        anything,
      ),
      extra,
    }, { requiredKeys: [] })
    .map(({ extra: field, ...file }) => withExtra(file, field));

  it('accepts only what zod accepts, and what is valid (property)', async () => {
    let accepted = 0;
    fc.assert(
      fc.property(fileArb, (value) => {
        const valid = ResourcesFileSchema.safeParse(value).success;
        if (plainlyValid(value)) {
          accepted++;
          expect(valid).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
    await fc.assert(
      fc.asyncProperty(resourcesArb, async (resources) => {
        // Files as export writes them, valid or not (a key listed twice, a key too short): the two agree.
        const file: unknown = JSON.parse(await serializeResources(resources, 'json'));
        expect(plainlyValid(file)).toBe(ResourcesFileSchema.safeParse(file).success);
      }),
      { numRuns: 300 },
    );
    expect(accepted).toBeGreaterThan(0);
  });
});

describe('a problem deep in a big file', () => {
  const COUNT = 100_000;
  const resources = normalizeResources({
    namespaces: Array.from({ length: COUNT }, (_, i) => ({
      key: `ns-${String(i).padStart(6, '0')}`,
      description: `Namespace ${i}`,
      bases: i % 10 === 0 ? [{ key: 'faq', description: null }] : [],
    })),
  });

  async function problemsOf(text: string, source: string): Promise<string[]> {
    try {
      await parseResources(text, source);
    } catch (error) {
      expect(error).toBeInstanceOf(ResourcesFileError);
      return [...(error as ResourcesFileError).problems];
    }
    throw new Error('expected the file to be rejected');
  }

  it.each(['yaml', 'json'] as const)('%s: is named by its line and column, among 100,000 namespaces', async (format) => {
    const text = await serializeResources(resources, format);
    expect(readResourcesText(text)).toBeDefined();
    // The last namespace's key made too short, and a base's description made a number, near the end.
    const broken = text.replace('ns-099999', 'n9').replace(format === 'yaml' ? 'description: Namespace 99990\n' : '"description": "Namespace 99990"', format === 'yaml' ? 'description: 0x10\n' : '"description": 16');
    const lines = broken.split('\n');
    const keyLine = lines.findIndex((line) => line.includes('n9')) + 1;
    const keyColumn = (lines[keyLine - 1] as string).indexOf(format === 'yaml' ? 'n9' : '"n9"') + 1;
    const descriptionLine = lines.findIndex((line) => line.includes(format === 'yaml' ? 'description: 0x10' : '"description": 16')) + 1;
    const descriptionColumn = (lines[descriptionLine - 1] as string).indexOf(format === 'yaml' ? '0x10' : '16') + 1;
    expect(keyLine).toBeGreaterThan(300_000);
    const source = `kb.${format}`;
    expect(await problemsOf(broken, source)).toEqual([
      expect.stringMatching(new RegExp(`^kb\\.${format}:${descriptionLine}:${descriptionColumn}: namespaces\\[99990\\]\\.description: .*YAML read ${format === 'yaml' ? '0x10' : '16'} as a number`)),
      expect.stringMatching(new RegExp(`^kb\\.${format}:${keyLine}:${keyColumn}: namespaces\\[99999\\]\\.key: .*3 to 63`)),
    ]);
  });
});
