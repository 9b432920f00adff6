import { existsSync, readlinkSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import YAML, { isMap, isScalar, LineCounter, Scalar, type Node as YamlNode } from 'yaml';
import * as z from '../api/zod.js';
import { codePointLength, Description, Key, KEY_PATTERN, LIMITS } from '../api/schemas.js';
import { valueAt } from '../api/validation.js';
import { CliError, UsageError } from '../cli/errors.js';
import { EXIT } from '../client/exit-codes.js';
import { describeSystemError, errno } from '../os/errors.js';
import { escapeJsonControls, hasJsonUnsafe } from '../text/controls.js';
import { writeFileAtomic } from '../os/files.js';
import { isPlainNonString, type Path, pathId, type Places, readResourcesText } from './resources-reader.js';

/**
 * The file of `kb export`, `kb apply` and `kb import`: an organization's namespaces and their bases, keys and
 * descriptions only. Nothing in it names an organization, a URL or a time, so two exports of equal content are
 * byte-identical wherever they came from.
 *
 * ```yaml
 * version: 1
 * namespaces:
 *   - key: docs
 *     description: Product documentation
 *     bases:
 *       - key: faq
 *         description: null
 * ```
 */
export const RESOURCES_VERSION = 1;

/** The format as --help shows it. */
export const FILE_FORMAT_HELP = `The file is what \`kb export\` writes, YAML or JSON: \`version: 1\` and \`namespaces\`, a list of namespaces, each with a key, a description and a list of bases, each with a key and a description. In YAML flow style:

  version: 1
  namespaces: [{key: docs, description: Docs, bases: [{key: faq}]}]

A missing description means none, and missing bases mean none. Keys and descriptions follow the API's rules and are checked before anything is sent; a problem is reported as FILE:LINE:COLUMN with the path of the field.`;

export type ResourcesFormat = 'yaml' | 'json';
export const RESOURCES_FORMATS: readonly ResourcesFormat[] = ['yaml', 'json'];

export interface BaseEntry {
  key: string;
  description: string | null;
}

export interface NamespaceEntry {
  key: string;
  description: string | null;
  bases: BaseEntry[];
}

/** The content of a file, normalized: every description present (null for none), everything sorted by key. */
export interface Resources {
  namespaces: NamespaceEntry[];
}

/** An absent description means none (null); absent bases mean none: the file says all there is. */
const FileBase = z.strictObject({
  key: Key,
  description: z.optional(z.nullable(Description)),
});

const FileNamespace = z.strictObject({
  key: Key,
  description: z.optional(z.nullable(Description)),
  bases: z.optional(z.array(FileBase, { error: 'must be a list of bases' })),
});

export const ResourcesFile = z
  .strictObject({
    version: z.literal(RESOURCES_VERSION, { error: `must be ${RESOURCES_VERSION} (the only version of this format)` }),
    namespaces: z.array(FileNamespace, { error: 'must be a list of namespaces' }),
  })
  .check(z.superRefine((file, ctx) => {
    const namespaces = new Map<string, number>();
    file.namespaces.forEach((ns, i) => {
      const first = namespaces.get(ns.key);
      if (first === undefined) namespaces.set(ns.key, i);
      else ctx.addIssue({ code: 'custom', path: ['namespaces', i, 'key'], message: `namespace ${ns.key} is listed twice (first at namespaces[${first}])` });
      const bases = new Map<string, number>();
      (ns.bases ?? []).forEach((base, j) => {
        const firstBase = bases.get(base.key);
        if (firstBase === undefined) bases.set(base.key, j);
        else {
          ctx.addIssue({
            code: 'custom',
            path: ['namespaces', i, 'bases', j, 'key'],
            message: `base ${base.key} is listed twice in namespace ${ns.key} (first at bases[${firstBase}])`,
          });
        }
      });
    });
  }));
export type ResourcesFile = z.infer<typeof ResourcesFile>;

/** Byte order, as the server orders its lists (keys are ASCII, so UTF-16 order is byte order). */
export function byKey(a: { key: string }, b: { key: string }): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

export function normalizeResources(file: { namespaces: readonly { key: string; description?: string | null | undefined; bases?: readonly { key: string; description?: string | null | undefined }[] | undefined }[] }): Resources {
  return {
    namespaces: file.namespaces
      .map((ns) => ({
        key: ns.key,
        description: ns.description ?? null,
        bases: (ns.bases ?? []).map((base) => ({ key: base.key, description: base.description ?? null })).sort(byKey),
      }))
      .sort(byKey),
  };
}

/**
 * The file's text: the same resources give the same bytes, in either format. A description that holds a character
 * that would drive or reorder a terminal (a bidi override, a C1 control) is written with it as a `\uXXXX` escape,
 * the same text once read, so that `cat` or a pager shows the file as it is.
 */
export function serializeResources(resources: Resources, format: ResourcesFormat): string {
  const { namespaces } = normalizeResources(resources);
  if (format === 'json') {
    // Built field by field, so the order of keys in the output is fixed here and nowhere else.
    const document = {
      version: RESOURCES_VERSION,
      namespaces: namespaces.map((ns) => ({
        key: ns.key,
        description: ns.description,
        bases: ns.bases.map((base) => ({ key: base.key, description: base.description })),
      })),
    };
    return `${escapeJsonControls(JSON.stringify(document, null, 2))}\n`;
  }
  if (namespaces.length === 0) return `version: ${RESOURCES_VERSION}\nnamespaces: []\n`;
  const parts = [`version: ${RESOURCES_VERSION}\nnamespaces:\n`];
  for (const ns of namespaces) parts.push(yamlNamespace(ns));
  return parts.join('');
}

/**
 * One namespace of the YAML file, as the \`yaml\` package writes it within the whole document (a test holds the two
 * byte for byte): written here when every key and description is a plain scalar, which the package would write as
 * it is, and by the package otherwise.
 */
function yamlNamespace(ns: NamespaceEntry): string {
  let text = '';
  if (isPlain(ns.key) && (ns.description === null || isPlain(ns.description))) {
    text = `  - key: ${ns.key}\n    description: ${ns.description ?? 'null'}\n    bases:`;
    if (ns.bases.length === 0) return `${text} []\n`;
    text += '\n';
    for (const base of ns.bases) {
      if (!isPlain(base.key) || (base.description !== null && !isPlain(base.description))) {
        text = '';
        break;
      }
      text += `      - key: ${base.key}\n        description: ${base.description ?? 'null'}\n`;
    }
    if (text !== '') return text;
  }
  // The package, on a document of this namespace alone, at the depth it has in the whole file.
  const document = {
    namespaces: [
      {
        key: ns.key,
        description: yamlSafe(ns.description),
        bases: ns.bases.map((base) => ({ key: base.key, description: yamlSafe(base.description) })),
      },
    ],
  };
  return escapeJsonControls(YAML.stringify(document, { lineWidth: 0, aliasDuplicateObjects: false })).slice('namespaces:\n'.length);
}

/** What the \`yaml\` package would not write as a plain scalar (src/stringify/stringifyString.ts, plainString). */
const NOT_PLAIN = /^[\n\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]$|^(?:---|\.\.\.)/;
const PRINTABLE_ASCII = /^[\u0020-\u007E]*$/;
// eslint-disable-next-line no-control-regex
const QUOTED_ALWAYS = /[\u0000-\u001F\u007F-\u009F\uD800-\uDFFF]/;

/** A string that YAML writes as it is, reads back as a string, and that needs no escape for a terminal. */
function isPlain(text: string): boolean {
  if (text === '' || NOT_PLAIN.test(text) || isPlainNonString(text)) return false;
  // Printable ASCII holds no control, no surrogate and nothing a terminal would be fooled by: no need to look.
  return PRINTABLE_ASCII.test(text) || (!QUOTED_ALWAYS.test(text) && !hasJsonUnsafe(text));
}

/**
 * YAML takes a `\uXXXX` escape only in a double-quoted string: a description that will get one is written so. (Keys
 * are letters, digits, - and _ only.)
 */
function yamlSafe(description: string | null): string | null | Scalar {
  if (description === null || !hasJsonUnsafe(description)) return description;
  const scalar = new Scalar(description);
  scalar.type = Scalar.QUOTE_DOUBLE;
  return scalar;
}

/** A file that is not valid YAML/JSON or not a valid resources file: exit 2, naming where. */
export class ResourcesFileError extends UsageError {
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(
      problems[0] ?? `${source}: invalid`,
      problems.length > 1
        ? [
            `${problems.length - 1} more problem${problems.length > 2 ? 's' : ''}:`,
            ...problems.slice(1, 11).map((line) => `  ${line}`),
            ...(problems.length > 11 ? [`  … and ${problems.length - 11} more`] : []),
          ].join('\n')
        : 'The file holds `version: 1` and `namespaces`, a list of {key, description, bases: [{key, description}]}; see `kb apply --help`.',
    );
  }
}

function pathText(path: readonly PropertyKey[]): string {
  let text = '';
  for (const step of path) text += typeof step === 'number' ? `[${step}]` : `${text === '' ? '' : '.'}${String(step)}`;
  return text === '' ? 'the file' : text;
}

/** The node an issue is about, or its nearest ancestor that is in the file (a missing field points at its object). */
function nodeAt(doc: YAML.Document, path: readonly PropertyKey[], unknownKey?: string): YamlNode | undefined {
  for (let length = path.length; length >= 0; length--) {
    const node = length === 0 ? doc.contents : doc.getIn(path.slice(0, length) as (string | number)[], true);
    if (node === null || typeof node !== 'object' || !('range' in node) || !node.range) continue;
    if (unknownKey !== undefined && length === path.length && isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === unknownKey);
      if (pair && isScalar(pair.key)) return pair.key;
    }
    return node as YamlNode;
  }
  return undefined;
}

/** A plain scalar's text as the file writes it (`0x10`, not the 16 YAML read), for a hint that quotes it. */
function writtenText(doc: YAML.Document, text: string, path: readonly PropertyKey[]): string | undefined {
  const node = doc.getIn(path as (string | number)[], true);
  if (!isScalar(node) || node.type !== Scalar.PLAIN || !node.range) return undefined;
  return text.slice(node.range[0], node.range[1]).trimEnd();
}

function describeIssue(
  issue: z.core.$ZodIssue,
  value: unknown,
  written: (path: readonly PropertyKey[]) => string | undefined,
): { path: readonly PropertyKey[]; message: string; unknownKey?: string } {
  if (issue.code === 'unrecognized_keys') {
    const where = issue.path.length > 0 ? pathText(issue.path) : 'the file';
    const allowed = issue.path.length === 0 ? 'version, namespaces' : issue.path.includes('bases') ? 'key, description' : 'key, description, bases';
    return {
      path: issue.path,
      unknownKey: issue.keys[0],
      message: `${where}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')} (allowed: ${allowed})`,
    };
  }
  const found = valueAt(value, issue.path);
  if ((issue.code === 'invalid_type' || issue.code === 'invalid_value') && found === undefined) {
    return { path: issue.path, message: `${pathText(issue.path)}: is required` };
  }
  let message = `${pathText(issue.path)}: ${issue.message}`;
  const field = issue.path[issue.path.length - 1];
  if ((field === 'key' || field === 'description') && (typeof found === 'number' || typeof found === 'boolean')) {
    // Quoted as written: quoting what YAML made of it would change the value (0x10 would become "16").
    const source = written(issue.path) ?? String(found);
    message += ` (YAML read ${source} as a ${typeof found}: quote it, ${JSON.stringify(source)})`;
  }
  return { path: issue.path, message };
}

/**
 * Parses a resources file, YAML or JSON (JSON is read as YAML, which it is, so both get line numbers), and
 * validates it. A problem is reported as `SOURCE:LINE:COLUMN: path: rule`.
 *
 * The files kb writes, and those written like them, are read by src/sync/resources-reader.ts to plain values, with
 * no parse tree kept: places are looked up only for problems. Any other text is read by the full YAML parser.
 */
export function parseResources(text: string, source: string): Resources {
  const fast = readResourcesText(text);
  if (fast === undefined) return parseDocument(text, source);
  const { value } = fast;
  if (value === null || value === undefined) {
    throw new ResourcesFileError(source, [`${source}: the file is empty: expected version: ${RESOURCES_VERSION} and namespaces`]);
  }
  if (plainlyValid(value)) return normalizeResources(value);
  const result = ResourcesFile.safeParse(value);
  if (result.success) return normalizeResources(result.data);
  // The paths of the issues, and of an unknown field's key, which is where such an issue points.
  const places = fast.locate(result.error.issues.flatMap((issue) => (issue.code === 'unrecognized_keys' ? issue.keys.map((key) => [...issue.path, key]) : [issue.path])));
  const lines = lineStarts(text);
  throw new ResourcesFileError(
    source,
    result.error.issues.map((issue) => {
      const { path, message, unknownKey } = describeIssue(issue, value, (path) => {
        const place = places.nodes.get(pathId(path));
        return place && place.end > place.start ? text.slice(place.start, place.end) : undefined;
      });
      const offset = placeOf(places, path, unknownKey);
      return `${offset === undefined ? source : `${source}:${linePos(lines, offset)}`}: ${message}`;
    }),
  );
}

/** As the API's Description has it (src/api/schemas.ts). */
const LONE_SURROGATE = /\p{Surrogate}/u;
const ANY_SURROGATE = /[\uD800-\uDFFF]/;
const FILE_FIELDS = new Set(['version', 'namespaces']);
const NAMESPACE_FIELDS = new Set(['key', 'description', 'bases']);
const BASE_FIELDS = new Set(['key', 'description']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasOnly(value: Record<string, unknown>, fields: ReadonlySet<string>): boolean {
  for (const field in value) if (!fields.has(field)) return false;
  return true;
}

function isKey(value: unknown): value is string {
  return typeof value === 'string' && KEY_PATTERN.test(value);
}

function isDescription(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  // A surrogate at all is rare: only then is it worth asking whether one is alone.
  if (typeof value !== 'string' || (ANY_SURROGATE.test(value) && LONE_SURROGATE.test(value))) return false;
  // Code points: at most one per UTF-16 unit, at least one per two.
  if (value.length >= LIMITS.descriptionMin && value.length <= LIMITS.descriptionMax) return true;
  const length = codePointLength(value);
  return length >= LIMITS.descriptionMin && length <= LIMITS.descriptionMax;
}

/**
 * Whether a file's value is valid, checked without zod for the many files that are: true only where
 * `ResourcesFile.safeParse` succeeds (a test holds the two together), at a fraction of its time and with no copy of
 * the file. False hands the value to zod, which says what is wrong.
 */
export function plainlyValid(value: unknown): value is ResourcesFile {
  if (!isObject(value) || !hasOnly(value, FILE_FIELDS) || value.version !== RESOURCES_VERSION || !Array.isArray(value.namespaces)) return false;
  const namespaces = new Set<string>();
  for (const ns of value.namespaces as unknown[]) {
    if (!isObject(ns) || !hasOnly(ns, NAMESPACE_FIELDS) || !isKey(ns.key) || namespaces.has(ns.key) || !isDescription(ns.description)) return false;
    namespaces.add(ns.key);
    if (ns.bases === undefined) continue;
    if (!Array.isArray(ns.bases)) return false;
    // One base cannot be listed twice: no set for it.
    const bases = ns.bases.length > 1 ? new Set<string>() : undefined;
    for (const base of ns.bases as unknown[]) {
      if (!isObject(base) || !hasOnly(base, BASE_FIELDS) || !isKey(base.key) || bases?.has(base.key) || !isDescription(base.description)) return false;
      bases?.add(base.key);
    }
  }
  return true;
}

/** The place of the node at `path`, or of its nearest ancestor in the file; an unknown key, at the key itself. */
function placeOf(places: Places, path: Path, unknownKey?: string): number | undefined {
  if (unknownKey !== undefined) {
    const key = places.keys.get(pathId([...path, unknownKey]));
    if (key !== undefined) return key;
  }
  for (let length = path.length; length >= 0; length--) {
    const node = places.nodes.get(pathId(path.slice(0, length)));
    if (node !== undefined) return node.start;
  }
  return undefined;
}

/** The offset at which each line starts. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
  return starts;
}

/** LINE:COLUMN, from 1, of an offset. */
function linePos(starts: readonly number[], offset: number): string {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((starts[middle] as number) <= offset) low = middle;
    else high = middle - 1;
  }
  return `${low + 1}:${offset - (starts[low] as number) + 1}`;
}

/** The full YAML parser's reading, for any text beyond src/sync/resources-reader.ts. */
function parseDocument(text: string, source: string): Resources {
  const lineCounter = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const at = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return `${source}:${line}:${col}`;
  };
  if (doc.errors.length > 0) {
    throw new ResourcesFileError(
      source,
      doc.errors.map((error) => {
        const message = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
        return `${at(error.pos[0])}: not valid YAML or JSON: ${message}`;
      }),
    );
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new ResourcesFileError(source, [`${source}: ${(error as Error).message}`]);
  }
  if (value === null || value === undefined) {
    throw new ResourcesFileError(source, [`${source}: the file is empty: expected version: ${RESOURCES_VERSION} and namespaces`]);
  }
  const result = ResourcesFile.safeParse(value);
  if (!result.success) {
    throw new ResourcesFileError(
      source,
      result.error.issues.map((issue) => {
        const { path, message, unknownKey } = describeIssue(issue, value, (path) => writtenText(doc, text, path));
        const node = nodeAt(doc, path, unknownKey);
        return `${node?.range ? at(node.range[0]) : source}: ${message}`;
      }),
    );
  }
  return normalizeResources(result.data);
}

export function countBases(resources: Resources): number {
  return resources.namespaces.reduce((sum, ns) => sum + ns.bases.length, 0);
}

/**
 * Writes a resources file whole or not at all (src/os/files.ts); a failure is one line that says why. Resolves false
 * when the file was a pipe whose reader went away (`-o /dev/stdout | head -1`): no failure, as for stdout itself.
 */
export async function writeResourcesFile(path: string, text: string): Promise<boolean> {
  try {
    await writeFileAtomic(path, text);
    return true;
  } catch (error) {
    if (errno(error) === 'EPIPE') return false;
    if (errno(error) === 'ENOENT') throw new CliError(`Cannot write ${path}: ${missingDirectory(path)} does not exist`, EXIT.failure);
    throw new CliError(`Cannot write ${path}: ${describeSystemError(error)}`, EXIT.failure);
  }
}

/**
 * Which directory is missing when a file cannot be made (ENOENT): the nearest one of the path, or of the link it
 * names, that does not exist, as the user wrote it when it is the path's own.
 */
function missingDirectory(path: string): string {
  let dir = dirname(path);
  if (existsSync(dir)) {
    // A dangling link whose target's directory is missing (the file itself is made when missing).
    try {
      dir = dirname(resolve(dirname(path), readlinkSync(path)));
    } catch {
      return 'its directory';
    }
  }
  while (!existsSync(dirname(dir)) && dirname(dir) !== dir) dir = dirname(dir);
  return `the directory ${dir}`;
}
