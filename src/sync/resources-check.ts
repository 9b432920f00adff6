import * as z from '../api/zod.js';
import { Description, Key } from '../api/schemas.js';
import { valueAt } from '../api/validation.js';
import { RESOURCES_VERSION, type ResourcesFile } from './resources-file.js';

/**
 * The resources file's schema by zod, loaded only for a file that plainlyValid (resources-file.ts) does not take: zod
 * then takes it or says what is wrong, in the file's words (describeIssue).
 */

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

export const ResourcesFileSchema: z.ZodMiniType<ResourcesFile> = z
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

function pathText(path: readonly PropertyKey[]): string {
  let text = '';
  for (const step of path) text += typeof step === 'number' ? `[${step}]` : `${text === '' ? '' : '.'}${String(step)}`;
  return text === '' ? 'the file' : text;
}

/** What an issue says, and where it points: in the file's words (src/sync/resources-yaml.ts reads them too). */
export function describeIssue(
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
