/**
 * Money is bigint cents from the wire to the database and back; a JS number never holds it.
 * Quantities and rates are decimal strings parsed to scaled bigints. Rounding is half away
 * from zero, to the cent.
 */

export const CURRENCIES = ['USD', 'CAD', 'EUR', 'GBP', 'MXN'] as const;
export type Currency = (typeof CURRENCIES)[number];
export type ForeignCurrency = Exclude<Currency, 'USD'>;
/** The currencies an exchange rate converts to US dollars. */
export const FOREIGN_CURRENCIES = CURRENCIES.filter((currency): currency is ForeignCurrency => currency !== 'USD');

/** Every line amount, subtotal and total must stay strictly under this (ten trillion dollars). */
export const AMOUNT_CEILING_CENTS = 10n ** 15n;

/** Longest digit string accepted as cents; far above the ceiling, it only bounds parsing work. */
export const MAX_CENTS_DIGITS = 30;

const DIGITS = /^[0-9]+$/;
const SIGNED_DIGITS = /^-?[0-9]+$/;

export class MoneyError extends Error {
  override name = 'MoneyError';
}

export interface Money {
  cents: string;
  formatted: string;
  currency: Currency;
}

/** A decimal as an integer count of 10^-scale units: "1.25" at scale 6 is 1_250_000n. */
export interface ScaledDecimal {
  units: bigint;
  scale: number;
}

export function isCurrency(value: unknown): value is Currency {
  return typeof value === 'string' && (CURRENCIES as readonly string[]).includes(value);
}

/** Parses the API's money form: a string of digits only. */
export function parseCents(text: string): bigint {
  if (typeof text !== 'string' || !DIGITS.test(text)) throw new MoneyError('must be a string of digits');
  if (text.length > MAX_CENTS_DIGITS) throw new MoneyError(`must have at most ${MAX_CENTS_DIGITS} digits`);
  return BigInt(text);
}

/** Parses a signed digit string, as report figures are written ("-123"). */
export function parseSignedCents(text: string): bigint {
  if (typeof text !== 'string' || !SIGNED_DIGITS.test(text)) throw new MoneyError('must be a string of digits, optionally signed');
  if (text.replace('-', '').length > MAX_CENTS_DIGITS) throw new MoneyError(`must have at most ${MAX_CENTS_DIGITS} digits`);
  return BigInt(text);
}

/** The wire form of cents: digits, with a leading minus only for negative figures. */
export function centsToString(cents: bigint): string {
  assertBigint(cents);
  return cents.toString();
}

const SYMBOLS: Record<Currency, string> = { USD: '$', CAD: 'CA$', EUR: '€', GBP: '£', MXN: 'MX$' };

/** Display text such as "$1,234.56" or "-€0.05"; clients must not parse it. */
export function formatMoney(cents: bigint, currency: Currency): string {
  assertBigint(cents);
  const negative = cents < 0n;
  const abs = negative ? -cents : cents;
  const whole = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = (abs % 100n).toString().padStart(2, '0');
  return `${negative ? '-' : ''}${SYMBOLS[currency]}${whole}.${fraction}`;
}

export function money(cents: bigint, currency: Currency): Money {
  return { cents: centsToString(cents), formatted: formatMoney(cents, currency), currency };
}

export function usd(cents: bigint): Money {
  return money(cents, 'USD');
}

/**
 * Parses an unsigned decimal with at most `maxScale` fractional digits ("3", "0.5",
 * "12.000001"), returned at exactly `maxScale`. No sign, exponent or bare point.
 */
export function parseDecimal(text: string, maxScale: number): ScaledDecimal {
  if (!Number.isInteger(maxScale) || maxScale < 0 || maxScale > 18) throw new Error(`parseDecimal: bad scale ${maxScale}`);
  if (typeof text !== 'string') throw new MoneyError('must be a decimal string');
  const match = /^([0-9]{1,30})(?:\.([0-9]+))?$/.exec(text);
  if (!match) throw new MoneyError('must be a decimal number such as 2 or 1.5');
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  if (fraction.length > maxScale) throw new MoneyError(`must have at most ${maxScale} decimal places`);
  return { units: BigInt(whole + fraction.padEnd(maxScale, '0')), scale: maxScale };
}

/** numerator / denominator rounded half away from zero. */
export function divideRoundHalfAwayFromZero(numerator: bigint, denominator: bigint): bigint {
  if (denominator === 0n) throw new Error('divideRoundHalfAwayFromZero: division by zero');
  const negative = numerator < 0n !== denominator < 0n;
  const n = numerator < 0n ? -numerator : numerator;
  const d = denominator < 0n ? -denominator : denominator;
  // floor(n/d + 1/2) on magnitudes, written in integers: rounds ties up, away from zero.
  const rounded = (2n * n + d) / (2n * d);
  return negative ? -rounded : rounded;
}

/** amount x decimal, rounded half away from zero to whole cents. */
export function multiplyCents(amountCents: bigint, factor: ScaledDecimal): bigint {
  assertBigint(amountCents);
  return divideRoundHalfAwayFromZero(amountCents * factor.units, 10n ** BigInt(factor.scale));
}

export const QUANTITY_SCALE = 6;
export const TAX_RATE_SCALE = 6;
export const FX_RATE_SCALE = 10;

/** Line amount = round(quantity x unit price). */
export function lineAmountCents(quantity: string, unitPriceCents: bigint): bigint {
  return multiplyCents(unitPriceCents, parseDecimal(quantity, QUANTITY_SCALE));
}

/** Tax = round(subtotal x rate / 100). */
export function taxCents(subtotalCents: bigint, ratePercent: string): bigint {
  const rate = parseDecimal(ratePercent, TAX_RATE_SCALE);
  return divideRoundHalfAwayFromZero(subtotalCents * rate.units, 100n * 10n ** BigInt(rate.scale));
}

/** USD = round(amount x usd-per-unit rate). */
export function convertToUsdCents(amountCents: bigint, usdPerUnit: string): bigint {
  return multiplyCents(amountCents, parseDecimal(usdPerUnit, FX_RATE_SCALE));
}

export function isUnderCeiling(cents: bigint): boolean {
  return cents < AMOUNT_CEILING_CENTS;
}

export function sumCents(values: Iterable<bigint>): bigint {
  let total = 0n;
  for (const value of values) {
    assertBigint(value);
    total += value;
  }
  return total;
}

function assertBigint(value: unknown): asserts value is bigint {
  if (typeof value !== 'bigint') throw new TypeError(`money must be bigint cents, got ${typeof value}`);
}
