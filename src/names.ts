import { validationFailed } from './errors.js';

/**
 * One rule for every name Daybook stores (tenants, businesses, keys, customers, vendors),
 * whether it arrives through the API or the admin command: 1 to 200 characters, at least one
 * that shows (not white space, not invisible), and none that changes how text around it is
 * shown: control characters (C0 and C1: they break logs, CSV and terminals), line and
 * paragraph separators, and the bidirectional embedding, override and isolate marks (they can
 * make a name read as another). Lone surrogates are refused too. Lengths count characters
 * (code points), as the schemas and SQLite do.
 *
 * Vendors are matched by their exact name (the spec), so a vendor name also refuses the
 * characters that show as nothing: a zero-width space would make a second vendor that reads
 * as the first. Customers are matched by nameKey, which drops those characters instead.
 *
 * The rules are written once, as the character ranges below, and become the regular
 * expressions both the server checks with and the OpenAPI document publishes. Those are
 * written for the engines clients and testers use, not only JavaScript's: explicit ranges, no
 * `\p{…}` property, no `\s` (it means other things in Python, Java and Go), no lookaround, and
 * `\uXXXX` escapes, read alike by ECMA-262, Python and Java (Go's RE2 spells them `\x{XXXX}`).
 * Characters beyond U+FFFF, for which those engines share no escape, are written as themselves.
 * The ranges are Unicode's as of Node 24 (Unicode 17); test/unit/name-patterns.test.ts holds
 * them to the engine's own `\p{…}` classes.
 */

export const MAX_NAME_CHARS = 200;

/** Code points as inclusive ranges, [first] or [first, last], in ascending order. */
type CodePoints = readonly (readonly [number, number?])[];

/** Cc: C0, DEL and C1 controls. */
const CONTROLS: CodePoints = [[0x0000, 0x001f], [0x007f, 0x009f]];

/** Cs: surrogates, which a JSON string can carry alone. */
const SURROGATES: CodePoints = [[0xd800, 0xdfff]];

/** The line and paragraph separators. */
const SEPARATORS: CodePoints = [[0x2028, 0x2029]];

/** The bidirectional embedding, override and isolate marks. */
const BIDI_MARKS: CodePoints = [[0x202a, 0x202e], [0x2066, 0x2069]];

/** ECMA-262's `\s` (WhiteSpace and LineTerminator), and the Braille blank, which shows as a space and is a favourite blank name. */
const BLANKS: CodePoints = [
  [0x0009, 0x000d], [0x0020], [0x00a0], [0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f], [0x205f], [0x2800], [0x3000],
  [0xfeff],
];

/**
 * Default_Ignorable_Code_Point, the characters that show as nothing: soft hyphen, zero-width
 * space, non-joiner and joiner, word joiner, U+FEFF, variation selectors, Hangul fillers, tag
 * characters and the rest (the bidirectional marks among them).
 */
const IGNORABLES: CodePoints = [
  [0x00ad], [0x034f], [0x061c], [0x115f, 0x1160], [0x17b4, 0x17b5], [0x180b, 0x180f], [0x200b, 0x200f],
  [0x202a, 0x202e], [0x2060, 0x206f], [0x3164], [0xfe00, 0xfe0f], [0xfeff], [0xffa0], [0xfff0, 0xfff8],
  [0x1bca0, 0x1bca3], [0x1d173, 0x1d17a], [0xe0000, 0xe0fff],
];

/** Extended_Pictographic: the characters an emoji is built on. */
const PICTOGRAPHS: CodePoints = [
  [0x00a9], [0x00ae], [0x203c], [0x2049], [0x2122], [0x2139], [0x2194, 0x2199], [0x21a9, 0x21aa], [0x231a, 0x231b],
  [0x2328], [0x23cf], [0x23e9, 0x23f3], [0x23f8, 0x23fa], [0x24c2], [0x25aa, 0x25ab], [0x25b6], [0x25c0],
  [0x25fb, 0x25fe], [0x2600, 0x2604], [0x260e], [0x2611], [0x2614, 0x2615], [0x2618], [0x261d], [0x2620],
  [0x2622, 0x2623], [0x2626], [0x262a], [0x262e, 0x262f], [0x2638, 0x263a], [0x2640], [0x2642], [0x2648, 0x2653],
  [0x265f, 0x2660], [0x2663], [0x2665, 0x2666], [0x2668], [0x267b], [0x267e, 0x267f], [0x2692, 0x2697], [0x2699],
  [0x269b, 0x269c], [0x26a0, 0x26a1], [0x26a7], [0x26aa, 0x26ab], [0x26b0, 0x26b1], [0x26bd, 0x26be],
  [0x26c4, 0x26c5], [0x26c8], [0x26ce, 0x26cf], [0x26d1], [0x26d3, 0x26d4], [0x26e9, 0x26ea], [0x26f0, 0x26f5],
  [0x26f7, 0x26fa], [0x26fd], [0x2702], [0x2705], [0x2708, 0x270d], [0x270f], [0x2712], [0x2714], [0x2716], [0x271d],
  [0x2721], [0x2728], [0x2733, 0x2734], [0x2744], [0x2747], [0x274c], [0x274e], [0x2753, 0x2755], [0x2757],
  [0x2763, 0x2764], [0x2795, 0x2797], [0x27a1], [0x27b0], [0x27bf], [0x2934, 0x2935], [0x2b05, 0x2b07],
  [0x2b1b, 0x2b1c], [0x2b50], [0x2b55], [0x3030], [0x303d], [0x3297], [0x3299], [0x1f004], [0x1f02c, 0x1f02f],
  [0x1f094, 0x1f09f], [0x1f0af, 0x1f0b0], [0x1f0c0], [0x1f0cf, 0x1f0d0], [0x1f0f6, 0x1f0ff], [0x1f170, 0x1f171],
  [0x1f17e, 0x1f17f], [0x1f18e], [0x1f191, 0x1f19a], [0x1f1ae, 0x1f1e5], [0x1f201, 0x1f20f], [0x1f21a], [0x1f22f],
  [0x1f232, 0x1f23a], [0x1f23c, 0x1f23f], [0x1f249, 0x1f25f], [0x1f266, 0x1f321], [0x1f324, 0x1f393],
  [0x1f396, 0x1f397], [0x1f399, 0x1f39b], [0x1f39e, 0x1f3f0], [0x1f3f3, 0x1f3f5], [0x1f3f7, 0x1f3fa],
  [0x1f400, 0x1f4fd], [0x1f4ff, 0x1f53d], [0x1f549, 0x1f54e], [0x1f550, 0x1f567], [0x1f56f, 0x1f570],
  [0x1f573, 0x1f57a], [0x1f587], [0x1f58a, 0x1f58d], [0x1f590], [0x1f595, 0x1f596], [0x1f5a4, 0x1f5a5], [0x1f5a8],
  [0x1f5b1, 0x1f5b2], [0x1f5bc], [0x1f5c2, 0x1f5c4], [0x1f5d1, 0x1f5d3], [0x1f5dc, 0x1f5de], [0x1f5e1], [0x1f5e3],
  [0x1f5e8], [0x1f5ef], [0x1f5f3], [0x1f5fa, 0x1f64f], [0x1f680, 0x1f6c5], [0x1f6cb, 0x1f6d2], [0x1f6d5, 0x1f6e5],
  [0x1f6e9], [0x1f6eb, 0x1f6f0], [0x1f6f3, 0x1f6ff], [0x1f7da, 0x1f7ff], [0x1f80c, 0x1f80f], [0x1f848, 0x1f84f],
  [0x1f85a, 0x1f85f], [0x1f888, 0x1f88f], [0x1f8ae, 0x1f8af], [0x1f8bc, 0x1f8bf], [0x1f8c2, 0x1f8cf],
  [0x1f8d9, 0x1f8ff], [0x1f90c, 0x1f93a], [0x1f93c, 0x1f945], [0x1f947, 0x1f9ff], [0x1fa58, 0x1fa5f],
  [0x1fa6e, 0x1faff], [0x1fc00, 0x1fffd],
];

/** The skin-tone modifiers, which may stand between a pictograph and a joiner (👩🏽‍💻). */
const SKIN_TONES: CodePoints = [[0x1f3fb, 0x1f3ff]];

/** The bases of a keycap emoji (1️⃣): digits, # and *. */
const KEYCAP_BASES: CodePoints = [[0x0023], [0x002a], [0x0030, 0x0039]];

/** The ranges the rules are built from (test/unit/name-patterns.test.ts holds them to Unicode's classes). */
export const NAME_CHARACTER_RANGES = { CONTROLS, SURROGATES, SEPARATORS, BIDI_MARKS, BLANKS, IGNORABLES, PICTOGRAPHS, SKIN_TONES, KEYCAP_BASES } as const;

/** The set of every code point in any of `sets`, as sorted, merged ranges. */
function union(...sets: CodePoints[]): [number, number][] {
  const sorted = sets.flat().map(([first, last = first]) => [first, last] as [number, number]).sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [first, last] of sorted) {
    const previous = merged.at(-1);
    if (previous && first <= previous[1] + 1) previous[1] = Math.max(previous[1], last);
    else merged.push([first, last]);
  }
  return merged;
}

/** The code points of `set` that are not in `without`. */
function minus(set: CodePoints, without: CodePoints): [number, number][] {
  const out: [number, number][] = [];
  for (const [first, last] of union(set)) {
    let from = first;
    for (const [cutFirst, cutLast] of union(without)) {
      if (cutLast < from || cutFirst > last) continue;
      if (cutFirst > from) out.push([from, cutFirst - 1]);
      from = cutLast + 1;
    }
    if (from <= last) out.push([from, last]);
  }
  return out;
}

/**
 * A code point as a pattern writes it: a letter or digit as itself, anything else up to U+FFFF as
 * `\uXXXX`, and beyond that the character itself, since ECMA-262 (`\u{…}`), Python (`\U…`) and
 * Java (`\x{…}`) share no escape for it, and a pair of surrogate escapes is two characters to
 * Python.
 */
function patternChar(codePoint: number): string {
  const char = String.fromCodePoint(codePoint);
  if (/^[0-9A-Za-z]$/.test(char) || codePoint > 0xffff) return char;
  return `\\u${codePoint.toString(16).padStart(4, '0')}`;
}

/** The body of a character class for `set` (what goes between `[` and `]`). */
function classBody(set: CodePoints): string {
  const body = union(set)
    .map(([first, last]) => (first === last ? patternChar(first) : `${patternChar(first)}${last === first + 1 ? '' : '-'}${patternChar(last)}`))
    .join('');
  // ECMA-262 (with `u`) and Java read a lead-surrogate escape followed by a trail-surrogate
  // escape as one character beyond U+FFFF, Python as two: never write that pair.
  if (/\\ud[89ab][0-9a-f]{2}\\ud[c-f]/.test(body)) throw new Error(`names: a class body would pair two surrogate escapes: ${body}`);
  return body;
}

/** The bidirectional embedding, override and isolate marks, as a class body (src/text.ts refuses them too). */
export const BIDI_CONTROLS = classBody(BIDI_MARKS);

/** What a name may not hold anywhere. */
const FORBIDDEN = union(CONTROLS, SURROGATES, SEPARATORS, BIDI_MARKS);

/** What a name may hold but does not show: white space and invisible characters. */
const UNSHOWN = minus(union(BLANKS, IGNORABLES), FORBIDDEN);

/**
 * The rule as a JSON-Schema pattern: characters that show nothing, then one that shows, then
 * anything allowed. Each character has one place to go, so a refusal costs one pass over the
 * text however long it is.
 */
export const NAME_PATTERN = `^[${classBody(UNSHOWN)}]*[^${classBody(union(FORBIDDEN, UNSHOWN))}][^${classBody(FORBIDDEN)}]*$`;

export const NAME_RULE = 'must not be blank or contain control characters';

const NAME = new RegExp(NAME_PATTERN, 'u');

/**
 * A vendor name shows every character but those an emoji needs: a joiner between two
 * pictographs (👩‍👩‍👧, after a skin tone or VS-16 too), a variation selector right after a
 * pictograph (☕️), VS-16 in a keycap (1️⃣). Anywhere else they only hide. So a vendor name is
 * made of pieces, each with one way to read it:
 * - white space (not an invisible character),
 * - a character that shows and is neither a pictograph nor a keycap base,
 * - a keycap base, with VS-16 and the keycap mark after it or not,
 * - pictographs joined by U+200D (each but the last may carry VS-16 or a skin tone before the
 *   joiner), the last of them maybe followed by a variation selector,
 * and at least one piece is not white space.
 */
const VENDOR_BLANK = `[${classBody(minus(BLANKS, union(FORBIDDEN, IGNORABLES)))}]`;
const PICTOGRAPH = `[${classBody(PICTOGRAPHS)}]`;
const PLAIN_SHOWN = `[^${classBody(union(FORBIDDEN, UNSHOWN, PICTOGRAPHS, KEYCAP_BASES))}]`;
const KEYCAP = `[${classBody(KEYCAP_BASES)}](?:\\ufe0f\\u20e3)?`;
const EMOJI = `(?:${PICTOGRAPH}[${classBody(union([[0xfe0f]], SKIN_TONES))}]?\\u200d)*${PICTOGRAPH}[\\ufe0e\\ufe0f]?`;

/** A vendor name as a JSON-Schema pattern: the name rule, and no invisible character outside an emoji. */
export const VENDOR_NAME_PATTERN = `^(?:${VENDOR_BLANK}*(?:${PLAIN_SHOWN}|${KEYCAP}|${EMOJI}))+${VENDOR_BLANK}*$`;

/** The API's one sentence for both rules (a schema pattern has one message). */
export const VENDOR_NAME_RULE = 'must not be blank or contain control or invisible characters';

const INVISIBLE_RULE = 'must not contain invisible characters (such as a zero-width space or a soft hyphen)';

const VENDOR_NAME = new RegExp(VENDOR_NAME_PATTERN, 'u');

/** Characters that must never reach a terminal raw (the CLI escapes them in what it echoes). */
export const UNSAFE_TO_SHOW = new RegExp(`[${classBody(FORBIDDEN)}]`, 'gu');

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
  return nameProblem(value) ?? (VENDOR_NAME.test(value) ? null : INVISIBLE_RULE);
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
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** Whether `text` is ASCII only: its own NFC and NFKD form, with no marks to drop. */
export function isAscii(text: string): boolean {
  return ASCII_ONLY.test(text);
}

export function foldName(name: string): string {
  // ASCII text is its own NFC form and folds by lower-casing alone; most names and bank rows are.
  if (isAscii(name)) return name.toLowerCase();
  // NFC again at the end: case mapping can leave decomposed characters (ΐ becomes three).
  return name.normalize('NFC').toLocaleUpperCase('en-US').toLocaleLowerCase('en-US').replace(/ς/g, 'σ').normalize('NFC');
}

const INVISIBLES = new RegExp(`[${classBody(IGNORABLES)}]`, 'gu');
const BLANK_RUNS = new RegExp(`[${classBody(BLANKS)}]+`, 'gu');

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

const BLANK_OR_INVISIBLE = `[${classBody(union(BLANKS, IGNORABLES))}]`;
const EDGE_BLANKS = new RegExp(`^${BLANK_OR_INVISIBLE}+|${BLANK_OR_INVISIBLE}+$`, 'gu');

/** The name without the white space and invisible characters at either end, which only hide. */
export function trimName(name: string): string {
  return name.replace(EDGE_BLANKS, '');
}
