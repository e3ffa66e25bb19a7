import type { FxProvider } from '../config.js';
import { normalizeRate } from '../books/fx.js';
import { divideRoundHalfAwayFromZero, FOREIGN_CURRENCIES, type ForeignCurrency, FX_RATE_SCALE } from '../money.js';
import { RateProviderError } from './provider-error.js';

/**
 * A provider's quotes, units of each currency per euro, turned into US dollars per unit of
 * each foreign currency.
 *
 * The quotes are read as decimal text (JSON.parse would make them floats) and converted with
 * bigint arithmetic only. USD per X is usdQuote / xQuote, rounded half away from zero to
 * FX_RATE_SCALE (10) decimals, the scale exchange_rates stores; the rounding is done on the
 * exact quotient (integer division with its remainder), so a result that terminates within
 * 10 decimals is exact and any other is rounded once, never twice.
 */

/** Bounds on a quote's digits, far beyond any real one; they only bound the arithmetic. */
const MAX_WHOLE_DIGITS = 15;
const MAX_FRACTION_DIGITS = 20;

/** The codes each provider is asked for and must answer: USD plus every foreign currency but EUR (the base). */
export const QUOTED_CODES = ['USD', ...FOREIGN_CURRENCIES.filter((currency) => currency !== 'EUR')] as const;

/** A quote read from the wire: `units` x 10^-scale, both from the decimal text. */
export interface Quote {
  units: bigint;
  scale: number;
}

/** A provider's answer before conversion: quotes of units per `eur` euros. */
export interface EurQuotes {
  date: string;
  eur: Quote;
  quotes: Map<string, Quote>;
}

/** One foreign currency's rate; `usdPerUnit` is canonical decimal text, as normalizeRate writes it. */
export interface UsdPerUnit {
  currency: ForeignCurrency;
  usdPerUnit: string;
}

/**
 * Reads a quote from its decimal text: plain digits with an optional fraction, greater
 * than zero. An exponent (1e-3), a sign or anything else is refused, not interpreted.
 */
export function readQuote(kind: FxProvider, label: string, text: string): Quote {
  if (/^-/.test(text)) throw new RateProviderError(kind, 'bad_rate', `${label} rate ${text} is negative`);
  const match = /^([0-9]+)(?:\.([0-9]+))?$/.exec(text);
  if (!match) throw new RateProviderError(kind, 'bad_rate', `${label} rate ${JSON.stringify(text)} is not a plain decimal number`);
  const whole = match[1] ?? '';
  const fraction = match[2] ?? '';
  if (whole.length > MAX_WHOLE_DIGITS || fraction.length > MAX_FRACTION_DIGITS) {
    throw new RateProviderError(kind, 'bad_rate', `${label} rate ${text} has more digits than any real quote`);
  }
  const units = BigInt(whole + fraction);
  if (units === 0n) throw new RateProviderError(kind, 'bad_rate', `${label} rate ${text} is zero`);
  return { units, scale: fraction.length };
}

/**
 * USD per unit of every foreign currency, in FOREIGN_CURRENCIES order, as canonical decimal
 * text. A currency the answer lacks, USD included, is a missing_currency error.
 */
export function usdPerUnitRates(kind: FxProvider, quoted: EurQuotes): UsdPerUnit[] {
  const usdQuote = quoted.quotes.get('USD');
  if (!usdQuote) throw new RateProviderError(kind, 'missing_currency', 'the answer has no USD rate');
  return FOREIGN_CURRENCIES.map((currency) => {
    const quote = currency === 'EUR' ? quoted.eur : quoted.quotes.get(currency);
    if (!quote) throw new RateProviderError(kind, 'missing_currency', `the answer has no ${currency} rate`);
    return { currency, usdPerUnit: usdPerUnitText(kind, currency, usdQuote, quote) };
  });
}

/**
 * USD per one unit of a currency from two quotes in the same base:
 *   usd / x = (a / 10^s) / (b / 10^t) = a x 10^t / (b x 10^s),
 * scaled by 10^FX_RATE_SCALE and rounded half away from zero on the exact quotient.
 */
function usdPerUnitText(kind: FxProvider, currency: ForeignCurrency, usd: Quote, unit: Quote): string {
  const numerator = usd.units * 10n ** BigInt(unit.scale + FX_RATE_SCALE);
  const denominator = unit.units * 10n ** BigInt(usd.scale);
  const scaled = divideRoundHalfAwayFromZero(numerator, denominator);
  const digits = scaled.toString().padStart(FX_RATE_SCALE + 1, '0');
  const text = `${digits.slice(0, -FX_RATE_SCALE)}.${digits.slice(-FX_RATE_SCALE)}`;
  try {
    // The same check setRate makes, so nothing returned here can be refused when stored.
    return normalizeRate(text);
  } catch (error) {
    throw new RateProviderError(kind, 'bad_rate', `USD per ${currency} works out to ${text}, which cannot be stored (${(error as Error).message})`);
  }
}
