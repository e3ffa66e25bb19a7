import { BIDI_CONTROLS } from './names.js';

/**
 * One rule for free text (invoice line descriptions, memos, addresses, bank statement
 * descriptions), whichever way it arrives: no control character but newline and tab, and no
 * bidirectional embedding, override or isolate mark. The text reaches the pay page, the
 * invoice PDF, emails, exports and terminals: a NUL or ESC breaks or acts on them, and an
 * override (U+202E) makes a line read other than it is. Carriage returns are refused too
 * (newline alone breaks a line); line and paragraph separators are let through as the breaks
 * they are.
 */

/** What free text may not contain, as a regular-expression class body: C0 but tab and newline, DEL, C1, bidi controls. */
const FORBIDDEN_IN_TEXT = `\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f${BIDI_CONTROLS}`;

/** The rule as a JSON-Schema pattern (every free-text field of the API's schemas uses it; ajv compiles with `u`). */
export const TEXT_PATTERN = `^[^${FORBIDDEN_IN_TEXT}]*$`;

export const TEXT_RULE = 'must not contain control characters (other than newline and tab) or bidirectional override marks';

const TEXT = new RegExp(TEXT_PATTERN, 'u');

/** Why `value` is not acceptable free text, or null when it is. */
export function textProblem(value: string): string | null {
  return TEXT.test(value) ? null : TEXT_RULE;
}
