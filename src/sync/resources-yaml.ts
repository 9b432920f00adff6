import YAML, { isMap, isScalar, LineCounter, Scalar, type Node as YamlNode } from 'yaml';
import { escapeJsonControls, hasJsonUnsafe } from '../text/controls.js';
import { describeIssue, ResourcesFileSchema } from './resources-check.js';
import { type NamespaceEntry, normalizeResources, type Resources, RESOURCES_VERSION, ResourcesFileError } from './resources-file.js';

/**
 * What of the resources file needs the `yaml` package, loaded by src/sync/resources-file.ts only when a file or a
 * description needs it: reading text beyond src/sync/resources-reader.ts, and writing a namespace whose keys or
 * descriptions are not all plain scalars.
 */

/** One namespace of the YAML file as the package writes it, on a document of this namespace alone, at its depth. */
export function yamlNamespace(ns: NamespaceEntry): string {
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

/** The full YAML parser's reading, for any text beyond src/sync/resources-reader.ts. */
export function parseDocument(text: string, source: string): Resources {
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
  const result = ResourcesFileSchema.safeParse(value);
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

