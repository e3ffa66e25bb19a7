import { type Static, type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../errors.js';
import { CURRENCIES } from '../money.js';

/**
 * Building blocks for request and response schemas. One TypeBox schema gives the ajv
 * validator, the TypeScript type and the OpenAPI component. `x-error` is the sentence a
 * validation_failed message uses when a pattern does not match.
 */

/** An object that refuses fields it does not define (spec rule 5). */
export function Strict<T extends TProperties>(properties: T, options: { description?: string; $id?: string } = {}): TObject<T> {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

export const Uuid = Type.String({ format: 'uuid', description: 'UUID' });
export const IsoDate = Type.String({ format: 'date', description: 'calendar date YYYY-MM-DD' });
export const DigitString = Type.String({
  pattern: '^[0-9]{1,30}$',
  'x-error': 'must be a string of digits',
  description: 'whole cents as a digit string',
});
/** Report amounts may be negative (a net loss, a contra balance). */
export const SignedDigitString = Type.String({ pattern: '^-?[0-9]+$', description: 'whole cents, optionally negative' });
export const CurrencyCode = Type.Union(
  CURRENCIES.map((c) => Type.Literal(c)),
  { description: 'three-letter currency code' },
);
export const BooleanText = Type.Union([Type.Literal('true'), Type.Literal('false')]);

export function Text(maxLength: number, options: { minLength?: number; description?: string } = {}) {
  return Type.String({ maxLength, minLength: options.minLength ?? 0, ...(options.description ? { description: options.description } : {}) });
}

/** A name: 1 to `maxLength` characters, not blank, no control characters. */
export function Name(maxLength = 200, description?: string) {
  return Type.String({
    minLength: 1,
    maxLength,
    pattern: '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$',
    'x-error': 'must not be blank or contain control characters',
    ...(description ? { description } : {}),
  });
}

export function Enum<T extends string>(values: readonly T[], description?: string) {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );
}

export const MoneySchema = Strict(
  {
    cents: SignedDigitString,
    formatted: Type.String({ description: 'display text; must not be parsed' }),
    currency: CurrencyCode,
  },
  { $id: 'Money' },
);

export const ErrorBody = Strict(
  {
    error: Strict({
      code: Enum(ERROR_CODES),
      message: Type.String(),
      requestId: Type.String(),
    }),
  },
  { $id: 'Error' },
);

/** Page size for cursor-paged lists and the review queue: 1 to 100, default 50. */
export const LimitParam = Type.String({ pattern: '^(100|[1-9][0-9]?)$', 'x-error': 'must be an integer from 1 to 100' });


export type { Static, TSchema, TObject };
