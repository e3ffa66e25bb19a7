import { InvalidArgumentError, Option } from 'commander';
import type { RateLimitSetting } from '../books/tenants.js';
import { isUuid } from '../ids.js';
import type { KeyAccess } from '../books/keys.js';
import { PLAN_NAMES } from '../books/plans.js';
import { isIsoDate } from '../dates.js';
import { MAX_NAME_CHARS, nameProblem } from '../names.js';

/**
 * Argument parsers and shared option definitions. A parser throws InvalidArgumentError, which
 * commander reports as "option '--x <v>' argument 'y' is invalid. <reason>" (exit 2).
 */

/** The largest budget an operator may set per window; far above any plan, it only bounds input. */
export const MAX_RATE_BUDGET = 1_000_000_000;

export function integerIn(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^[0-9]{1,10}$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`Must be a whole number from ${min} to ${max}.`);
    }
    return Number(value);
  };
}

export const portNumber = integerIn(0, 65535);

export function isoDate(value: string): string {
  if (!isIsoDate(value)) throw new InvalidArgumentError('Must be a real calendar date written YYYY-MM-DD.');
  return value;
}

/** The same name rule as the API (src/names.ts), checked before anything is written. */
export function name(value: string): string {
  const problem = nameProblem(value);
  if (problem) throw new InvalidArgumentError(`Must be a name of 1 to ${MAX_NAME_CHARS} characters: it ${problem}.`);
  return value;
}

export function id(value: string): string {
  if (!isUuid(value)) throw new InvalidArgumentError('Must be an id (a UUID, as printed when it was created).');
  return value.toLowerCase();
}

/** Repeatable id option: `--business A --business B` gives [A, B]. */
export function collectIds(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), id(value)];
}

/** `READS/WRITES` (per 10-minute window), `plan` (the plan's budgets) or `off` (no limit). */
export function rateLimit(value: string): RateLimitSetting {
  if (value === 'plan' || value === 'off') return { mode: value };
  const match = /^([0-9]{1,10})\/([0-9]{1,10})$/.exec(value);
  const reads = Number(match?.[1]);
  const writes = Number(match?.[2]);
  const inRange = (n: number) => Number.isInteger(n) && n >= 1 && n <= MAX_RATE_BUDGET;
  if (!match || !inRange(reads) || !inRange(writes)) {
    throw new InvalidArgumentError(`Must be READS/WRITES (each 1 to ${MAX_RATE_BUDGET}, e.g. 100000/10000), plan or off.`);
  }
  return { mode: 'custom', readsPerWindow: reads, writesPerWindow: writes };
}

/** The CLI spells key access `read-write`; the books store `read_write`. */
export const ACCESS_FLAGS = ['read', 'read-write'] as const;
export type AccessFlag = (typeof ACCESS_FLAGS)[number];

export function accessFromFlag(flag: AccessFlag): KeyAccess {
  return flag === 'read-write' ? 'read_write' : 'read';
}

export function accessLabel(access: KeyAccess): AccessFlag {
  return access === 'read_write' ? 'read-write' : 'read';
}

/** An option limited to a fixed list; commander names the allowed values on error. */
export function choiceOption(flags: string, description: string, choices: readonly string[]): Option {
  return new Option(flags, description).choices(choices);
}

export function planOption(): Option {
  return choiceOption('--plan <plan>', 'plan tier (bounds active keys and rate budgets)', PLAN_NAMES);
}

/** Whole cents: digits only, as the API writes money. */
export function cents(value: string): bigint {
  if (!/^[0-9]{1,16}$/.test(value)) throw new InvalidArgumentError('Must be whole cents written as digits (e.g. 125000 for $1,250.00).');
  return BigInt(value);
}
