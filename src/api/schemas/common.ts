import { type Static, type TObject, type TProperties, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../../errors.js';
import { CURRENCIES } from '../../money.js';
import { MAX_NAME_CHARS, NAME_PATTERN, NAME_RULE, VENDOR_NAME_PATTERN, VENDOR_NAME_RULE } from '../../names.js';
import { TEXT_PATTERN, TEXT_RULE } from '../../text.js';

/**
 * Building blocks for request and response schemas. One TypeBox schema gives the ajv
 * validator, the TypeScript type and the OpenAPI component. `x-error` is the sentence a
 * validation_failed message uses when a pattern does not match.
 */

/**
 * An object that refuses fields it does not define (spec rule 5). A `title` names a schema
 * the published contract shows as a reusable component (Money, Customer, ...); not `$id`,
 * which ajv would treat as an identity to resolve and refuse to meet twice.
 */
export function Strict<T extends TProperties>(properties: T, options: { description?: string; title?: string } = {}): TObject<T> {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

export const Uuid = Type.String({ format: 'uuid', description: 'UUID' });

/** `entityId` (spec, Endpoints: the entity rule), said where a client generator shows it. */
export const EntityId = Type.String({
  format: 'uuid',
  description:
    'the business (a UUID). Required when the key reaches more than one business: omitting it then is 422 validation_failed (`entityId: required when the key can reach more than one business`); it may be omitted only when the key reaches exactly one. A business the key was not given is 403 entity_not_allowed; an id that is no business of the account is 404 not_found.',
});

export const IsoDate = Type.String({ format: 'date', description: 'calendar date YYYY-MM-DD', title: 'Date' });

/**
 * A closed list of strings, emitted as `{type: "string", enum: [...]}` (TypeBox's own union of
 * literals would be an anyOf of consts: clumsy in the published contract and in messages).
 */
export function StringEnum<const T extends string>(values: readonly T[], options: { description?: string; title?: string } = {}): TUnsafe<T> {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
}

/** Whole cents in a request: digits only, never a JSON number (spec rule 8). */
export const DigitString = Type.String({
  pattern: '^[0-9]{1,30}$',
  'x-error': 'must be a string of digits',
  description: 'whole cents as a digit string',
  title: 'Cents',
});

/**
 * Whole cents that must be more than zero (an expense, a payment): a Cents string with a digit
 * other than 0 in it. Two patterns, so each refusal keeps its own message ("abc" is no digit
 * string, "0" is not greater than zero); ajv checks the allOf first.
 */
export const PositiveCents = Type.Unsafe<string>({
  type: 'string',
  allOf: [DigitString],
  pattern: '^0*[1-9][0-9]*$',
  'x-error': 'must be greater than zero',
  description: 'whole cents as a digit string, greater than zero',
  title: 'PositiveCents',
});

/**
 * An email address as the server checks it: a dot-atom local part, `@`, and a domain of two or
 * more labels of letters, digits and inner hyphens (`0@com` is refused). The pattern is the one
 * ajv-formats checks `format: email` with, written without its `i` flag, so the published
 * document and the server's check are one rule; `format: email` alone would promise RFC 5321's
 * looser mailbox.
 */
export const EMAIL_PATTERN =
  "^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\\.)+[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$";

export function EmailAddress(maxLength: number) {
  return Type.String({
    maxLength,
    pattern: EMAIL_PATTERN,
    'x-error': 'must be an email address',
    description: 'an email address: local part, @, and a domain with at least one dot',
  });
}

export const CurrencyCode = StringEnum(CURRENCIES, { description: 'three-letter currency code', title: 'CurrencyCode' });

/** Free text (a description, a memo, an address line): no control characters but newline and tab, no bidi overrides (src/text.ts). */
export function Text(maxLength: number, options: { minLength?: number; description?: string } = {}) {
  return Type.String({
    maxLength,
    minLength: options.minLength ?? 0,
    pattern: TEXT_PATTERN,
    'x-error': TEXT_RULE,
    ...(options.description ? { description: options.description } : {}),
  });
}

/** A name: 1 to `maxLength` characters, not blank, no control characters (src/names.ts). */
export function Name(maxLength = MAX_NAME_CHARS, description?: string) {
  return Type.String({
    minLength: 1,
    maxLength,
    pattern: NAME_PATTERN,
    'x-error': NAME_RULE,
    ...(description ? { description } : {}),
  });
}

/** A vendor's name: the name rule, and no invisible characters, since vendors are matched exactly (src/names.ts). */
export function VendorName(description?: string) {
  return Type.String({
    minLength: 1,
    maxLength: MAX_NAME_CHARS,
    pattern: VENDOR_NAME_PATTERN,
    'x-error': VENDOR_NAME_RULE,
    ...(description ? { description } : {}),
  });
}

/** A money object (spec "Money object"): cents are whole and never negative. */
export const Money = Strict(
  {
    cents: Type.String({ pattern: '^[0-9]+$', description: 'whole cents, digits only, in the currency beside it' }),
    formatted: Type.String({ description: 'display text; must not be parsed' }),
    currency: CurrencyCode,
  },
  { title: 'Money' },
);

/** Report figures only (a net loss, a contra balance): the one place cents may be negative, written `-123`. */
export const SignedMoney = Strict(
  {
    cents: Type.String({ pattern: '^-?[0-9]+$', description: 'whole cents, negative with a leading minus' }),
    formatted: Type.String({ description: 'display text; must not be parsed' }),
    currency: CurrencyCode,
  },
  { title: 'SignedMoney' },
);

export const ErrorBody = Strict(
  {
    error: Strict({
      code: StringEnum(ERROR_CODES),
      message: Type.String(),
      requestId: Type.String(),
    }),
  },
  { title: 'Error' },
);

/** Page size for cursor-paged lists and the review queue: 1 to 100 (spec Limits). */
export const DEFAULT_PAGE_SIZE = 50;
export const LimitParam = Type.Integer({ minimum: 1, maximum: 100, default: DEFAULT_PAGE_SIZE, description: 'page size, 1 to 100, default 50' });

/**
 * The opaque cursor a list returned as nextCursor. It carries the last row's sort position, a
 * name_key: under NFKC one character can become 18 (U+FDFA, 33 bytes of UTF-8), so a name of
 * 200 characters can key to 6,600 bytes, about 9,000 characters of cursor. The bound leaves
 * room for that.
 */
export const CursorParam = Type.String({ minLength: 1, maxLength: 16384, description: 'nextCursor from the previous page, passed back unchanged' });

/** Free-text search: matched anywhere, case-insensitively; `%` and `_` are wildcards. */
export const SearchParam = Text(200, { description: 'matched anywhere, case-insensitively; % and _ are wildcards' });

/** A value that is always present and may be null (the spec's "string or null"). */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** `true` or `false` in a query string, read as a boolean. */
export const BooleanParam = Type.Boolean({ description: 'true or false' });

/** The query of an account-wide list ordered by name (GET /customers, GET /vendors). */
export const NameListQuery = Strict({
  search: Type.Optional(SearchParam),
  includeArchived: Type.Optional(BooleanParam),
  cursor: Type.Optional(CursorParam),
  limit: Type.Optional(LimitParam),
});

export type { Static, TSchema, TObject };
