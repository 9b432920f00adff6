import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { prepareApiRequest, renderHead, renderReply, replyFailure } from '../cli/api-request.js';
import { CliError } from '../cli/errors.js';
import { type Jq, loadJq, renderJq } from '../cli/jq.js';
import type { RawReply } from '../client/client.js';
import { EXIT } from '../client/exit-codes.js';

export default class Api extends ApiCommand {
  static override summary = 'Send an authenticated request to any API operation, and print the JSON reply';

  static override description = `As \`gh api\`: PATH is relative to the deployment's /v1 (e.g. ns_list, or base_list?namespace=docs), and may reach operations no other command wraps; a path as the API document writes it, /v1/ns_list, is taken as ns_list. The profile's token goes with the request, so PATH stays under /v1: a segment that a server could read as . or .. (encoded, or with ;parameters) is refused. The whole reply is printed to stdout as it came (the envelope, or openapi.json as it is): indented on a terminal, one line when piped.

The method is GET, or POST when fields or --input are given; -X picks another. As in \`gh api\`, each -f key=value adds a string field to a JSON body, and each -F key=value a typed one: integers and decimals, true, false and null are JSON values, @FILE is the text of a file and @- the text of stdin, anything else a string. key[sub]=value nests an object, key[]=value appends to an array. With -X GET (or beside --input) fields go to the query string instead. --input sends a file, or stdin with -, as the body.

With --jq (-q), as \`gh api --jq\`: a jq expression over a 2xx JSON reply (the envelope: .data[].key), its results printed as \`jq -r\` prints them, strings bare. One jq cannot compile exits 2 before anything is sent; one that fails on the reply exits 1, since the request was done.

With -i the status line and the headers of the reply come before its body, as with \`gh api -i\`. -H adds a header to the request (repeatable); Authorization and Host are refused, since kb sends those of the profile in use.

A reply other than 2xx is still printed to stdout, its message goes to stderr, and kb exits by its status: 3 for 404, 4 for 401/403, 5 for 409, 2 for other 4xx, 1 for 5xx; 6 when the deployment cannot be reached.`;

  static override examples = [
    '<%= config.bin %> api ns_list',
    { description: 'Create a namespace', command: '<%= config.bin %> api ns_create -f key=docs -f description="Product docs"' },
    { description: 'Typed and nested fields: clear a description', command: '<%= config.bin %> api ns_update -f namespace=docs -F \'data[description]=null\'' },
    { description: 'A description from a file', command: '<%= config.bin %> api ns_update -f namespace=docs -F \'data[description]=@description.txt\'' },
    { description: 'A body from a file, with another method', command: '<%= config.bin %> api base_delete -X DELETE --input body.json' },
    { description: 'Fields as a query string', command: '<%= config.bin %> api base_list -X GET -f namespace=docs' },
    { description: 'The OpenAPI document of the deployment', command: '<%= config.bin %> api openapi.json > openapi.json' },
    { description: 'Keys only, with jq', command: "<%= config.bin %> api ns_list --jq '.data[].key'" },
    { description: 'The status line and headers too, e.g. the request id', command: '<%= config.bin %> api -i ns_list' },
    { description: 'A header of your own', command: "<%= config.bin %> api ns_list -H 'Accept-Language: en'" },
  ];

  static override args = {
    path: Args.string({ description: 'The path after /v1, e.g. ns_list or base_list?namespace=docs.', required: true }),
  };

  static override flags = {
    method: Flags.string({ char: 'X', summary: 'HTTP method (default: GET, or POST with fields or --input).' }),
    'raw-field': Flags.string({
      char: 'f',
      summary: 'A string field, key=value. Repeatable.',
      multiple: true,
      multipleNonGreedy: true,
    }),
    field: Flags.string({
      char: 'F',
      summary: 'A typed field, key=value: numbers, true, false, null, @FILE, @- (stdin). Repeatable.',
      multiple: true,
      multipleNonGreedy: true,
    }),
    input: Flags.string({ summary: 'Send this file as the body; - reads stdin.' }),
    header: Flags.string({
      char: 'H',
      summary: 'A request header, "Name: value". Repeatable. Not Authorization nor Host: kb sends those of the profile in use.',
      multiple: true,
      multipleNonGreedy: true,
    }),
    include: Flags.boolean({ char: 'i', summary: 'Print the status line and the headers of the reply before its body.' }),
    jq: Flags.string({ char: 'q', summary: 'A jq expression over the JSON reply, as gh api --jq (".data[].key"): prints its results, strings bare.' }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Api);
    // Compiled before the request: an expression jq cannot read sends nothing (exit 2).
    const jq = flags.jq === undefined ? undefined : await loadJq(flags.jq);
    const request = await prepareApiRequest(
      {
        path: args.path, method: flags.method, rawFields: flags['raw-field'] ?? [], typedFields: flags.field ?? [], input: flags.input,
        headers: flags.header ?? [],
      },
      this.io,
    );
    const { client, deployment } = await this.connect(flags, { requireToken: false });
    const reply = await this.request(`${request.method} ${request.path}`, client.raw(request.method, request.path, request.body, request.headers));
    if (flags.include) this.io.stdout(renderHead(reply, this.io.isStdoutTTY, (await import('node:http')).STATUS_CODES));
    this.io.stdout(jq === undefined ? renderReply(reply, this.io.isStdoutTTY) : await jqReply(jq, reply, this.io.isStdoutTTY));
    const failure = replyFailure(reply, deployment.token !== undefined);
    if (failure) throw failure;
  }
}

/**
 * --jq over a 2xx JSON reply. Any other reply is printed as it came (its failure then exits by its status), as is a
 * body that is not JSON, which jq could not read. jq failing on the reply exits 1, not 2: the request was sent and done.
 */
async function jqReply(jq: Jq, reply: RawReply, terminal: boolean): Promise<string> {
  let data: unknown;
  try {
    data = reply.status >= 200 && reply.status < 300 ? JSON.parse(reply.text) : undefined;
  } catch {
    data = undefined;
  }
  if (data === undefined) return renderReply(reply, terminal);
  try {
    return await renderJq(jq, data, terminal);
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    throw new CliError(`The request was done (HTTP ${reply.status}), but its reply failed ${error.message.replace(/^Invalid /, '')}`, EXIT.failure, error.help);
  }
}
