import { validationFailed } from './errors.js';

/**
 * One rule for every name Daybook stores (tenants, businesses, keys, customers, vendors),
 * whether it arrives through the API or the admin command: 1 to 200 characters, at least one
 * that is not white space, and no control characters (they break logs, CSV and terminals).
 */

export const MAX_NAME_CHARS = 200;

/** The rule as a JSON-Schema pattern (the API's schemas use it as is). */
export const NAME_PATTERN = '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$';

export const NAME_RULE = 'must not be blank or contain control characters';

const NAME = new RegExp(NAME_PATTERN, 'u');

/** Why `value` is not a valid name, or null when it is one. */
export function nameProblem(value: string, maxChars = MAX_NAME_CHARS): string | null {
  if (value.length === 0) return 'must not be empty';
  if (value.length > maxChars) return `must be at most ${maxChars} characters`;
  if (!NAME.test(value)) return NAME_RULE;
  return null;
}

/** Refuses a name that breaks the rule with validation_failed naming `field`. */
export function assertName(field: string, value: string, maxChars = MAX_NAME_CHARS): void {
  const problem = nameProblem(value, maxChars);
  if (problem) throw validationFailed(field, problem);
}
