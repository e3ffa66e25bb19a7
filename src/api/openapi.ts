import type { TObject, TSchema } from '@sinclair/typebox';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import { ErrorBody } from './schemas/common.js';
import { type Example, examplesOf, type OperationExamples } from './schemas/examples.js';
import type { Operation } from '../http/operation.js';
import { COMMON_ERROR_CODES } from '../http/reply-check.js';

/**
 * The OpenAPI 3.1 document of /api/v1, built at start-up from the same TypeBox schemas that
 * validate each request and describe each answer, so the document cannot drift from the code.
 * A schema with a `title` that more than one place uses (Money, Error, ...) becomes a reusable
 * component; everything else stays inline. Each operation carries the examples of
 * src/api/schemas/examples.ts: its typical parameters, request bodies and answers.
 */


type Json = Record<string, unknown>;

/** A plain JSON copy of a TypeBox schema (its symbol-keyed bookkeeping dropped). */
function plain(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}

/** Collects titled schemas and replaces each use with a $ref to components.schemas. */
class Components {
  readonly schemas: Record<string, Json> = {};
  readonly #byTitle = new Map<string, string>();

  /** The schema, with every titled object inside it (itself included) moved to a component. */
  use(schema: Json): Json {
    const title = typeof schema.title === 'string' ? schema.title : undefined;
    const inner = this.#walk(schema);
    if (title === undefined) return inner;
    const text = JSON.stringify(inner);
    const seen = this.#byTitle.get(title);
    if (seen !== undefined && seen !== text) throw new Error(`openapi: two different schemas are titled ${title}`);
    this.#byTitle.set(title, text);
    this.schemas[title] = inner;
    return { $ref: `#/components/schemas/${title}` };
  }

  #walk(schema: Json): Json {
    const out: Json = {};
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'properties' && value && typeof value === 'object') {
        out[key] = Object.fromEntries(Object.entries(value as Record<string, Json>).map(([name, child]) => [name, this.use(child)]));
      } else if ((key === 'items' || key === 'additionalProperties' || key === 'not') && value && typeof value === 'object' && !Array.isArray(value)) {
        out[key] = this.use(value as Json);
      } else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) {
        out[key] = (value as Json[]).map((child) => this.use(child));
      } else {
        out[key] = value;
      }
    }
    return out;
  }
}

/** `/invoices/:id/send` as OpenAPI writes it: `/invoices/{id}/send`. */
export function openApiPath(routerPath: string): string {
  return routerPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function parameters(where: 'path' | 'query', schema: TObject, examples: OperationExamples['parameters'], components: Components): Json[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, property]) => {
    const json = plain(property);
    const description = typeof json.description === 'string' ? json.description : undefined;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(description ? { description } : {}),
      schema: components.use(json),
      ...(examples && Object.hasOwn(examples, name) ? { example: examples[name] } : {}),
    };
  });
}

/** A media type's `examples`: named Example Objects. */
function examplesField(examples: Readonly<Record<string, Example>> | undefined): Json {
  return examples ? { examples: Object.fromEntries(Object.entries(examples).map(([name, example]) => [name, { summary: example.summary, value: example.value }])) } : {};
}

const RATE_LIMIT_HEADERS = {
  'ratelimit-limit': { description: "requests the key's budget allows in the current window", schema: { type: 'integer' } },
  'ratelimit-remaining': { description: 'requests left in the current window', schema: { type: 'integer' } },
  'ratelimit-reset': { description: 'when the window ends, in Unix seconds', schema: { type: 'integer' } },
};
const REQUEST_ID_HEADER = { 'x-request-id': { description: 'the id of this request, also in every error body', required: true, schema: { type: 'string' } } };
const RETRY_AFTER_HEADER = { 'retry-after': { description: 'whole seconds until the rate window ends', required: true, schema: { type: 'integer', minimum: 1 } } };

/**
 * The Error body, its code narrowed to the codes this status can carry for this operation. The
 * narrowing names message and requestId too: a checker that closes every object it reads (as
 * Redocly's example check does) reads each branch of the allOf alone.
 */
function errorSchema(codes: readonly ErrorCode[], components: Components): Json {
  const narrowed = { code: { type: 'string', enum: [...codes] }, message: { type: 'string' }, requestId: { type: 'string' } };
  return {
    allOf: [components.use(plain(ErrorBody)), { type: 'object', properties: { error: { type: 'object', properties: narrowed } } }],
  };
}

function errorResponses(operation: Operation, examples: OperationExamples | undefined, components: Components): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  // Any POST may meet an Idempotency-Key clash (spec, Idempotency rule 3), as reply-check.ts holds.
  const idempotency: ErrorCode[] = operation.method === 'POST' ? ['conflict'] : [];
  for (const code of [...COMMON_ERROR_CODES, ...idempotency, ...operation.errors]) {
    const status = ERROR_STATUS[code];
    const codes = byStatus.get(status) ?? [];
    if (!codes.includes(code)) codes.push(code);
    byStatus.set(status, codes);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [
      String(status),
      {
        description: `error: ${codes.join(', ')}`,
        headers: status === ERROR_STATUS.rate_limited ? { ...REQUEST_ID_HEADER, ...RETRY_AFTER_HEADER } : REQUEST_ID_HEADER,
        content: { 'application/json': { schema: errorSchema(codes, components), ...examplesField(examples?.responses[status]) } },
      },
    ]),
  );
}

/** A POST whose body has no required field may be sent without one (spec, "Rules that apply to every request", rule 3). */
function requestBody(operation: Operation, examples: OperationExamples | undefined, components: Components): Json {
  const required = (operation.body.required ?? []).length > 0;
  return { required, content: { 'application/json': { schema: components.use(plain(operation.body)), ...examplesField(examples?.requests) } } };
}

function operationObject(operation: Operation, components: Components): Json {
  const examples = examplesOf(operation.id);
  const success = Object.fromEntries(
    Object.entries(operation.responses).map(([status, response]) => [
      status,
      {
        description: response.description,
        headers: { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS },
        content: { 'application/json': { schema: components.use(plain(response.schema)), ...examplesField(examples?.responses[Number(status)]) } },
      },
    ]),
  );
  const idempotencyKey =
    operation.method === 'POST'
      ? [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description: 'a key of your choosing: printable ASCII, at most 200 characters; a retry with the same key and inputs within 24 hours replays the first answer',
            schema: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[\\x20-\\x7e]+$' },
          },
        ]
      : [];
  return {
    operationId: operation.id,
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    tags: [operation.id.split('.')[0]],
    'x-permission': operation.permission,
    parameters: [
      ...parameters('path', operation.params, examples?.parameters, components),
      ...parameters('query', operation.query, examples?.parameters, components),
      ...idempotencyKey,
    ],
    ...(operation.method === 'POST' ? { requestBody: requestBody(operation, examples, components) } : {}),
    responses: { ...success, ...errorResponses(operation, examples, components) },
  };
}

/** The whole document for `operations`, served at /openapi/v1.json. */
export function buildOpenApiDocument(operations: readonly Operation[], options: { siteUrl: string; version: string }): Json {
  const components = new Components();
  const paths: Record<string, Record<string, Json>> = {};
  for (const operation of operations) {
    const path = openApiPath(operation.path);
    paths[path] = { ...paths[path], [operation.method.toLowerCase()]: operationObject(operation, components) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Daybook bookkeeping API',
      version: options.version,
      description: 'Double-entry books for small firms: customers, vendors, expenses, invoices, a review queue, Today and five reports. Money is whole cents in strings.',
    },
    servers: [{ url: `${options.siteUrl}/api/v1` }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'an API key made with `daybook key create`' } },
      schemas: components.schemas,
    },
  };
}
