import * as z from './zod.js';
import { ERROR_STATUS, type ErrorCode } from './errors.js';
import { ROUTES, type RouteName, type RouteSpec } from './routes.js';
import { TOKEN_EXPIRES_HEADER, TOKEN_SCOPE_HEADER } from './route-table.js';
import { Base, Description, DESCRIPTION_RULE, FailureEnvelope, Key, KEY_PATTERN, KEY_RULE, LIMITS, Namespace, successEnvelope } from './schemas.js';
import { CURSOR_PATTERN, WATCH_CURSOR_HEADER, WATCH_PATH } from './watch.js';

/** Where `kb serve` serves this document, relative to /v1 (docs/contract.md, The local server). */
export const OPENAPI_PATH = '/openapi.json';

/** Marks what is ours, beyond the API document (the base_list route, this document's own route). */
export const EXTENSION_FLAG = 'x-kb-extension';

/** The statuses a request can get that no operation lists: an unknown route, or a known route with the wrong method. */
export const UNMATCHED_FLAG = 'x-kb-unmatched-responses';

type JsonObject = Record<string, unknown>;

/** The reusable failure responses, named as OpenAPI documents usually name them, each with when it happens. */
const FAILURES: Partial<Record<ErrorCode, { name: string; description: string; headers?: JsonObject }>> = {
  bad_request: {
    name: 'BadRequest',
    description: 'Malformed JSON, a body that is not an object, a field of the wrong type or out of bounds, an unknown or missing field, an unknown query parameter.',
  },
  unauthorized: {
    name: 'Unauthorized',
    description: 'No `Authorization: Bearer` header, or an unknown, revoked or expired token (the message says when it expired). Checked before anything else.',
    headers: { 'WWW-Authenticate': { description: 'The scheme to use.', schema: { type: 'string', const: 'Bearer' } } },
  },
  forbidden: {
    name: 'Forbidden',
    description: 'A write with a valid token of scope read-only: the message names the scope. Nothing is changed.',
  },
  not_found: {
    name: 'NotFound',
    description: 'No such namespace or base in the organization of the token (one of another organization is not found either), or no such route.',
  },
  method_not_allowed: {
    name: 'MethodNotAllowed',
    description: 'A known route with a method it does not take.',
    headers: { Allow: { description: 'The methods the route takes.', schema: { type: 'string' } } },
  },
  conflict: {
    name: 'Conflict',
    description: 'The namespace key or base key is already taken, a namespace to delete holds bases (without cascade), or a request with the same Idempotency-Key is still running.',
  },
  gone: {
    name: 'Gone',
    description: 'A watch cursor older than the changes the server keeps (at least 24 h and the last 10,000 of the organization), or not one of its cursors.',
  },
  payload_too_large: { name: 'PayloadTooLarge', description: `A body over ${LIMITS.bodyBytes / 1024} KiB.` },
  unsupported_media_type: { name: 'UnsupportedMediaType', description: 'A body whose content type is not JSON.' },
  idempotency_mismatch: {
    name: 'IdempotencyMismatch',
    description: 'The Idempotency-Key was first used with a different body.',
  },
  rate_limited: {
    name: 'TooManyRequests',
    description: `More than ${LIMITS.authFailures} failed authentications from this address within ${LIMITS.authFailureWindowMs / 1000} s. Requests with a valid token are never limited.`,
    headers: { 'Retry-After': { description: 'Seconds until the window passes.', schema: { type: 'string', pattern: '^[0-9]+$' } } },
  },
  internal: { name: 'InternalError', description: 'Anything unexpected. The message carries no stack trace.' },
  insufficient_storage: { name: 'InsufficientStorage', description: 'The server has no room left to store the write; nothing was written.' },
};

/** Routes that look up an existing namespace or base (base_create creates a missing namespace instead). */
const LOOKUP_ROUTES: ReadonlySet<RouteName> = new Set(['ns_update', 'ns_delete', 'base_update', 'base_delete', 'base_list']);
/** Routes that create by key, so a key already taken is a conflict. */
const CREATE_ROUTES: ReadonlySet<RouteName> = new Set(['ns_create', 'base_create']);

const TAGS: Record<RouteName, string> = {
  health: 'service',
  auth: 'test',
  base_create: 'base',
  base_update: 'base',
  base_delete: 'base',
  base_list: 'base',
  base_list_all: 'base',
  ns_create: 'namespaces',
  ns_update: 'namespaces',
  ns_delete: 'namespaces',
  ns_list: 'namespaces',
};

function pascal(name: string): string {
  return name.replace(/(^|_)([a-z])/g, (_match, _sep: string, letter: string) => letter.toUpperCase());
}

/** The failure statuses of a route, from what the route is: the table of docs/contract.md, Status codes, and its Limits. */
function failureCodes(route: RouteSpec): ErrorCode[] {
  const codes: ErrorCode[] = [];
  const writes = route.method !== 'GET';
  if (route.auth) codes.push('bad_request', 'unauthorized');
  if (route.auth && writes) codes.push('forbidden');
  if (LOOKUP_ROUTES.has(route.name)) codes.push('not_found');
  if (CREATE_ROUTES.has(route.name) || writes) codes.push('conflict');
  if (route.input.from === 'body') codes.push('payload_too_large', 'unsupported_media_type');
  if (writes) codes.push('idempotency_mismatch');
  if (route.auth) codes.push('rate_limited');
  codes.push('internal');
  if (writes) codes.push('insufficient_storage');
  return codes;
}

function failureRef(code: ErrorCode): JsonObject {
  const failure = FAILURES[code];
  if (!failure) throw new Error(`no failure response for ${code}`);
  return { $ref: `#/components/responses/${failure.name}` };
}

function json(schema: JsonObject): JsonObject {
  return { 'application/json': { schema } };
}

const QUERY_SUFFIX = 'Query';

function hasFields(schema: z.ZodMiniType): boolean {
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  return shape !== undefined && Object.keys(shape).length > 0;
}

const schemaRef = (id: string): JsonObject => ({ $ref: `#/components/schemas/${id}` });

/**
 * The components of the document, converted in one pass from the zod schemas of src/api, so that every schema
 * used twice is one component referenced by `$ref`.
 */
function componentSchemas(routes: readonly RouteSpec[]): Record<string, JsonObject> {
  const registry = z.registry<{ id: string; description?: string }>();
  registry.add(Key, { id: 'Key', description: `A namespace or base key: ${KEY_RULE}.` });
  registry.add(Description, { id: 'Description', description: `${DESCRIPTION_RULE}, counted in Unicode code points; valid Unicode text.` });
  registry.add(FailureEnvelope, { id: 'Failure', description: 'The failure envelope: every status but 200 carries it.' });
  for (const route of routes) {
    const id = pascal(route.name);
    registry.add(successEnvelope(route.output), { id: `${id}Success`, description: `The success envelope of ${route.name}.` });
    if (route.input.from === 'body') registry.add(route.input.schema, { id: `${id}Body` });
    // A query schema is converted only to read its parameters off it; several routes share the empty one.
    else if (hasFields(route.input.schema)) registry.add(route.input.schema, { id: `${id}${QUERY_SUFFIX}` });
  }
  registry.add(Namespace, { id: 'Namespace', description: 'A namespace of the organization.' });
  registry.add(Base, { id: 'Base', description: 'A base, in its namespace.' });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    unrepresentable: 'throw',
    uri: (id) => `#/components/schemas/${id}`,
    // Length rules that zod checks in refinements, which JSON Schema cannot see; JSON Schema counts code points too.
    override: ({ zodSchema, jsonSchema }) => {
      if (zodSchema === Description) Object.assign(jsonSchema, { minLength: LIMITS.descriptionMin, maxLength: LIMITS.descriptionMax });
      if (zodSchema === Key) Object.assign(jsonSchema, { minLength: LIMITS.keyMin, maxLength: LIMITS.keyMax });
    },
  });
  const components: Record<string, JsonObject> = {};
  for (const id of Object.keys(schemas).sort()) {
    // The document's jsonSchemaDialect names the dialect; an `$id` of a bare fragment is not valid in 2020-12.
    const { $schema: _dialect, $id: _id, ...schema } = schemas[id] as JsonObject;
    components[id] = schema;
  }
  return components;
}

/** The query parameters of a GET, one per property of its query schema. */
function queryParameters(schema: JsonObject): JsonObject[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({ name, in: 'query', required: required.has(name), schema: property }));
}

function operation(route: RouteSpec, schemas: Record<string, JsonObject>): JsonObject {
  const id = pascal(route.name);
  const op: JsonObject = {
    operationId: route.name,
    summary: route.summary,
    tags: [TAGS[route.name]],
  };
  if (route.extension) op[EXTENSION_FLAG] = true;
  if (!route.auth) op.security = [];
  const parameters: JsonObject[] = [];
  const query = schemas[`${id}${QUERY_SUFFIX}`];
  if (route.input.from === 'query' && query) parameters.push(...queryParameters(query));
  if (route.method !== 'GET') {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: 'Stripe\'s semantics: a repeat with the same key and body replays the first reply (kept at least 24 h); the same key with another body is 422.',
      schema: { type: 'string', minLength: 1 },
    });
  }
  if (parameters.length > 0) op.parameters = parameters;
  if (route.input.from === 'body') op.requestBody = { required: true, content: json(schemaRef(`${id}Body`)) };
  const success: JsonObject = { description: 'Success.', content: json(schemaRef(`${id}Success`)) };
  // kb serve tells of the token beside `data`, which stays the organization's name (docs/contract.md, Tokens).
  if (route.name === 'auth') {
    success.headers = {
      [TOKEN_SCOPE_HEADER]: {
        description: "The token's scope: full, or read-only (every write is 403).",
        required: true,
        schema: { type: 'string', enum: ['full', 'read-only'] },
      },
      [TOKEN_EXPIRES_HEADER]: {
        description: 'When the token expires (ISO 8601); absent when it never does.',
        required: false,
        schema: { type: 'string', format: 'date-time' },
      },
    };
  }
  const responses: JsonObject = { '200': success };
  for (const code of failureCodes(route)) responses[String(ERROR_STATUS[code])] = failureRef(code);
  op.responses = responses;
  return op;
}

/**
 * The OpenAPI 3.1 document of the kb API, generated from the zod schemas and the ROUTES table of src/api, so it
 * cannot drift from what the server validates. Deterministic: the same code gives the same document, byte for byte.
 */
/** GET /watch (extension): Server-Sent Events, described here since no zod schema of a JSON reply fits it. */
function watchPath(): JsonObject {
  const query = (name: string, description: string, schema: JsonObject) => ({ name, in: 'query', required: false, description, schema });
  return {
    get: {
      operationId: 'watch',
      summary: 'Stream the organization\'s changes as Server-Sent Events (extension)',
      description:
        'One event per committed change, in commit order: `id: CURSOR`, `event: change`, `data: {"type","kind","object"}` ' +
        '(type created, updated or deleted; kind namespace or base; object as the API returns it, a deleted one as it was). ' +
        'A comment line at least every 15 s. A reader too slow is disconnected and resumes with Last-Event-ID.',
      tags: ['service'],
      [EXTENSION_FLAG]: true,
      parameters: [
        query('namespace', 'That namespace and its bases only.', { type: 'string', pattern: KEY_PATTERN.source }),
        query('since', 'Resume after this cursor (as Last-Event-ID).', { type: 'string', pattern: CURSOR_PATTERN.source }),
        query('initial', 'First the current objects as created events, then `event: synced` with the cursor as its id.', { type: 'string', enum: ['true', 'false'] }),
        { name: 'Last-Event-ID', in: 'header', required: false, description: 'Resume after this cursor.', schema: { type: 'string', pattern: CURSOR_PATTERN.source } },
      ],
      responses: {
        '200': {
          description: 'The stream of changes.',
          headers: { [WATCH_CURSOR_HEADER]: { description: 'The cursor the first change of the stream follows.', schema: { type: 'string' } } },
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
        '400': failureRef('bad_request'),
        '401': failureRef('unauthorized'),
        '410': failureRef('gone'),
      },
    },
  };
}

export function buildOpenApiDocument(): JsonObject {
  const routes = Object.values(ROUTES) as RouteSpec[];
  const schemas = componentSchemas(routes);
  const paths: JsonObject = {};
  for (const route of routes) {
    paths[route.path] = { ...(paths[route.path] as JsonObject | undefined), [route.method.toLowerCase()]: operation(route, schemas) };
  }
  // The query schemas have become parameters; as components nothing would refer to them.
  for (const id of Object.keys(schemas)) if (id.endsWith(QUERY_SUFFIX)) delete schemas[id];
  paths[OPENAPI_PATH] = {
    get: {
      operationId: 'openapi',
      summary: 'This document (extension); served as it is, without the envelope',
      tags: ['service'],
      [EXTENSION_FLAG]: true,
      security: [],
      responses: {
        '200': { description: 'The OpenAPI 3.1 document.', content: json({ type: 'object', required: ['openapi'], properties: { openapi: { type: 'string' } } }) },
      },
    },
  };
  paths[WATCH_PATH] = watchPath();
  const responses: JsonObject = {};
  for (const failure of Object.values(FAILURES)) {
    responses[failure.name] = {
      description: failure.description,
      ...(failure.headers ? { headers: failure.headers } : {}),
      content: json(schemaRef('Failure')),
    };
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'kb knowledge-base management API',
      version: '1.0.0',
      description:
        'Namespaces and bases of an organization, over HTTP and JSON. Every reply but this document is an envelope: ' +
        '`{"success":true,"data":...}` with status 200, or `{"success":false,"message":...,"help":...}` with a 4xx or 5xx. ' +
        `Operations marked \`${EXTENSION_FLAG}\` are extensions of \`kb serve\` beyond the API document; a deployment ` +
        `without them answers 404. \`${UNMATCHED_FLAG}\` lists what a request that matches no operation gets.`,
    },
    servers: [
      {
        url: '{base_url}/v1',
        description: 'A kb deployment; `kb serve` listens on http://127.0.0.1:8080 unless told otherwise.',
        variables: { base_url: { default: 'http://127.0.0.1:8080' } },
      },
    ],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'base', description: 'Bases, each in a namespace.' },
      { name: 'namespaces', description: 'Namespaces of the organization.' },
      { name: 'service', description: 'The service itself.' },
      { name: 'test', description: 'Testing the token.' },
    ],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A token of an organization: `kb serve token create --org ORG`.' },
      },
      schemas,
      responses,
    },
    [UNMATCHED_FLAG]: {
      '404': failureRef('not_found'),
      '405': failureRef('method_not_allowed'),
    },
  };
}
