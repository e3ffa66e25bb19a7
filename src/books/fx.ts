import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { isIsoDate } from '../dates.js';
import type { Db } from '../db/connection.js';
import { inTransaction } from '../db/connection.js';
import { one, run } from '../db/statements.js';
import { validationFailed } from '../errors.js';
import { type Actor, recordAudit } from './audit.js';
import { FOREIGN_CURRENCIES, type ForeignCurrency, FX_RATE_SCALE, parseDecimal } from '../money.js';

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
