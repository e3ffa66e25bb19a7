import type { Clock } from '../clock.js';
import { daysBetween, isIsoDate } from '../dates.js';
import type { Db } from '../db/connection.js';
import { inTransaction } from '../db/connection.js';
import { type ExchangeRate, rateOnOrBefore, setRate } from '../books/fx.js';
import { FOREIGN_CURRENCIES, type ForeignCurrency } from '../money.js';
import { fetchUsdRates, type FetchRatesOptions, type QuotedRates, RateProviderError, type RateProvider } from './provider.js';

/** Either the rate to use, or why there is none, worded for the caller's 422. */
export type RateLookUp = { rate: ExchangeRate; problem?: string } | { rate?: undefined; problem: string };

/** A stored quote this many days older than the date asked is stale enough to ask again (a long weekend is four). */
export const FRESH_RATE_DAYS = 4;

/**
 * The one-time look-up the invoice send and payment paths make: the stored rate on or before
 * `date` when it is recent (at most FRESH_RATE_DAYS older: weekends and holidays have no
 * quote of their own), else one request to the provider, whose rates are all stored under the
 * quote's own date. When the provider cannot answer, an older stored rate is still the rate
 * on or before the date, and is returned with the problem beside it. A provider failure comes
 * back as `problem`, never as a throw.
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

  let quoted: QuotedRates;
  try {
    quoted = await fetchUsdRates(provider, date, options);
  } catch (error) {
    if (!(error instanceof RateProviderError)) throw error;
    if (stored) return { rate: stored, problem: `the latest ${currency} rate stored is for ${stored.date}, and looking up a newer one failed: ${error.message}` };
    return { problem: `no ${currency} rate is stored on or before ${date}, and looking one up failed: ${error.message}` };
  }

  storeQuotedRates(db, clock, provider, quoted);
  const rate = rateOnOrBefore(db, currency, date);
  if (rate) return { rate };
  return {
    problem: `no ${currency} rate is stored on or before ${date}, and the ${provider.kind} rate provider's latest quote is for ${quoted.date}`,
  };
}

/**
 * Stores every fetched rate under the quote's date, all in one transaction. A rate already
 * stored for that currency and day (one set by hand, say) is kept: a look-up fills gaps, it
 * does not overwrite.
 */
function storeQuotedRates(db: Db, clock: Clock, provider: RateProvider, quoted: QuotedRates): void {
  inTransaction(db, () => {
    for (const { currency, usdPerUnit } of quoted.rates) {
      if (rateOnOrBefore(db, currency, quoted.date)?.date === quoted.date) continue;
      setRate(db, clock, { currency, date: quoted.date, usdPerUnit, source: provider.kind });
    }
  });
}
