import { existsSync, readlinkSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isDescription as isApiDescription, isKey, isObject, onlyKeys } from '../api/quick.js';
import { CliError, UsageError } from '../cli/errors.js';
import { EXIT } from '../client/exit-codes.js';
import { describeSystemError, errno } from '../os/errors.js';
import { escapeJsonControls, hasJsonUnsafe } from '../text/controls.js';
import { writeFileAtomic } from '../os/files.js';
import type * as ResourcesYaml from './resources-yaml.js';
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

/** A file's content as it may be written: an absent description means none (null), absent bases mean none. */
export interface ResourcesFile {
  version: typeof RESOURCES_VERSION;
  namespaces: { key: string; description?: string | null | undefined; bases?: { key: string; description?: string | null | undefined }[] | undefined }[];
}

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
export async function serializeResources(resources: Resources, format: ResourcesFormat): Promise<string> {
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
  // The `yaml` package is loaded only for a namespace that needs it (src/sync/resources-yaml.ts).
  let writer: typeof ResourcesYaml | undefined;
  for (const ns of namespaces) {
    const plain = plainYamlNamespace(ns);
    if (plain !== undefined) parts.push(plain);
    else {
      writer ??= await import('./resources-yaml.js');
      parts.push(writer.yamlNamespace(ns));
    }
  }
  return parts.join('');
}

/**
 * One namespace of the YAML file, as the \`yaml\` package writes it within the whole document (a test holds the two
 * byte for byte), when every key and description is a plain scalar, which the package would write as it is; undefined
 * otherwise, for the package to write.
 */
function plainYamlNamespace(ns: NamespaceEntry): string | undefined {
  if (!isPlain(ns.key) || (ns.description !== null && !isPlain(ns.description))) return undefined;
  let text = `  - key: ${ns.key}\n    description: ${ns.description ?? 'null'}\n    bases:`;
  if (ns.bases.length === 0) return `${text} []\n`;
  text += '\n';
  for (const base of ns.bases) {
    if (!isPlain(base.key) || (base.description !== null && !isPlain(base.description))) return undefined;
    text += `      - key: ${base.key}\n        description: ${base.description ?? 'null'}\n`;
  }
  return text;
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

/**
 * Parses a resources file, YAML or JSON (JSON is read as YAML, which it is, so both get line numbers), and
 * validates it. A problem is reported as `SOURCE:LINE:COLUMN: path: rule`.
 *
 * The files kb writes, and those written like them, are read by src/sync/resources-reader.ts to plain values, with
 * no parse tree kept: places are looked up only for problems. Any other text is read by the full YAML parser.
 */
export async function parseResources(text: string, source: string): Promise<Resources> {
  const fast = readResourcesText(text);
  // Only then is the `yaml` package loaded (src/sync/resources-yaml.ts).
  if (fast === undefined) return (await import('./resources-yaml.js')).parseDocument(text, source);
  const { value } = fast;
  if (value === null || value === undefined) {
    throw new ResourcesFileError(source, [`${source}: the file is empty: expected version: ${RESOURCES_VERSION} and namespaces`]);
  }
  if (plainlyValid(value)) return normalizeResources(value);
  // Only then is zod loaded, to take what plainlyValid does not know or to say what is wrong (resources-check.ts).
  const { ResourcesFileSchema, describeIssue } = await import('./resources-check.js');
  const result = ResourcesFileSchema.safeParse(value);
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

const FILE_FIELDS = new Set(['version', 'namespaces']);
const NAMESPACE_FIELDS = new Set(['key', 'description', 'bases']);
const BASE_FIELDS = new Set(['key', 'description']);

/** An optional, nullable Description (src/api/schemas.ts). */
function isDescription(value: unknown): boolean {
  return value === undefined || value === null || isApiDescription(value);
}

/**
 * Whether a file's value is valid, checked without zod for the many files that are: true only where
 * `ResourcesFileSchema.safeParse` (resources-check.ts) succeeds (a test holds the two together), at a fraction of its time and with no copy of
 * the file. False hands the value to zod, which says what is wrong.
 */
export function plainlyValid(value: unknown): value is ResourcesFile {
  if (!isObject(value) || !onlyKeys(value, FILE_FIELDS) || value.version !== RESOURCES_VERSION || !Array.isArray(value.namespaces)) return false;
  const namespaces = new Set<string>();
  for (const ns of value.namespaces as unknown[]) {
    if (!isObject(ns) || !onlyKeys(ns, NAMESPACE_FIELDS) || !isKey(ns.key) || namespaces.has(ns.key) || !isDescription(ns.description)) return false;
    namespaces.add(ns.key);
    if (ns.bases === undefined) continue;
    if (!Array.isArray(ns.bases)) return false;
    // One base cannot be listed twice: no set for it.
    const bases = ns.bases.length > 1 ? new Set<string>() : undefined;
    for (const base of ns.bases as unknown[]) {
      if (!isObject(base) || !onlyKeys(base, BASE_FIELDS) || !isKey(base.key) || bases?.has(base.key) || !isDescription(base.description)) return false;
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
