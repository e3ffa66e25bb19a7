import { type Clock, nowIso, todayUtc } from '../clock.js';
import { daysBetween, isIsoDate } from '../dates.js';
import type { Db } from '../db/connection.js';
import { inTransaction } from '../db/connection.js';
import { one, run } from '../db/statements.js';
import { validationFailed } from '../errors.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { divideRoundHalfAwayFromZero, FOREIGN_CURRENCIES, type ForeignCurrency, FX_RATE_SCALE, parseDecimal } from '../money.js';

export type RateSource = 'manual' | 'frankfurter' | 'ecb';

export interface ExchangeRate {
  currency: ForeignCurrency;
  date: string;
  usdPerUnit: string;
  source: RateSource;
}

/** Normalises a rate to its canonical decimal text ("1.0850000" -> "1.085"); refuses zero. */
export function normalizeRate(text: string): string {
  const { units } = parseDecimal(text, FX_RATE_SCALE);
  if (units === 0n) throw new Error('must be greater than zero');
  return rateText(units);
}

/** The rate `usdCents` for `amountCents` makes, to the stored rates' ten decimal places: what a processor's conversion came to. */
export function effectiveRate(usdCents: bigint, amountCents: bigint): string {
  return rateText(divideRoundHalfAwayFromZero(usdCents * 10n ** BigInt(FX_RATE_SCALE), amountCents));
}

/** A rate of `units` ten-billionths, written without trailing zeros. */
function rateText(units: bigint): string {
  const digits = units.toString().padStart(FX_RATE_SCALE + 1, '0');
  const whole = digits.slice(0, -FX_RATE_SCALE);
  const fraction = digits.slice(-FX_RATE_SCALE).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/**
 * Stores (or replaces) the USD value of one unit of `currency` on `date`, with an
 * installation-wide audit row under `actor` (rates belong to no account).
 */
export function setRate(db: Db, clock: Clock, actor: Actor, input: { currency: string; date: string; usdPerUnit: string; source?: RateSource }): ExchangeRate {
  if (!(FOREIGN_CURRENCIES as readonly string[]).includes(input.currency)) {
    throw validationFailed('currency', `must be one of ${FOREIGN_CURRENCIES.join(', ')}`);
  }
  if (!isIsoDate(input.date)) throw validationFailed('date', 'must be a date YYYY-MM-DD');
  let usdPerUnit: string;
  try {
    usdPerUnit = normalizeRate(input.usdPerUnit);
  } catch (error) {
    throw validationFailed('usdPerUnit', `${(error as Error).message} (a decimal with at most ${FX_RATE_SCALE} places)`);
  }
  const rate: ExchangeRate = {
    currency: input.currency as ForeignCurrency,
    date: input.date,
    usdPerUnit,
    source: input.source ?? 'manual',
  };
  inTransaction(db, () => {
    const replaced = one<{ usd_per_unit: string }>(db, 'SELECT usd_per_unit FROM exchange_rates WHERE currency = ? AND rate_date = ?', rate.currency, rate.date);
    run(
      db,
      `INSERT INTO exchange_rates (currency, rate_date, usd_per_unit, source, fetched_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (currency, rate_date) DO UPDATE SET usd_per_unit = excluded.usd_per_unit, source = excluded.source, fetched_at = excluded.fetched_at`,
      rate.currency,
      rate.date,
      rate.usdPerUnit,
      rate.source,
      nowIso(clock),
    );
    recordAudit(db, clock, actor, {
      tenantId: null,
      action: 'rate.set',
      subjectType: 'exchange_rate',
      subjectId: `${rate.currency} ${rate.date}`,
      detail: { ...rate, ...(replaced ? { replaced: replaced.usd_per_unit } : {}) },
    });
  });
  return rate;
}

/** The latest stored rate on or before `date`, or undefined when none exists. */
export function rateOnOrBefore(db: Db, currency: ForeignCurrency, date: string): ExchangeRate | undefined {
  const row = one<{ currency: ForeignCurrency; rate_date: string; usd_per_unit: string; source: RateSource }>(
    db,
    'SELECT currency, rate_date, usd_per_unit, source FROM exchange_rates WHERE currency = ? AND rate_date <= ? ORDER BY rate_date DESC LIMIT 1',
    currency,
    date,
  );
  return row && { currency: row.currency, date: row.rate_date, usdPerUnit: row.usd_per_unit, source: row.source };
}

/** Either the rate to use, or why there is none, worded for the caller's 422. */
export type RateLookUp = { rate: ExchangeRate; problem?: string } | { rate?: undefined; problem: string };

/**
 * How many days older than the date asked a stored rate may be and still be used, unless
 * DAYBOOK_RATE_MAX_AGE_DAYS says otherwise: four, a weekend plus a holiday, which have no quote
 * of their own.
 */
export const FRESH_RATE_DAYS = 4;

/**
 * The one rule for which stored rate a send or a payment may post at: the rate stored for
 * `date`, or the newest one before it at most `maxAgeDays` older. A date after today needs a
 * rate of its own (no quote for it can exist yet, so only one set by hand counts). Otherwise
 * `problem` says why, naming the newest stored rate on or before the date (or that there is
 * none) and `daybook rate set` as the way to store one by hand. Reads only; any transaction.
 */
export function usableRate(db: Db, clock: Clock, currency: ForeignCurrency, date: string, maxAgeDays: number = FRESH_RATE_DAYS): RateLookUp {
  if (!FOREIGN_CURRENCIES.includes(currency)) throw new Error(`usableRate: not a foreign currency: ${String(currency)}`);
  if (!isIsoDate(date)) throw new Error(`usableRate: not a date: ${date}`);
  if (!Number.isSafeInteger(maxAgeDays) || maxAgeDays < 0) throw new Error(`usableRate: not a number of days: ${maxAgeDays}`);
  const stored = rateOnOrBefore(db, currency, date);
  const today = todayUtc(clock);
  if (stored && stored.date === date) return { rate: stored };
  if (stored && date <= today && daysBetween(stored.date, date) <= maxAgeDays) return { rate: stored };
  const newest = stored ? `the newest ${currency} rate stored is for ${stored.date}` : `no ${currency} rate is stored on or before ${date}`;
  const why =
    date > today
      ? `${date} is after today (${today}), so no rate for it can be fetched yet, and ${newest}`
      : stored
        ? `${newest}, more than ${maxAgeDays} days before ${date}, and the rate provider gave none newer`
        : `${newest}, and the rate provider gave none`;
  return { problem: `${why}; store one by hand with daybook rate set --currency ${currency} --date ${date} --usd-per-unit RATE` };
}
