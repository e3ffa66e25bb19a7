import type { TObject, TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ApiError, validationFailed } from '../errors.js';

// ajv-formats ships CommonJS; under NodeNext its default export arrives wrapped.
type AddFormats = typeof addFormatsModule.default;
const addFormats: AddFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

/** Where a value came from: its fields are named bare (body and query) in messages. */
export type Source = 'body' | 'query' | 'path';

const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, coerceTypes: false, useDefaults: false, validateFormats: true });
addFormats(ajv, ['date', 'uuid', 'email']);
ajv.addKeyword({ keyword: 'x-error', schemaType: 'string' });

const compiled = new WeakMap<TSchema, ValidateFunction>();

function validatorFor(schema: TSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/**
 * Compiles `schema` now rather than at its first use. Validators are otherwise compiled on first
 * use, which keeps them off the server's start (a third of it); test/unit/operations.test.ts
 * compiles every published schema, so a broken one fails the tests rather than a request.
 */
export function precompile(schema: TSchema): void {
  validatorFor(schema);
}

/**
 * Checks `value` against `schema`; on failure throws validation_failed whose message starts
 * with the failing field path (e.g. `lines.0.quantity: ...`). Unknown fields are listed by name.
 */
export function validate<T>(schema: TSchema, value: unknown, source: Source): T {
  const check = validatorFor(schema);
  if (check(value)) return lowercaseUuids(schema, value) as T;
  throw errorFrom(check.errors ?? [], source);
}

/** Why `value` does not match `schema` (a field path and the problem), or null when it does. */
export function schemaProblem(schema: TSchema, value: unknown): string | null {
  const check = validatorFor(schema);
  return check(value) ? null : errorFrom(check.errors ?? [], 'body').message;
}

/**
 * A query string carries only text. Where the operation's schema declares an integer or a
 * boolean, the exact text forms (`42`, `true`, `false`) become that type before validation;
 * anything else stays text and fails validation with the field's name. Bodies are never
 * coerced: a JSON number sent for a digit string is refused.
 */
export function coerceQuery(schema: TObject, query: Record<string, string>): Record<string, unknown> {
  const coerced: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [name, text] of Object.entries(query)) {
    const field = Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    coerced[name] = field ? fromQueryText(field, text) : text;
  }
  return coerced;
}

const QUERY_INTEGER = /^-?(0|[1-9][0-9]*)$/;
const QUERY_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/**
 * Integers and numbers keep their exact text form (no `+`, leading zeros, exponent or hex).
 * A value beyond the safe range still converts, to a number past the declared maximum, so
 * its message names the limit rather than the type. `-0` is 0.
 */
function fromQueryText(field: TSchema, text: string): unknown {
  if (field.type === 'integer' && QUERY_INTEGER.test(text)) return Number(text) || 0;
  if (field.type === 'number' && QUERY_NUMBER.test(text)) return Number(text) || 0;
  if (field.type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/**
 * UUIDs are case-insensitive on input (some platforms print them in upper case); ours are
 * stored in lower case, so every uuid-format field is lowered once, here, after validation.
 */
function lowercaseUuids(schema: TSchema, value: unknown): unknown {
  if (Array.isArray(schema.anyOf)) {
    const branch = (schema.anyOf as TSchema[]).find((candidate) => candidate.type === jsonType(value));
    return branch ? lowercaseUuids(branch, value) : value;
  }
  if (schema.format === 'uuid' && typeof value === 'string') return value.toLowerCase();
  if (Array.isArray(value) && schema.items) return value.map((item) => lowercaseUuids(schema.items as TSchema, item));
  if (value && typeof value === 'object' && schema.properties) {
    const properties = schema.properties as Record<string, TSchema>;
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [name, field] of Object.entries(value as Record<string, unknown>)) {
      out[name] = Object.hasOwn(properties, name) ? lowercaseUuids(properties[name]!, field) : field;
    }
    return out;
  }
  return value;
}

/** The JSON Schema type of a parsed JSON value (integers as "integer" only when a branch asks). */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function errorFrom(errors: ErrorObject[], source: Source): ApiError {
  const unknown = errors.filter((e) => e.keyword === 'additionalProperties');
  if (unknown.length > 0) {
    const names = unknown.map((e) => joinPath(e.instancePath, String(e.params.additionalProperty)));
    const unique = [...new Set(names)];
    return validationFailed(unique.join(', '), unique.length === 1 ? 'is not a recognized field' : 'are not recognized fields');
  }
  const first = mostUseful(errors);
  if (!first) return validationFailed(source, 'is not valid');
  if (first.keyword === 'required') {
    return validationFailed(joinPath(first.instancePath, String(first.params.missingProperty)), 'is required');
  }
  const path = joinPath(first.instancePath) || source;
  return validationFailed(path, describe(first));
}

/** Prefer an error about a concrete field over the bookkeeping ajv adds around unions. */
function mostUseful(errors: ErrorObject[]): ErrorObject | undefined {
  return errors.find((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf' && e.keyword !== 'if') ?? errors[0];
}

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return params.type === 'boolean' ? 'must be true or false' : `must be ${article(String(params.type))}`;
    case 'maxLength':
      return `must be at most ${String(params.limit)} characters`;
    case 'minLength':
      return Number(params.limit) === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters`;
    case 'pattern':
      return typeof error.parentSchema?.['x-error'] === 'string' ? error.parentSchema['x-error'] : 'has an invalid format';
    case 'format':
      return FORMAT_MESSAGES[String(params.format)] ?? `must be a valid ${String(params.format)}`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${String(params.allowedValue)}`;
    case 'minimum':
      return `must be at least ${String(params.limit)}`;
    case 'maximum':
      return `must be at most ${String(params.limit)}`;
    case 'minItems':
      return `must have at least ${String(params.limit)} item${Number(params.limit) === 1 ? '' : 's'}`;
    case 'maxItems':
      return `must have at most ${String(params.limit)} items`;
    default:
      return error.message ?? 'is not valid';
  }
}

const FORMAT_MESSAGES: Record<string, string> = {
  date: 'must be a date YYYY-MM-DD',
  uuid: 'must be a UUID',
  email: 'must be an email address',
};

function article(type: string): string {
  if (type === 'object') return 'a JSON object';
  if (type === 'array') return 'an array';
  if (type === 'integer') return 'an integer';
  return `a ${type}`;
}

/** `/lines/0/quantity` + `foo` -> `lines.0.quantity.foo` (JSON Pointer unescaped). */
function joinPath(instancePath: string, ...more: string[]): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  return [...parts, ...more].join('.');
}
