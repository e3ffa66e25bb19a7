import { jobActor } from '../store/audit.js';
import { rateOnOrBefore } from '../books/fx.js';
import { type Clock, todayUtc } from '../clock.js';
import { addDays } from '../dates.js';
import type { Db } from '../db/connection.js';
import { all } from '../db/statements.js';
import type { Logger } from '../log.js';
import { FOREIGN_CURRENCIES } from '../money.js';
import { fetchUsdRates, type QuotedRates, type RateProvider } from '../rates/provider.js';
import { isUnreachable, RateProviderError } from '../rates/provider-error.js';
import type { RefusedRate } from '../rates/store.js';
import { storeQuoteCommand } from '../door/commands/installation.js';
import { writeNow } from '../door/door.js';
import { INSTALLATION_REACH } from '../door/reach.js';
import { redactUrl } from '../redact.js';
import { JobOutage } from './pool.js';

/** The rates job, as the audit trail names it beside every rate it stores. */
const RATES_JOB = { actor: jobActor('rates'), reach: INSTALLATION_REACH };

export interface RatesContext {
  db: Db;
  clock: Clock;
  provider: RateProvider;
  log: Logger;
  fetch?: typeof fetch;
  /** Per request; fetchUsdRates's default when not given. */
  timeoutMs?: number;
}

export interface RatesResult {
  /** Requests made to the provider. */
  requested: number;
  /** Rates written. */
  stored: number;
  /** Rates not written because one was already stored for that currency and day. */
  kept: number;
  /** Rates refused (zero, malformed, or over 100x away from the one before) and not written. */
  refused: number;
  /** Requests that got no usable answer. */
  failed: number;
  /** Every currency already had a rate for the latest business day: nothing was asked. */
  upToDate: boolean;
}

/** How far back a run fills gaps: the 31 calendar days ending today. Older gaps stay as they are. */
export const BACKFILL_DAYS = 31;

/** After this many failed requests in a row the provider is taken to be down; the retry carries on from there. */
export const MAX_FAILURES_IN_A_ROW = 3;

/** How many failures and refusals the thrown summary names; the log has every one (a request that found the provider unreachable, at debug). */
const SUMMARY_ITEMS = 3;

/** The run failed in part (a request failed or a rate was refused); whatever did succeed is stored. */
export class RatesJobError extends Error {
  override name = 'RatesJobError';
  readonly result: RatesResult;

  constructor(message: string, result: RatesResult) {
    super(message);
    this.result = result;
  }
}

/**
 * Every request that failed found the provider unreachable (no network, a name that does not
 * resolve, a refused connection, no answer in time) and no rate was refused: normal on a
 * machine kept offline, so the pool logs it as one warning line, which names the settings
 * that turn the job off or point it elsewhere, and retries it as any failure. Whatever was
 * stored before the provider stopped answering stays stored.
 */
export class RateProviderUnreachable extends JobOutage {
  override name = 'RateProviderUnreachable';
  readonly result: RatesResult;

  constructor(provider: RateProvider, last: RateProviderError, result: RatesResult) {
    super(unreachableMessage(provider, last, result), { provider: provider.kind, problem: last.problem, result });
    this.result = result;
  }
}

/**
 * Fetches the USD rates of the foreign currencies for the business days (Monday to Friday,
 * UTC) that have none stored: from the day after the earliest of the currencies' latest
 * rates through today, at most BACKFILL_DAYS back. Frankfurter is asked once per such day,
 * oldest first; the ECB publishes only its latest day, so it is asked once. Each answer is
 * stored under its quote's own date through the write door (rates.store: storeQuotedRates) (never overwriting, refusing
 * bad rates). Weekends and holidays get no row: a rate is read as the latest on or before a
 * date.
 *
 * Provider problems never escape as themselves: if any request failed or any rate was refused
 * the run rejects, after storing the rest, so the pool records a failure and retries. When the
 * provider could not be reached at all (isUnreachable) it rejects with RateProviderUnreachable
 * and logs nothing itself: offline, the pool's one warning line is the whole of the log. Any
 * other failure or refusal is logged here as a warning and the run rejects with a
 * RatesJobError that sums them up. A database error propagates.
 */
export async function runRatesJob(context: RatesContext): Promise<RatesResult> {
  const { db, clock, provider, log } = context;
  const today = todayUtc(clock);
  const result: RatesResult = { requested: 0, stored: 0, kept: 0, refused: 0, failed: 0, upToDate: false };

  const latestDates = FOREIGN_CURRENCIES.map((currency) => rateOnOrBefore(db, currency, today)?.date);
  const lastBusinessDay = businessDayOnOrBefore(today);
  if (latestDates.every((date) => date !== undefined && date >= lastBusinessDay)) {
    return { ...result, upToDate: true };
  }

  const windowStart = addDays(today, -(BACKFILL_DAYS - 1));
  const storedDates = latestDates.filter((date): date is string => date !== undefined);
  // A currency with no rate at all needs the whole window; otherwise, after the oldest latest rate.
  const afterOldest = storedDates.length === latestDates.length ? addDays(storedDates.reduce((a, b) => (a < b ? a : b)), 1) : windowStart;
  const from = afterOldest > windowStart ? afterOldest : windowStart;
  const days = provider.kind === 'ecb' ? ['latest'] : missingBusinessDays(db, from, today);

  const failures: { date: string; error: RateProviderError }[] = [];
  const refusals: RefusedRate[] = [];
  const quoteDates = new Set<string>();
  let failuresInARow = 0;
  let notAsked = 0;

  for (const [index, day] of days.entries()) {
    if (failuresInARow >= MAX_FAILURES_IN_A_ROW) {
      notAsked = days.length - index;
      break;
    }
    result.requested += 1;
    let quoted: QuotedRates;
    try {
      quoted = await fetchUsdRates(provider, day, { timeoutMs: context.timeoutMs, fetch: context.fetch });
      // The ECB's date is whatever its file says; a day after today is no real quote.
      if (quoted.date > today) throw new RateProviderError(provider.kind, 'bad_date', `quote date ${quoted.date} is after today, ${today}`);
    } catch (error) {
      if (!(error instanceof RateProviderError)) throw error;
      result.failed += 1;
      failuresInARow += 1;
      failures.push({ date: day, error });
      // An unreachable provider is summed up in the run's one line; a bad answer is worth its own.
      log[isUnreachable(error.problem) ? 'debug' : 'warn']({ provider: provider.kind, date: day, problem: error.problem, error: error.message }, 'exchange-rate request failed');
      continue;
    }
    failuresInARow = 0;

    // A holiday is answered with the business day before it, which may already have come.
    if (quoteDates.has(quoted.date)) continue;
    quoteDates.add(quoted.date);

    const stored = writeNow({ db, clock }, RATES_JOB, storeQuoteCommand, { source: provider.kind, quoted });
    result.stored += stored.stored;
    result.kept += stored.kept;
    result.refused += stored.refused.length;
    for (const refusal of stored.refused) {
      refusals.push(refusal);
      log.warn(
        {
          provider: provider.kind,
          currency: refusal.currency,
          date: refusal.date,
          usdPerUnit: refusal.usdPerUnit,
          previous: refusal.previous ? { date: refusal.previous.date, usdPerUnit: refusal.previous.usdPerUnit } : null,
          reason: refusal.reason,
        },
        `exchange rate refused: ${refusal.message}`,
      );
    }
  }

  const last = failures[failures.length - 1];
  if (last && refusals.length === 0 && failures.every((failure) => isUnreachable(failure.error.problem))) {
    throw new RateProviderUnreachable(provider, last.error, result);
  }
  if (failures.length > 0 || refusals.length > 0) throw new RatesJobError(summary(result, failures, refusals, notAsked), result);
  return result;
}

/**
 * "exchange rates not fetched: the frankfurter rate provider at https://api.frankfurter.app cannot
 * be reached, request failed (ENOTFOUND). If this machine is offline on purpose, ...": what
 * happened, and the two settings an operator who runs the server offline would reach for.
 */
function unreachableMessage(provider: RateProvider, last: RateProviderError, result: RatesResult): string {
  const fetched = result.stored > 0 ? `${result.stored} exchange ${result.stored === 1 ? 'rate' : 'rates'} fetched, the rest not` : 'exchange rates not fetched';
  // The address may carry a key in its query (docs/configuration.md): never shown whole.
  return (
    `${fetched}: the ${provider.kind} rate provider at ${redactUrl(provider.url)} cannot be reached, ${last.detail}. ` +
    'If this machine is offline on purpose, DAYBOOK_JOB_RATES=off turns the rates job off; DAYBOOK_FX_PROVIDER_URL points it at another provider.'
  );
}

/** The business days from `from` through `to` on which at least one currency has no rate stored. */
function missingBusinessDays(db: Db, from: string, to: string): string[] {
  const counts = new Map(
    all<{ rate_date: string; currencies: bigint | number }>(db, 'SELECT rate_date, COUNT(*) AS currencies FROM exchange_rates WHERE rate_date BETWEEN ? AND ? GROUP BY rate_date', from, to).map(
      (row) => [row.rate_date, Number(row.currencies)],
    ),
  );
  const days: string[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) {
    if (isBusinessDay(day) && (counts.get(day) ?? 0) < FOREIGN_CURRENCIES.length) days.push(day);
  }
  return days;
}

function isBusinessDay(date: string): boolean {
  const weekday = new Date(`${date}T00:00:00.000Z`).getUTCDay();
  return weekday >= 1 && weekday <= 5;
}

function businessDayOnOrBefore(date: string): string {
  let day = date;
  while (!isBusinessDay(day)) day = addDays(day, -1);
  return day;
}

/** "2 of 5 rate requests failed: 2026-03-12: ...; 1 rate refused: ...", naming the first few of each. */
function summary(result: RatesResult, failures: { date: string; error: RateProviderError }[], refusals: RefusedRate[], notAsked: number): string {
  const listed = <T>(items: T[], describe: (item: T) => string): string => {
    const named = items.slice(0, SUMMARY_ITEMS).map(describe).join('; ');
    return items.length > SUMMARY_ITEMS ? `${named}; and ${items.length - SUMMARY_ITEMS} more` : named;
  };
  const parts: string[] = [];
  if (failures.length > 0) {
    const stopped = notAsked > 0 ? ` (stopped after ${MAX_FAILURES_IN_A_ROW} failures in a row; ${notAsked} more ${notAsked === 1 ? 'day' : 'days'} not asked)` : '';
    parts.push(`${failures.length} of ${result.requested} rate requests failed${stopped}: ${listed(failures, (failure) => `${failure.date}: ${failure.error.message}`)}`);
  }
  if (refusals.length > 0) {
    parts.push(`${refusals.length} ${refusals.length === 1 ? 'rate' : 'rates'} refused: ${listed(refusals, (refusal) => refusal.message)}`);
  }
  return parts.join('. ');
}
