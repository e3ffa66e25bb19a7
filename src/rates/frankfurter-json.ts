import { parseJsonLossless } from './json-numbers.js';
import { RateProviderError } from './provider-error.js';
import { type EurQuotes, type Quote, QUOTED_CODES, readQuote } from './usd-per-unit.js';

// Frankfurter: {"amount":1.0,"base":"EUR","date":"2026-03-13","rates":{"CAD":1.4591,...}}

/** Reads Frankfurter's answer for one day; a currency it lacks is left for the caller to report. */
export function readFrankfurter(text: string): EurQuotes {
  const kind = 'frankfurter';
  const malformed = (detail: string) => new RateProviderError(kind, 'malformed', detail);
  // JSON.parse only confirms the text is JSON; its numbers are floats and are never used.
  try {
    JSON.parse(text);
  } catch {
    throw malformed('answer is not JSON');
  }
  const root = parseJsonLossless(text, malformed);
  if (root.kind !== 'object') throw malformed('answer is not a JSON object');

  const base = root.entries.get('base');
  if (!base || base.kind !== 'string') throw malformed('answer has no "base"');
  if (base.value !== 'EUR') throw malformed(`answer is based on ${JSON.stringify(base.value)}, not the EUR asked for`);

  const date = root.entries.get('date');
  if (!date || date.kind !== 'string') throw malformed('answer has no "date" (a range answer is not accepted)');

  // The rates are per `amount` euros (1 unless asked otherwise): that is the euro's own quote.
  const amount = root.entries.get('amount');
  let eur: Quote = { units: 1n, scale: 0 };
  if (amount) {
    if (amount.kind !== 'number') throw malformed('"amount" is not a number');
    eur = readQuote(kind, 'EUR (amount)', amount.text);
  }

  const rates = root.entries.get('rates');
  if (!rates || rates.kind !== 'object') throw malformed('answer has no "rates" object');
  const quotes = new Map<string, Quote>();
  for (const code of QUOTED_CODES) {
    const value = rates.entries.get(code);
    if (!value) continue; // reported as a missing currency by the caller
    if (value.kind !== 'number') throw new RateProviderError(kind, 'bad_rate', `${code} rate is not a number`);
    quotes.set(code, readQuote(kind, code, value.text));
  }
  return { date: date.value, eur, quotes };
}
