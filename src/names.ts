import { validationFailed } from './errors.js';

/**
 * One rule for every name Daybook stores (tenants, businesses, keys, customers, vendors),
 * whether it arrives through the API or the admin command: 1 to 200 characters, at least one
 * that shows (not white space, not invisible), and none that changes how text around it is
 * shown: control characters (C0 and C1: they break logs, CSV and terminals), line and
 * paragraph separators, and the bidirectional embedding, override and isolate marks (they can
 * make a name read as another). Lengths count characters (code points), as the schemas and
 * SQLite do.
 *
 * Vendors are matched by their exact name (the spec), so a vendor name also refuses the
 * characters that show as nothing: a zero-width space would make a second vendor that reads
 * as the first. Customers are matched by nameKey, which drops those characters instead.
 */

export const MAX_NAME_CHARS = 200;

/** The bidirectional embedding, override and isolate marks, as a class body (for the `u` flag). */
export const BIDI_CONTROLS = '\\u202a-\\u202e\\u2066-\\u2069';

/** What a name may not contain, as a regular-expression class body (for the `u` flag). */
const FORBIDDEN = `\\p{Cc}\\p{Cs}\\u2028\\u2029${BIDI_CONTROLS}`;

/**
 * Characters that show as nothing: zero-width space, non-joiner and joiner, word joiner,
 * U+FEFF, soft hyphen, variation selectors, Hangul fillers, tag characters and the rest of
 * Unicode's Default_Ignorable_Code_Point (the bidirectional marks among them).
 */
const INVISIBLE = '\\p{Default_Ignorable_Code_Point}';

/** White space, and the Braille blank, which shows as a space and is a favourite blank name. */
const BLANK = '\\s\\u2800';

/** The rule as a JSON-Schema pattern (the API's schemas use it as is; ajv compiles patterns with `u`). */
export const NAME_PATTERN = `^[^${FORBIDDEN}]*[^${BLANK}${INVISIBLE}${FORBIDDEN}][^${FORBIDDEN}]*$`;

export const NAME_RULE = 'must not be blank or contain control characters';

const NAME = new RegExp(NAME_PATTERN, 'u');

/**
 * The invisible characters an emoji needs, which a vendor name keeps: a joiner between two
 * pictographs (👩‍👩‍👧, after a skin tone or VS-16 too), a variation selector right after a
 * pictograph (☕️), VS-16 in a keycap (1️⃣). Anywhere else they only hide.
 */
const EMOJI_PART =
  '(?<=\\p{Extended_Pictographic}[\\ufe0f\\u{1f3fb}-\\u{1f3ff}]?)\\u200d(?=\\p{Extended_Pictographic})' +
  '|(?<=\\p{Extended_Pictographic})[\\ufe0e\\ufe0f]' +
  '|(?<=[0-9#*])\\ufe0f(?=\\u20e3)';

/** No invisible character outside an emoji (`.` stops at a line break, which the name rule refuses anyway). */
const SHOWS_ALL = `(?!.*(?!${EMOJI_PART})[${INVISIBLE}])`;

/** A vendor name as a JSON-Schema pattern: the name rule, and no invisible character outside an emoji. */
export const VENDOR_NAME_PATTERN = `^${SHOWS_ALL}${NAME_PATTERN.slice(1)}`;

/** The API's one sentence for both rules (a schema pattern has one message). */
export const VENDOR_NAME_RULE = 'must not be blank or contain control or invisible characters';

const INVISIBLE_RULE = 'must not contain invisible characters (such as a zero-width space or a soft hyphen)';

const ALL_SHOWN = new RegExp(`^${SHOWS_ALL}`, 'u');

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

/** Why `value` is not a valid vendor name, or null when it is one. */
export function vendorNameProblem(value: string): string | null {
  return nameProblem(value) ?? (ALL_SHOWN.test(value) ? null : INVISIBLE_RULE);
}

/** Refuses a vendor name that breaks the rule with validation_failed naming `field`. */
export function assertVendorName(field: string, value: string): void {
  const problem = vendorNameProblem(value);
  if (problem) throw validationFailed(field, problem);
}

/**
 * The form names are compared and searched in: NFC, then case-folded for any script (SQLite's
 * NOCASE folds ASCII only). Upper-casing first folds what lower-casing alone keeps apart
 * (ß and SS both become ss), and the Greek final sigma becomes σ, since lower-casing picks ς
 * or σ by position in the word and a search text ends where the name does not. Bank statement
 * rows and the categoriser compare text in this form; names are compared by nameKey.
 */
export function foldName(name: string): string {
  // NFC again at the end: case mapping can leave decomposed characters (ΐ becomes three).
  return name.normalize('NFC').toLocaleUpperCase('en-US').toLocaleLowerCase('en-US').replace(/ς/g, 'σ').normalize('NFC');
}

const INVISIBLES = new RegExp(`[${INVISIBLE}]`, 'gu');
const BLANK_RUNS = new RegExp(`[${BLANK}]+`, 'gu');

/**
 * Text as it reads: NFKC (fullwidth letters, ligatures, and the no-break and other fixed-width
 * spaces become their plain forms), invisible characters dropped, every run of white space one
 * space.
 */
function readForm(text: string): string {
  return text.normalize('NFKC').replace(INVISIBLES, '').replace(BLANK_RUNS, ' ');
}

/**
 * Case-folded (foldName), then NFKC again, since case mapping can leave a compatibility form
 * behind. ß becomes ss: foldName lower-cases capital ẞ to ß without upper-casing that first.
 */
function caseFold(text: string): string {
  return foldName(text).replace(/ß/g, 'ss').normalize('NFKC');
}

/**
 * The form a name is compared, ordered and searched in, stored beside each customer and vendor
 * name as name_key: names that read alike have one key. Customers are matched by it; vendors
 * by their exact name, the key only ordering and searching them. Cyrillic and Greek letters
 * that look Latin keep their own keys (NFKC does not fold across scripts).
 */
export function nameKey(name: string): string {
  return caseFold(readForm(name).trim());
}

/** A search text in the form of name_key, so it finds what it reads as; not trimmed, since it matches inside a name. */
export function searchForm(text: string): string {
  return caseFold(readForm(text));
}

const EDGE_BLANKS = new RegExp(`^[${BLANK}${INVISIBLE}]+|[${BLANK}${INVISIBLE}]+$`, 'gu');

/** The name without the white space and invisible characters at either end, which only hide. */
export function trimName(name: string): string {
  return name.replace(EDGE_BLANKS, '');
}
