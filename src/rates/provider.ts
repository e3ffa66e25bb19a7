import type { FxProvider } from '../config.js';
import { isIsoDate } from '../dates.js';
import { readEcb } from './ecb-xml.js';
import { readFrankfurter } from './frankfurter-json.js';
import { fetchText } from './limited-fetch.js';
import { RateProviderError } from './provider-error.js';
import { QUOTED_CODES, type UsdPerUnit, usdPerUnitRates } from './usd-per-unit.js';

/**
 * The exchange-rate provider client: one request to Frankfurter (JSON, frankfurter-json.ts)
 * or the ECB's daily file (XML, ecb-xml.ts), both quoting units of each currency per one
 * euro, turned into US dollars per unit of each foreign currency (usd-per-unit.ts).
 */

// The errors are part of what fetchUsdRates answers, so its callers find them here.

export interface RateProvider {
  kind: FxProvider;
  /** Frankfurter: the API root (https://api.frankfurter.app). ECB: the daily file itself. */
  url: string;
}

export interface FetchRatesOptions {
  /** The whole exchange, headers and body, must finish within this; default 5000. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface QuotedRates {
  /** The quote's own date: for a weekend or holiday, the latest earlier business day. */
  date: string;
  /** One entry per foreign currency, in FOREIGN_CURRENCIES order; canonical decimal text. */
  rates: UsdPerUnit[];
}

export const DEFAULT_TIMEOUT_MS = 5000;
const MAX_TIMEOUT_MS = 60_000;

/**
 * Fetches the provider's quote for `date` (or its latest) and converts it to USD per unit.
 * Throws RateProviderError for anything the provider got wrong; it never returns a rate it
 * could not read exactly.
 */
export async function fetchUsdRates(provider: RateProvider, date: string | 'latest', options: FetchRatesOptions = {}): Promise<QuotedRates> {
  if (provider.kind !== 'frankfurter' && provider.kind !== 'ecb') throw new Error(`fetchUsdRates: unknown provider ${String(provider.kind)}`);
  if (date !== 'latest' && !isIsoDate(date)) throw new Error(`fetchUsdRates: date must be 'latest' or YYYY-MM-DD, got ${date}`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS) {
    throw new Error(`fetchUsdRates: timeoutMs must be a whole number from 1 to ${MAX_TIMEOUT_MS}, got ${timeoutMs}`);
  }

  const accept = provider.kind === 'ecb' ? 'application/xml, text/xml' : 'application/json';
  const text = await fetchText(provider.kind, requestUrl(provider, date), accept, timeoutMs, options.fetch ?? fetch);
  const quoted = provider.kind === 'frankfurter' ? readFrankfurter(text) : readEcb(text);

  if (!isIsoDate(quoted.date)) throw new RateProviderError(provider.kind, 'bad_date', `quote date ${JSON.stringify(quoted.date)} is not a date YYYY-MM-DD`);
  // Frankfurter answers the asked day or the business day before it; a later day is a wrong answer.
  // The ECB file has only its latest day, so its date is whatever it is.
  if (provider.kind === 'frankfurter' && date !== 'latest' && quoted.date > date) {
    throw new RateProviderError(provider.kind, 'bad_date', `asked for ${date}, answered a later day ${quoted.date}`);
  }
  return { date: quoted.date, rates: usdPerUnitRates(provider.kind, quoted) };
}

function requestUrl(provider: RateProvider, date: string): string {
  if (provider.kind === 'ecb') return provider.url;
  return `${provider.url.replace(/\/+$/, '')}/${date}?from=EUR&to=${QUOTED_CODES.join(',')}`;
}
