import { type Clock, todayUtc } from '../clock.js';
import { isIsoDate } from '../dates.js';
import type { Db } from '../db/connection.js';
import { FRESH_RATE_DAYS, rateOnOrBefore, type RateLookUp, usableRate } from '../books/fx.js';
import { FOREIGN_CURRENCIES, type ForeignCurrency } from '../money.js';
import { fetchUsdRates, type FetchRatesOptions, type QuotedRates, type RateProvider } from './provider.js';
import { RateProviderError } from './provider-error.js';
import type { StoredQuote } from './store.js';
import type { FxProvider } from '../config.js';

/**
 * The one-time look-up the invoice send and payment paths make: the stored rate usableRate
 * allows (`options.maxAgeDays`, FRESH_RATE_DAYS unless given), else, for a date not after
 * today, one request to the provider, whose rates are all stored under the
 * quote's own date by `store` (the write door's rates.store command: storeQuotedRates, the
 * rates job's rules, audited under the writer that asked). When the provider cannot
 * answer, or its rate for the currency is refused (zero, malformed, or over 100x away from the
 * one before), an older stored rate is still the rate on or before the date, and is returned
 * with the problem beside it; the posting refuses it all the same when usableRate does (the
 * returned rate is what the books hold, not a permission to post at it). A provider failure
 * comes back as `problem`, never as a throw.
 *
 * It awaits the network, so it must run before (outside) the write's transaction; the
 * rates it stores are committed in a transaction of their own.
 */
export async function lookUpRate(
  db: Db,
  clock: Clock,
  store: (source: FxProvider, quoted: QuotedRates) => StoredQuote,
  provider: RateProvider,
  currency: ForeignCurrency,
  date: string,
  options: FetchRatesOptions & { maxAgeDays?: number } = {},
): Promise<RateLookUp> {
  if (db.inTransaction) throw new Error('lookUpRate: must not be awaited inside a transaction');
  if (!FOREIGN_CURRENCIES.includes(currency)) throw new Error(`lookUpRate: not a foreign currency: ${String(currency)}`);
  if (!isIsoDate(date)) throw new Error(`lookUpRate: not a date: ${date}`);

  const { maxAgeDays = FRESH_RATE_DAYS, ...fetchOptions } = options;
  const usable = usableRate(db, clock, currency, date, maxAgeDays);
  if (usable.rate) return usable;
  const stored = rateOnOrBefore(db, currency, date);
  // No provider quotes a day that has not come: asking would only store today's quote.
  if (date > todayUtc(clock)) return stored ? { rate: stored, problem: usable.problem } : usable;

  const failed = (why: string): RateLookUp => {
    if (stored) return { rate: stored, problem: `the latest ${currency} rate stored is for ${stored.date}, and looking up a newer one failed: ${why}` };
    return { problem: `no ${currency} rate is stored on or before ${date}, and looking one up failed: ${why}` };
  };

  let quoted: QuotedRates;
  try {
    quoted = await fetchUsdRates(provider, date, fetchOptions);
  } catch (error) {
    if (!(error instanceof RateProviderError)) throw error;
    return failed(error.message);
  }
  // As in the rates job: a quote dated after today is no real quote, and stored it would stand
  // in the way of the real one (fetched rates never overwrite stored ones).
  if (quoted.date > todayUtc(clock)) return failed(`the ${provider.kind} rate provider's quote is dated ${quoted.date}, after today`);

  const { refused } = store(provider.kind, quoted);
  // A refused rate was not stored: as far as this currency goes, the provider did not answer.
  const refusal = refused.find((candidate) => candidate.currency === currency);
  if (refusal) return failed(`the ${provider.kind} rate provider's answer was refused: ${refusal.message}`);
  const after = usableRate(db, clock, currency, date, maxAgeDays);
  if (after.rate) return after;
  const rate = rateOnOrBefore(db, currency, date);
  if (rate) return { rate, problem: after.problem };
  return {
    problem: `no ${currency} rate is stored on or before ${date}, and the ${provider.kind} rate provider's latest quote is for ${quoted.date}`,
  };
}
