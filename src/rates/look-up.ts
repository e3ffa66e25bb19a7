import { type Clock, todayUtc } from '../clock.js';
import { daysBetween, isIsoDate } from '../dates.js';
import type { Db } from '../db/connection.js';
import { type ExchangeRate, rateOnOrBefore } from '../books/fx.js';
import { FOREIGN_CURRENCIES, type ForeignCurrency } from '../money.js';
import { fetchUsdRates, type FetchRatesOptions, type QuotedRates, RateProviderError, type RateProvider } from './provider.js';
import { storeQuotedRates } from './store.js';

/** Either the rate to use, or why there is none, worded for the caller's 422. */
export type RateLookUp = { rate: ExchangeRate; problem?: string } | { rate?: undefined; problem: string };

/** A stored quote this many days older than the date asked is stale enough to ask again (a long weekend is four). */
export const FRESH_RATE_DAYS = 4;

/**
 * The one-time look-up the invoice send and payment paths make: the stored rate on or before
 * `date` when it is recent (at most FRESH_RATE_DAYS older: weekends and holidays have no
 * quote of their own), else one request to the provider, whose rates are all stored under the
 * quote's own date (through storeQuotedRates, the rates job's rules). When the provider cannot
 * answer, or its rate for the currency is refused (zero, malformed, or over 100x away from the
 * one before), an older stored rate is still the rate on or before the date, and is returned
 * with the problem beside it. A provider failure comes back as `problem`, never as a throw.
 *
 * It awaits the network, so it must run before (outside) the write's transaction; the
 * rates it stores are committed in a transaction of their own.
 */
export async function lookUpRate(
  db: Db,
  clock: Clock,
  provider: RateProvider,
  currency: ForeignCurrency,
  date: string,
  options: FetchRatesOptions = {},
): Promise<RateLookUp> {
  if (db.inTransaction) throw new Error('lookUpRate: must not be awaited inside a transaction');
  if (!FOREIGN_CURRENCIES.includes(currency)) throw new Error(`lookUpRate: not a foreign currency: ${String(currency)}`);
  if (!isIsoDate(date)) throw new Error(`lookUpRate: not a date: ${date}`);

  const stored = rateOnOrBefore(db, currency, date);
  if (stored && daysBetween(stored.date, date) <= FRESH_RATE_DAYS) return { rate: stored };

  const failed = (why: string): RateLookUp => {
    if (stored) return { rate: stored, problem: `the latest ${currency} rate stored is for ${stored.date}, and looking up a newer one failed: ${why}` };
    return { problem: `no ${currency} rate is stored on or before ${date}, and looking one up failed: ${why}` };
  };

  let quoted: QuotedRates;
  try {
    quoted = await fetchUsdRates(provider, date, options);
  } catch (error) {
    if (!(error instanceof RateProviderError)) throw error;
    return failed(error.message);
  }
  // As in the rates job: a quote dated after today is no real quote, and stored it would stand
  // in the way of the real one (fetched rates never overwrite stored ones).
  if (quoted.date > todayUtc(clock)) return failed(`the ${provider.kind} rate provider's quote is dated ${quoted.date}, after today`);

  const { refused } = storeQuotedRates(db, clock, provider.kind, quoted);
  // A refused rate was not stored: as far as this currency goes, the provider did not answer.
  const refusal = refused.find((candidate) => candidate.currency === currency);
  if (refusal) return failed(`the ${provider.kind} rate provider's answer was refused: ${refusal.message}`);
  const rate = rateOnOrBefore(db, currency, date);
  if (rate) return { rate };
  return {
    problem: `no ${currency} rate is stored on or before ${date}, and the ${provider.kind} rate provider's latest quote is for ${quoted.date}`,
  };
}
