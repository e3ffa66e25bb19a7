import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats ships CommonJS; under NodeNext its default export arrives wrapped.
type AddFormats = typeof addFormatsModule.default;
const addFormats: AddFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

type Json = Record<string, any>;

const DOCUMENT_ID = 'https://daybook.local/openapi/v1.json';

/**
 * The schemas of the published OpenAPI document as a client or a tester reads them: ajv's JSON
 * Schema 2020-12 (OpenAPI 3.1's dialect) with its formats, `$ref`s resolved inside the document,
 * as test/support/document-check.ts reads them for answers.
 */
export class DocumentSchemas {
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true });
  readonly #validators = new Map<string, ValidateFunction>();

  constructor(readonly document: Json) {
    addFormats(this.#ajv);
    this.#ajv.addSchema(document, DOCUMENT_ID);
  }

  /** The validator of the schema at `path` in the document (`['paths', '/expenses', 'post', …]`). */
  at(path: readonly (string | number)[]): ValidateFunction {
    const pointer = path.map((token) => String(token).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    let validate = this.#validators.get(pointer);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: `${DOCUMENT_ID}#/${pointer}` });
      this.#validators.set(pointer, validate);
    }
    return validate;
  }

  /** Why `value` does not fit the schema at `path`, or null. */
  problem(path: readonly (string | number)[], value: unknown): string | null {
    const validate = this.at(path);
    if (validate(value)) return null;
    return (validate.errors ?? []).map((error) => `${error.instancePath || '(value)'} ${error.message ?? ''}`).join('; ');
  }
}

/** Every `pattern` in the document, with where it stands. */
export function documentPatterns(document: Json): { pattern: string; at: string }[] {
  const found: { pattern: string; at: string }[] = [];
  const walk = (value: unknown, at: string): void => {
    if (Array.isArray(value)) value.forEach((item, index) => walk(item, `${at}/${index}`));
    else if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        // Example values are data, not schemas.
        if (key === 'examples' || key === 'example') continue;
        if (key === 'pattern' && typeof child === 'string') found.push({ pattern: child, at });
        else walk(child, `${at}/${key}`);
      }
    }
  };
  walk(document, '');
  return found;
}
