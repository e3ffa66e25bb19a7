import type { Clock } from '../clock.js';
import type { FxProvider } from '../config.js';
import { isIsoDate } from '../dates.js';
import type { Db } from '../db/connection.js';
import { inTransaction } from '../db/connection.js';
import type { Actor } from '../store/audit.js';
import { type ExchangeRate, rateOnOrBefore, setRate } from '../books/fx.js';
import { FOREIGN_CURRENCIES, type ForeignCurrency, FX_RATE_SCALE, parseDecimal } from '../money.js';
import type { QuotedRates } from './provider.js';

/**
 * The one place fetched exchange rates are written: the send path's look-up and the daily
 * rates job both store through here, so both keep the same rules.
 */

/** A fetched rate further than this factor from the one before it is a provider error, not a market move. */
export const MAX_RATE_JUMP = 100n;

/** The rule a refused rate broke. */
export type RateRefusalReason = 'malformed' | 'zero' | 'negative' | 'over_100x_previous' | 'under_hundredth_of_previous';

export interface RefusedRate {
  currency: ForeignCurrency;
  date: string;
  /** As quoted, not normalised. */
  usdPerUnit: string;
  reason: RateRefusalReason;
  /** The latest rate stored before `date`, for the two jump rules. */
  previous?: ExchangeRate;
  /** Why, in words, for logs and for a caller's problem text. */
  message: string;
}

export interface StoredQuote {
  /** Rates written. */
  stored: number;
  /** Rates not written because one is already stored for that currency and day. */
  kept: number;
  refused: RefusedRate[];
}

/**
 * Stores every rate of one quote under the quote's own date, all in one transaction, each with
 * its audit row under `actor` (the rates job, or the key whose write looked the rate up). A rate
 * already stored for that currency and day (one set by hand, say) is kept: fetching fills
 * gaps, it never overwrites. A rate that is not a positive decimal, or is more than
 * MAX_RATE_JUMP times (or less than 1/MAX_RATE_JUMP of) the latest rate stored for that
 * currency before the quote's date, is refused and returned, not stored; the quote's other
 * rates are stored all the same.
 */
export function storeQuotedRates(db: Db, clock: Clock, actor: Actor, source: FxProvider, quoted: QuotedRates): StoredQuote {
  if (source !== 'frankfurter' && source !== 'ecb') throw new Error(`storeQuotedRates: not a rate provider: ${String(source)}`);
  if (!isIsoDate(quoted.date)) throw new Error(`storeQuotedRates: quote date is not a date: ${quoted.date}`);
  const currencies = quoted.rates.map((rate) => rate.currency);
  for (const currency of currencies) {
    if (!FOREIGN_CURRENCIES.includes(currency)) throw new Error(`storeQuotedRates: not a foreign currency: ${String(currency)}`);
  }
  if (new Set(currencies).size !== currencies.length) throw new Error(`storeQuotedRates: the quote for ${quoted.date} names a currency twice`);

  return inTransaction(db, () => {
    const result: StoredQuote = { stored: 0, kept: 0, refused: [] };
    for (const { currency, usdPerUnit } of quoted.rates) {
      const latest = rateOnOrBefore(db, currency, quoted.date);
      if (latest?.date === quoted.date) {
        result.kept += 1;
        continue;
      }
      const refusal = refusalOf(currency, quoted.date, usdPerUnit, latest);
      if (refusal) {
        result.refused.push(refusal);
        continue;
      }
      setRate(db, clock, actor, { currency, date: quoted.date, usdPerUnit, source });
      result.stored += 1;
    }
    return result;
  });
}

/** Why `usdPerUnit` must not be stored, or undefined when it may; `previous` is the latest rate stored before its date. */
function refusalOf(currency: ForeignCurrency, date: string, usdPerUnit: string, previous: ExchangeRate | undefined): RefusedRate | undefined {
  const refuse = (reason: RateRefusalReason, message: string, compared?: ExchangeRate): RefusedRate => ({
    currency,
    date,
    usdPerUnit,
    reason,
    ...(compared ? { previous: compared } : {}),
    message,
  });

  if (typeof usdPerUnit === 'string' && /^-[0-9]/.test(usdPerUnit)) return refuse('negative', `${currency} rate ${usdPerUnit} is negative`);
  const units = scaledUnits(usdPerUnit);
  if (units === undefined) {
    return refuse('malformed', `${currency} rate ${JSON.stringify(usdPerUnit)} is not a decimal with at most ${FX_RATE_SCALE} places`);
  }
  if (units === 0n) return refuse('zero', `${currency} rate ${usdPerUnit} is zero`);
  if (!previous) return undefined;

  const previousUnits = scaledUnits(previous.usdPerUnit);
  // Every stored rate went through setRate's normalisation; one that did not is a corrupt row.
  if (previousUnits === undefined || previousUnits === 0n) {
    throw new Error(`storeQuotedRates: the ${currency} rate stored for ${previous.date} is not a positive decimal: ${previous.usdPerUnit}`);
  }
  // Both at FX_RATE_SCALE, so the comparisons are exact integer ones.
  if (units > previousUnits * MAX_RATE_JUMP) {
    return refuse('over_100x_previous', `${currency} rate ${usdPerUnit} for ${date} is more than ${MAX_RATE_JUMP} times the ${previous.usdPerUnit} stored for ${previous.date}`, previous);
  }
  if (units * MAX_RATE_JUMP < previousUnits) {
    return refuse('under_hundredth_of_previous', `${currency} rate ${usdPerUnit} for ${date} is less than 1/${MAX_RATE_JUMP} of the ${previous.usdPerUnit} stored for ${previous.date}`, previous);
  }
  return undefined;
}

/** The rate in units of 10^-FX_RATE_SCALE, or undefined when it is no plain decimal of that scale. */
function scaledUnits(text: string): bigint | undefined {
  try {
    return parseDecimal(text, FX_RATE_SCALE).units;
  } catch {
    return undefined;
  }
}
