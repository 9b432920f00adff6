// Renders the OpenAPI document as docs/api.md: the API described for people, from the same source as the server.
type Json = Record<string, unknown>;

const at = (doc: Json, ref: string): Json =>
  ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<Json>((node, part) => node[part] as Json, doc);

/** A schema's type in a few words: `Key`, `string (1-1024 characters) or null`, `array of Namespace`. */
function typeOf(doc: Json, schema: Json): string {
  if (typeof schema.$ref === 'string') return `\`${schema.$ref.split('/').at(-1)}\``;
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map((item) => typeOf(doc, item)).join(' or ');
  if (schema.type === 'array') return `array of ${typeOf(doc, schema.items as Json)}`;
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  const bounds =
    schema.minLength !== undefined || schema.maxLength !== undefined
      ? ` (${schema.minLength ?? 0}-${schema.maxLength ?? '…'} characters)`
      : schema.pattern !== undefined
        ? ` matching \`${String(schema.pattern)}\``
        : '';
  return `${String(schema.type ?? 'any')}${bounds}`;
}

function fields(doc: Json, schema: Json): string[] {
  const resolved = typeof schema.$ref === 'string' ? at(doc, schema.$ref) : schema;
  const properties = (resolved.properties ?? {}) as Record<string, Json>;
  const required = new Set((resolved.required ?? []) as string[]);
  return Object.entries(properties).map(
    ([name, property]) =>
      `| \`${name}\` | ${typeOf(doc, property)} | ${required.has(name) ? 'yes' : 'no'} | ${String(property.description ?? '').replace(/\n/g, ' ')} |`,
  );
}

export function apiMarkdown(doc: Json): string {
  const info = doc.info as Json;
  const lines = [
    `# ${String(info.title)}`,
    '',
    'Generated from the OpenAPI document (`docs/openapi.json`, also served by `kb serve` at `GET /v1/openapi.json`)',
    'by `npm run openapi`. Every path is under `/v1`; authenticate with `Authorization: Bearer <token>`.',
    '',
    String(info.description),
    '',
  ];
  for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      lines.push(`## \`${method.toUpperCase()} /v1${path}\`${operation['x-kb-extension'] ? ' (extension)' : ''}`, '');
      lines.push(`${String(operation.summary)}.${Array.isArray(operation.security) && operation.security.length === 0 ? ' No token needed.' : ''}`, '');
      const parameters = ((operation.parameters ?? []) as Json[]).filter((parameter) => parameter.in === 'query');
      if (parameters.length > 0) {
        lines.push('| query | type | required | |', '|---|---|---|---|');
        for (const parameter of parameters) {
          lines.push(`| \`${String(parameter.name)}\` | ${typeOf(doc, parameter.schema as Json)} | ${parameter.required ? 'yes' : 'no'} | ${String(parameter.description ?? '')} |`);
        }
        lines.push('');
      }
      const body = ((operation.requestBody as Json | undefined)?.content as Json | undefined)?.['application/json'] as Json | undefined;
      if (body) {
        lines.push('| body field | type | required | |', '|---|---|---|---|', ...fields(doc, body.schema as Json), '');
      }
      const headers = ((operation.parameters ?? []) as Json[]).filter((parameter) => parameter.in === 'header');
      for (const header of headers) lines.push(`Header \`${String(header.name)}\` (optional): ${String(header.description ?? '')}`, '');
      const responses = Object.entries(operation.responses as Record<string, Json>).map(([status, response]) => {
        const resolved = typeof response.$ref === 'string' ? at(doc, response.$ref) : response;
        return `| ${status} | ${String(resolved.description ?? '').replace(/\n/g, ' ')} |`;
      });
      lines.push('| status | when |', '|---|---|', ...responses, '');
    }
  }
  lines.push('## Types', '');
  for (const [name, schema] of Object.entries((doc.components as Json).schemas as Record<string, Json>)) {
    if (/(Success|Body|Query)$/.test(name)) continue;
    lines.push(`- \`${name}\`: ${schema.type === 'object' ? `object (${Object.keys((schema.properties ?? {}) as Json).map((key) => `\`${key}\``).join(', ')})` : typeOf(doc, schema)}${schema.description ? `. ${String(schema.description)}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}
