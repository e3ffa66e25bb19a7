import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { TestResponse } from './app.js';

// ajv-formats ships CommonJS; under NodeNext its default export arrives wrapped.
type AddFormats = typeof addFormatsModule.default;
const addFormats: AddFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

type Json = Record<string, any>;

/**
 * Holds every answer a test receives to the published OpenAPI document, the JSON a client
 * downloads from /openapi/v1.json: the status must be one the operation declares, each header
 * the document requires must be there and fit its schema, and the body must fit the declared
 * schema (whose objects refuse undeclared fields). The server checks its answers against its
 * own declarations too (src/http/reply-check.ts); this check proves the document says the same.
 */
export class DocumentCheck {
  readonly #document: Json;
  readonly #routes: { pattern: RegExp; path: string }[];
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true });
  readonly #validators = new Map<string, ValidateFunction>();

  constructor(document: Json) {
    this.#document = document;
    addFormats(this.#ajv);
    this.#ajv.addSchema(document, DOCUMENT_ID);
    this.#routes = Object.keys(document.paths as Json).map((path) => ({ pattern: templatePattern(path), path }));
  }

  /** What in `res` the document does not allow, or null; null too for what it does not describe. */
  problem(method: string, requestPath: string, res: TestResponse): string | null {
    const path = this.#documentPath(requestPath);
    const operation = path === null ? undefined : (this.#document.paths[path][method.toLowerCase()] as Json | undefined);
    if (!operation) return null;
    const where = `${method} ${path} answered ${res.status}`;
    const response = operation.responses[String(res.status)] as Json | undefined;
    if (!response) return `${where}, a status the document does not declare`;
    const headerProblem = this.#headerProblem(response, res);
    if (headerProblem) return `${where}: ${headerProblem}`;
    if (!response.content?.['application/json']) return null;
    const validate = this.#bodyValidator(path!, method.toLowerCase(), res.status);
    if (validate(res.body)) return null;
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
    return `${where} with a body the document does not allow: ${errors.join('; ')}`;
  }

  /** The document's path template for a request path under /api/v1, or null. */
  #documentPath(requestPath: string): string | null {
    const pathname = requestPath.split('?')[0]!;
    if (!pathname.startsWith(API_PREFIX)) return null;
    const relative = pathname.slice(API_PREFIX.length);
    return this.#routes.find((route) => route.pattern.test(relative))?.path ?? null;
  }

  #headerProblem(response: Json, res: TestResponse): string | null {
    for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
      const value = res.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) return `the required header ${name} is missing`;
        continue;
      }
      const validate = this.#ajv.compile(header.schema as Json);
      if (!validate(headerValue(String(value), header.schema as Json))) return `header ${name} (${String(value)}) does not fit its schema`;
    }
    return null;
  }

  #bodyValidator(path: string, method: string, status: number): ValidateFunction {
    const pointer = ['paths', path, method, 'responses', String(status), 'content', 'application/json', 'schema'].map(escapePointer).join('/');
    let validate = this.#validators.get(pointer);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: `${DOCUMENT_ID}#/${pointer}` });
      this.#validators.set(pointer, validate);
    }
    return validate;
  }
}

const DOCUMENT_ID = 'https://daybook.local/openapi/v1.json';
const API_PREFIX = '/api/v1';

/** `/invoices/{id}/send` as a pattern matching `/invoices/3f2…/send`. */
function templatePattern(template: string): RegExp {
  const literal = (part: string) => part.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');
  return new RegExp(`^${template.split(/\{[^}]+\}/).map(literal).join('[^/]+')}$`);
}

/** A header arrives as text; an integer header is checked as the number it spells. */
function headerValue(text: string, schema: Json): unknown {
  return schema.type === 'integer' && /^-?\d+$/.test(text) ? Number(text) : text;
}

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** One checker per distinct document (apps differ only in their servers), built once. */
const checkers = new Map<string, DocumentCheck>();

export function documentCheckFor(document: Json): DocumentCheck {
  const key = JSON.stringify({ paths: document.paths, components: document.components });
  let checker = checkers.get(key);
  if (!checker) {
    checker = new DocumentCheck(document);
    checkers.set(key, checker);
  }
  return checker;
}
