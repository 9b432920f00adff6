import { Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { readResources } from '../sync/plan.js';
import { countBases, RESOURCES_FORMATS, type ResourcesFormat, serializeResources, writeResourcesFile } from '../sync/resources-file.js';

export default class Export extends ApiCommand {
  static override summary = 'Write the namespaces of your organization and their bases to a file (YAML or JSON)';

  static override description = `Keys and descriptions only, sorted by key, with no organization, URL or timestamp: two exports of equal content are byte-identical, whichever organization or deployment they came from. A bidi override or a control character in a description is written as a \\uXXXX escape, the same text once read, so the file is safe to cat. \`kb apply -f FILE\` or \`kb import FILE\` brings the content to another organization or deployment.

Bases are listed through GET /v1/base_list_all (or GET /v1/base_list, namespace by namespace), extensions that \`kb serve\` offers beyond the API document. Against a deployment without GET /v1/base_list, export fails (exit 1) rather than write a file with bases missing.

The format is YAML unless --format json is given, or -o names a .json file. A regular file given to -o is replaced whole (written beside it, fsynced, renamed over it, its mode kept), so a failed export leaves the old file as it was. A device, a FIFO, /dev/stdout, /dev/stderr or /dev/fd/N is written to as it is: \`kb export -o /dev/stdout >> log\` appends. A symbolic link is written through, and stays a link.`;

  static override examples = [
    '<%= config.bin %> export -o kb.yaml',
    { description: 'Two namespaces, as JSON', command: '<%= config.bin %> export --namespace docs --namespace guides --format json' },
    { description: 'Copy the local instance to a remote deployment', command: '<%= config.bin %> export --profile local | <%= config.bin %> import --profile prod -' },
  ];

  static override flags = {
    namespace: Flags.string({ char: 'n', summary: 'Export only this namespace (repeatable; each must exist).', multiple: true, multipleNonGreedy: true }),
    format: Flags.string({ summary: 'yaml or json (default: yaml, or json when -o ends in .json).', options: [...RESOURCES_FORMATS] }),
    output: Flags.string({ char: 'o', summary: 'Write to this file instead of stdout (- is stdout).' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Export);
    const output = flags.output === '-' ? undefined : flags.output;
    const format = (flags.format ?? (output?.toLowerCase().endsWith('.json') ? 'json' : 'yaml')) as ResourcesFormat;
    // Many requests at once: several on each of two connections (src/client/undici.ts).
    const { client } = await this.connect(flags, { bulk: true });
    const resources = await this.request('Reading namespaces and bases', readResources(client, { namespaces: flags.namespace }));
    const text = await serializeResources(resources, format);
    if (output === undefined) {
      this.io.stdout(text);
      return;
    }
    // A reader that went away read what it wanted; nothing to confirm, nothing failed.
    if (!(await writeResourcesFile(output, text))) return;
    const count = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
    this.confirmChange(`Exported ${count(resources.namespaces.length, 'namespace')} and ${count(countBases(resources), 'base')} to ${output}`);
  }
}
