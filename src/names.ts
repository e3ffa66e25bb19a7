import { validationFailed } from './errors.js';

/**
 * One rule for every name Daybook stores (tenants, businesses, keys, customers, vendors),
 * whether it arrives through the API or the admin command: 1 to 200 characters, at least one
 * that is not white space, and none that changes how text around it is shown: control
 * characters (C0 and C1: they break logs, CSV and terminals), line and paragraph separators,
 * and the bidirectional embedding, override and isolate marks (they can make a name read as
 * another). Lengths count characters (code points), as the schemas and SQLite do.
 */

export const MAX_NAME_CHARS = 200;

/** What a name may not contain, as a regular-expression class body (for the `u` flag). */
const FORBIDDEN = '\\p{Cc}\\p{Cs}\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';

/** The rule as a JSON-Schema pattern (the API's schemas use it as is; ajv compiles patterns with `u`). */
export const NAME_PATTERN = `^[^${FORBIDDEN}]*[^\\s${FORBIDDEN}][^${FORBIDDEN}]*$`;

export const NAME_RULE = 'must not be blank or contain control characters';

const NAME = new RegExp(NAME_PATTERN, 'u');

/** Characters that must never reach a terminal raw (the CLI escapes them in what it echoes). */
export const UNSAFE_TO_SHOW = new RegExp(`[${FORBIDDEN}]`, 'gu');

/** Why `value` is not a valid name, or null when it is one. */
export function nameProblem(value: string, maxChars = MAX_NAME_CHARS): string | null {
  if (value.length === 0) return 'must not be empty';
  if ([...value].length > maxChars) return `must be at most ${maxChars} characters`;
  if (!NAME.test(value)) return NAME_RULE;
  return null;
}

/** Refuses a name that breaks the rule with validation_failed naming `field`. */
export function assertName(field: string, value: string, maxChars = MAX_NAME_CHARS): void {
  const problem = nameProblem(value, maxChars);
  if (problem) throw validationFailed(field, problem);
}

/**
 * The form names are compared and searched in: NFC, then case-folded for any script (SQLite's
 * NOCASE folds ASCII only). Upper-casing first folds what lower-casing alone keeps apart
 * (ß and SS both become ss), and the Greek final sigma becomes σ, since lower-casing picks ς
 * or σ by position in the word and a search text ends where the name does not. Stored beside
 * each customer and vendor name as name_key.
 */
export function foldName(name: string): string {
  // NFC again at the end: case mapping can leave decomposed characters (ΐ becomes three).
  return name.normalize('NFC').toLocaleUpperCase('en-US').toLocaleLowerCase('en-US').replace(/ς/g, 'σ').normalize('NFC');
}
