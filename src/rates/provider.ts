import type { FxProvider } from '../config.js';
import { isIsoDate } from '../dates.js';
import { normalizeRate } from '../books/fx.js';
import { divideRoundHalfAwayFromZero, FOREIGN_CURRENCIES, type ForeignCurrency, FX_RATE_SCALE } from '../money.js';

/**
 * The exchange-rate provider client: one request to Frankfurter (JSON) or the ECB's daily
 * file (XML), both quoting units of each currency per one euro, turned into US dollars per
 * unit of each foreign currency.
 *
 * The quotes are read as decimal text straight from the response body (JSON.parse would
 * make them floats) and converted with bigint arithmetic only. USD per X is
 * usdQuote / xQuote, rounded half away from zero to FX_RATE_SCALE (10) decimals, the scale
 * exchange_rates stores; the rounding is done on the exact quotient (integer division
 * with its remainder), so a result that terminates within 10 decimals is exact and any
 * other is rounded once, never twice.
 */

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
  rates: { currency: ForeignCurrency; usdPerUnit: string }[];
}

/** What went wrong, for callers that branch; the message is for people. */
export type RateProviderProblem =
  | 'unreachable'
  | 'timeout'
  | 'http_status'
  | 'too_large'
  | 'malformed'
  | 'missing_currency'
  | 'bad_rate'
  | 'bad_date';

export class RateProviderError extends Error {
  override name = 'RateProviderError';
  readonly provider: FxProvider;
  readonly problem: RateProviderProblem;
  /** The message without the provider's name before it. */
  readonly detail: string;

  constructor(provider: FxProvider, problem: RateProviderProblem, detail: string) {
    super(`${provider} rate provider: ${detail}`);
    this.provider = provider;
    this.problem = problem;
    this.detail = detail;
  }
}

/**
 * The problems that mean no answer came to judge: the provider could not be reached (no
 * network, a name that does not resolve, a refused connection) or did not finish answering in
 * time. On a machine kept offline they are the normal case, not a fault of the provider's.
 */
export function isUnreachable(problem: RateProviderProblem): boolean {
  return problem === 'unreachable' || problem === 'timeout';
}

export const DEFAULT_TIMEOUT_MS = 5000;
const MAX_TIMEOUT_MS = 60_000;
/** Both answers are a few hundred bytes to a couple of kilobytes; anything near this is not one. */
const MAX_BODY_BYTES = 256 * 1024;
/** Bounds on a quote's digits, far beyond any real one; they only bound the arithmetic. */
const MAX_WHOLE_DIGITS = 15;
const MAX_FRACTION_DIGITS = 20;
/** Nesting deeper than this is no Frankfurter answer; it also bounds the parser's recursion. */
const MAX_JSON_DEPTH = 16;

/** The codes each provider is asked for and must answer: USD plus every foreign currency but EUR (the base). */
const QUOTED_CODES = ['USD', ...FOREIGN_CURRENCIES.filter((currency) => currency !== 'EUR')] as const;

/** A quote read from the wire: `units` x 10^-scale, both from the decimal text. */
interface Quote {
  units: bigint;
  scale: number;
}

/** A provider's answer before conversion: quotes of units per `eur` euros. */
interface EurQuotes {
  date: string;
  eur: Quote;
  quotes: Map<string, Quote>;
}

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

  const text = await fetchText(provider, requestUrl(provider, date), timeoutMs, options.fetch ?? fetch);
  const quoted = provider.kind === 'frankfurter' ? readFrankfurter(text) : readEcb(text);

  if (!isIsoDate(quoted.date)) throw new RateProviderError(provider.kind, 'bad_date', `quote date ${JSON.stringify(quoted.date)} is not a date YYYY-MM-DD`);
  // Frankfurter answers the asked day or the business day before it; a later day is a wrong answer.
  // The ECB file has only its latest day, so its date is whatever it is.
  if (provider.kind === 'frankfurter' && date !== 'latest' && quoted.date > date) {
    throw new RateProviderError(provider.kind, 'bad_date', `asked for ${date}, answered a later day ${quoted.date}`);
  }
  const usdQuote = quoted.quotes.get('USD');
  if (!usdQuote) throw new RateProviderError(provider.kind, 'missing_currency', 'the answer has no USD rate');

  const rates = FOREIGN_CURRENCIES.map((currency) => {
    const quote = currency === 'EUR' ? quoted.eur : quoted.quotes.get(currency);
    if (!quote) throw new RateProviderError(provider.kind, 'missing_currency', `the answer has no ${currency} rate`);
    return { currency, usdPerUnit: usdPerUnitText(provider.kind, currency, usdQuote, quote) };
  });
  return { date: quoted.date, rates };
}

function requestUrl(provider: RateProvider, date: string): string {
  if (provider.kind === 'ecb') return provider.url;
  return `${provider.url.replace(/\/+$/, '')}/${date}?from=EUR&to=${QUOTED_CODES.join(',')}`;
}

/** GET `url` and its body as UTF-8 text, all within `timeoutMs` and MAX_BODY_BYTES. */
async function fetchText(provider: RateProvider, url: string, timeoutMs: number, fetchFn: typeof fetch): Promise<string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const timedOut = () => new RateProviderError(provider.kind, 'timeout', `no complete answer within ${timeoutMs} ms`);
  try {
    let response: Response;
    try {
      response = await fetchFn(url, { signal: controller.signal, headers: { accept: provider.kind === 'ecb' ? 'application/xml, text/xml' : 'application/json' } });
    } catch (error) {
      if (controller.signal.aborted) throw timedOut();
      throw new RateProviderError(provider.kind, 'unreachable', `request failed (${describeFetchError(error)})`);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new RateProviderError(provider.kind, 'http_status', `answered HTTP ${response.status}`);
    }
    try {
      return await readBody(provider, response);
    } catch (error) {
      if (controller.signal.aborted) throw timedOut();
      if (error instanceof RateProviderError) throw error;
      throw new RateProviderError(provider.kind, 'unreachable', `reading the answer failed (${describeFetchError(error)})`);
    }
  } finally {
    clearTimeout(timer);
  }
}

async function readBody(provider: RateProvider, response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new RateProviderError(provider.kind, 'too_large', `answer is larger than ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new RateProviderError(provider.kind, 'malformed', 'answer is not UTF-8 text');
  }
}

function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  // fetch's own refusals (a port it will not connect to, such as 9 or 25) have a message but no code.
  if (cause && typeof cause.message === 'string' && cause.message !== '') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

// ---------------------------------------------------------------------------------------
// Decimal quotes and the conversion

/**
 * Reads a quote from its decimal text: plain digits with an optional fraction, greater
 * than zero. An exponent (1e-3), a sign or anything else is refused, not interpreted.
 */
function readQuote(kind: FxProvider, label: string, text: string): Quote {
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

// ---------------------------------------------------------------------------------------
// Frankfurter: {"amount":1.0,"base":"EUR","date":"2026-03-13","rates":{"CAD":1.4591,...}}

function readFrankfurter(text: string): EurQuotes {
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

/** A JSON value whose numbers keep their source text. */
type JsonValue =
  | { kind: 'object'; entries: Map<string, JsonValue> }
  | { kind: 'array'; items: JsonValue[] }
  | { kind: 'string'; value: string }
  | { kind: 'number'; text: string }
  | { kind: 'literal' };

const JSON_WS = /[ \t\n\r]*/y;
const JSON_STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const JSON_NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const JSON_LITERAL = /true|false|null/y;

/** A small JSON parser that keeps each number as its digits; duplicate keys are refused. */
function parseJsonLossless(text: string, malformed: (detail: string) => Error): JsonValue {
  let position = 0;

  const skipWhitespace = () => {
    JSON_WS.lastIndex = position;
    JSON_WS.exec(text);
    position = JSON_WS.lastIndex;
  };
  const take = (pattern: RegExp): string | undefined => {
    pattern.lastIndex = position;
    const match = pattern.exec(text);
    if (!match) return undefined;
    position = pattern.lastIndex;
    return match[0];
  };
  const expect = (char: string) => {
    skipWhitespace();
    if (text[position] !== char) throw malformed(`answer is not valid JSON (expected ${char} at ${position})`);
    position += 1;
  };
  const readString = (): string => {
    const token = take(JSON_STRING);
    if (token === undefined) throw malformed(`answer is not valid JSON (expected a string at ${position})`);
    return JSON.parse(token) as string;
  };

  const readValue = (depth: number): JsonValue => {
    if (depth > MAX_JSON_DEPTH) throw malformed(`answer nests deeper than ${MAX_JSON_DEPTH}`);
    skipWhitespace();
    const char = text[position];
    if (char === '{') {
      position += 1;
      const entries = new Map<string, JsonValue>();
      skipWhitespace();
      if (text[position] === '}') {
        position += 1;
        return { kind: 'object', entries };
      }
      for (;;) {
        skipWhitespace();
        const key = readString();
        if (entries.has(key)) throw malformed(`answer repeats the key ${JSON.stringify(key)}`);
        expect(':');
        entries.set(key, readValue(depth + 1));
        skipWhitespace();
        if (text[position] === ',') {
          position += 1;
          continue;
        }
        expect('}');
        return { kind: 'object', entries };
      }
    }
    if (char === '[') {
      position += 1;
      const items: JsonValue[] = [];
      skipWhitespace();
      if (text[position] === ']') {
        position += 1;
        return { kind: 'array', items };
      }
      for (;;) {
        items.push(readValue(depth + 1));
        skipWhitespace();
        if (text[position] === ',') {
          position += 1;
          continue;
        }
        expect(']');
        return { kind: 'array', items };
      }
    }
    if (char === '"') return { kind: 'string', value: readString() };
    const number = take(JSON_NUMBER);
    if (number !== undefined) return { kind: 'number', text: number };
    if (take(JSON_LITERAL) !== undefined) return { kind: 'literal' };
    throw malformed(`answer is not valid JSON (unexpected input at ${position})`);
  };

  const value = readValue(0);
  skipWhitespace();
  if (position !== text.length) throw malformed(`answer is not valid JSON (trailing input at ${position})`);
  return value;
}

// ---------------------------------------------------------------------------------------
// ECB: <gesmes:Envelope ...><Cube><Cube time='2026-03-13'><Cube currency='USD' rate='1.0812'/>...

const XML_NAME = /[A-Za-z_][A-Za-z0-9_.:-]*/y;
const XML_ATTRIBUTE = /\s+([A-Za-z_][A-Za-z0-9_.:-]*)\s*=\s*(?:"([^"<]*)"|'([^'<]*)')/y;
const XML_TAG_END = /\s*(\/?)>/y;

/**
 * Reads the daily reference-rate file. The XML is checked for well-formed, balanced tags
 * (no DOCTYPE or CDATA: the ECB uses neither, and refusing DOCTYPE keeps entities out);
 * exactly one dated Cube must hold the day's rates.
 */
function readEcb(text: string): EurQuotes {
  const kind = 'ecb';
  const malformed = (detail: string) => new RateProviderError(kind, 'malformed', detail);
  const stack: { name: string; day?: { date: string; quotes: Map<string, Quote> } }[] = [];
  const days: { date: string; quotes: Map<string, Quote> }[] = [];
  let roots = 0;
  let position = 0;

  while (position < text.length) {
    const open = text.indexOf('<', position);
    if (open === -1) {
      if (text.slice(position).trim() !== '' && stack.length === 0) throw malformed('answer has text outside its root element');
      break;
    }
    if (stack.length === 0 && text.slice(position, open).trim() !== '') throw malformed('answer has text outside its root element');
    position = open;
    if (text.startsWith('<?', position)) {
      const close = text.indexOf('?>', position);
      if (close === -1) throw malformed('answer is not well-formed XML (unclosed <?)');
      position = close + 2;
      continue;
    }
    if (text.startsWith('<!--', position)) {
      const close = text.indexOf('-->', position);
      if (close === -1) throw malformed('answer is not well-formed XML (unclosed comment)');
      position = close + 3;
      continue;
    }
    if (text.startsWith('<!', position)) throw malformed('answer has a DOCTYPE or CDATA section, which the ECB file never has');
    if (text.startsWith('</', position)) {
      XML_NAME.lastIndex = position + 2;
      const name = XML_NAME.exec(text)?.[0];
      const closeAt = XML_NAME.lastIndex;
      XML_TAG_END.lastIndex = closeAt;
      const end = name === undefined ? null : XML_TAG_END.exec(text);
      if (!name || !end || end[1] === '/') throw malformed(`answer is not well-formed XML (bad end tag at ${position})`);
      const top = stack.pop();
      if (!top || top.name !== name) throw malformed(`answer is not well-formed XML (</${name}> does not close ${top ? `<${top.name}>` : 'anything'})`);
      position = XML_TAG_END.lastIndex;
      continue;
    }

    // A start tag or an empty-element tag.
    XML_NAME.lastIndex = position + 1;
    const name = XML_NAME.exec(text)?.[0];
    if (!name) throw malformed(`answer is not well-formed XML (bad tag at ${position})`);
    let cursor = XML_NAME.lastIndex;
    const attributes = new Map<string, string>();
    for (;;) {
      XML_ATTRIBUTE.lastIndex = cursor;
      const attribute = XML_ATTRIBUTE.exec(text);
      if (!attribute) break;
      const attributeName = attribute[1] ?? '';
      if (attributes.has(attributeName)) throw malformed(`answer is not well-formed XML (<${name}> repeats ${attributeName})`);
      attributes.set(attributeName, attribute[2] ?? attribute[3] ?? '');
      cursor = XML_ATTRIBUTE.lastIndex;
    }
    XML_TAG_END.lastIndex = cursor;
    const end = XML_TAG_END.exec(text);
    if (!end) throw malformed(`answer is not well-formed XML (bad tag <${name}> at ${position})`);
    position = XML_TAG_END.lastIndex;
    if (stack.length === 0) {
      roots += 1;
      if (roots > 1) throw malformed('answer is not well-formed XML (more than one root element)');
    }

    const parent = stack[stack.length - 1];
    const element: (typeof stack)[number] = { name };
    if (localName(name) === 'Cube') {
      const time = attributes.get('time');
      const currency = attributes.get('currency');
      if (time !== undefined) {
        element.day = { date: time, quotes: new Map() };
        days.push(element.day);
      } else if (currency !== undefined) {
        const day = parent?.day;
        if (!day) throw malformed(`the ${currency} rate is not inside a dated Cube`);
        const rate = attributes.get('rate');
        if (rate === undefined) throw malformed(`the ${currency} Cube has no rate`);
        if (day.quotes.has(currency)) throw malformed(`the ${currency} rate appears twice`);
        if ((QUOTED_CODES as readonly string[]).includes(currency)) day.quotes.set(currency, readQuote(kind, currency, rate));
      }
    }
    if (end[1] !== '/') stack.push(element);
  }

  if (stack.length > 0) throw malformed(`answer is not well-formed XML (<${stack[stack.length - 1]?.name}> is never closed)`);
  if (roots === 0) throw malformed('answer is not XML');
  const [day, ...more] = days;
  if (!day) throw malformed('answer has no dated Cube');
  if (more.length > 0) throw malformed(`answer holds ${days.length} days; the daily file (eurofxref-daily.xml) holds one`);
  return { date: day.date, eur: { units: 1n, scale: 0 }, quotes: day.quotes };
}

function localName(name: string): string {
  const colon = name.lastIndexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}
