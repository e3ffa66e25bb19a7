/**
 * Invoice arithmetic, exactly as DESIGN.md's posting-engine rules state it: pricing an
 * invoice, converting it to US dollars at send, how much of the receivable each payment
 * clears, and the cash basis's split of each payment into revenue and sales tax.
 *
 * Pure functions over bigint cents: no database, no HTTP. The invoice commands call them and
 * turn an InvoiceMathError (the caller's input broke a rule) into validation_failed on its
 * field. Any other throw here is a failed assertion: our own code passed something the rules
 * never allow, and crashing beats posting wrong books.
 */
import {
  FX_RATE_SCALE,
  MoneyError,
  QUANTITY_SCALE,
  TAX_RATE_SCALE,
  convertToUsdCents,
  divideRoundHalfAwayFromZero,
  isUnderCeiling,
  lineAmountCents,
  parseDecimal,
  sumCents,
  taxCents as taxOnSubtotalCents,
} from '../money.js';

export interface InvoiceLineInput {
  /** Decimal text, greater than zero, at most QUANTITY_SCALE places. */
  quantity: string;
  /** Whole cents of the invoice's currency. */
  unitPriceCents: bigint;
}

/** An invoice's amounts in its own currency. */
export interface PricedInvoice {
  lineAmountsCents: bigint[];
  subtotalCents: bigint;
  taxCents: bigint;
  totalCents: bigint;
}

/** An invoice's amounts in US dollars, fixed at send with the issue date's rate. */
export interface InvoiceUsdAmounts {
  subtotalUsdCents: bigint;
  taxUsdCents: bigint;
  totalUsdCents: bigint;
}

/** One payment's cash-basis recognition, in USD cents; the two parts sum to the payment's USD cash. */
export interface CashRecognition {
  revenueUsdCents: bigint;
  taxUsdCents: bigint;
}

/**
 * The caller's invoice broke a rule: `field` is the request path at fault (`lines.3.quantity`,
 * `lines`, `taxRatePercent`) and `problem` says what, so the command can answer
 * validation_failed with a message that starts with the field.
 */
export class InvoiceMathError extends Error {
  override name = 'InvoiceMathError';
  readonly field: string;
  readonly problem: string;

  constructor(field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.field = field;
    this.problem = problem;
  }
}

/** The largest tax rate, 100 %, in TAX_RATE_SCALE units. */
const MAX_TAX_RATE_UNITS = 100n * 10n ** BigInt(TAX_RATE_SCALE);

/**
 * Prices an invoice: line amount = round(quantity x unit price), subtotal = sum of lines,
 * tax = round(subtotal x rate / 100) (none without a rate), total = subtotal + tax.
 * Refuses, naming the field, anything the API contract does not allow.
 */
export function priceInvoice(lines: readonly InvoiceLineInput[], taxRatePercent?: string): PricedInvoice {
  if (!Array.isArray(lines)) throw new TypeError('priceInvoice: lines must be an array');
  if (lines.length === 0) throw new InvoiceMathError('lines', 'must have at least one line');

  const lineAmountsCents = lines.map((line, index) => priceLine(line, index));
  if (taxRatePercent !== undefined) checkTaxRate(taxRatePercent);

  const subtotalCents = sumCents(lineAmountsCents);
  if (!isUnderCeiling(subtotalCents)) throw new InvoiceMathError('lines', 'make the subtotal ten trillion dollars or more');

  const taxCents = taxRatePercent === undefined ? 0n : taxOnSubtotalCents(subtotalCents, taxRatePercent);
  const totalCents = subtotalCents + taxCents;
  // Only the tax can push a subtotal that is under the ceiling over it, so the rate is the field at fault.
  if (!isUnderCeiling(totalCents)) throw new InvoiceMathError('taxRatePercent', 'makes the total ten trillion dollars or more');
  // Tax on a zero subtotal is zero, so a zero total means the lines priced to nothing.
  if (totalCents === 0n) throw new InvoiceMathError('lines', 'the invoice total must be greater than zero');

  invariant(totalCents === sumCents(lineAmountsCents) + taxCents, 'total = sum of lines + tax');
  return { lineAmountsCents, subtotalCents, taxCents, totalCents };
}

function priceLine(line: InvoiceLineInput, index: number): bigint {
  const quantity = parseField(`lines.${index}.quantity`, line.quantity, QUANTITY_SCALE);
  if (quantity.units === 0n) throw new InvoiceMathError(`lines.${index}.quantity`, 'must be greater than zero');
  // A non-bigint price is our parsing's bug, not the caller's input: let it fail loudly.
  if (typeof line.unitPriceCents !== 'bigint') throw new TypeError(`priceInvoice: lines.${index}.unitPriceCents must be bigint cents`);
  if (line.unitPriceCents < 0n) throw new InvoiceMathError(`lines.${index}.unitPriceCents`, 'must not be negative');

  const amountCents = lineAmountCents(line.quantity, line.unitPriceCents);
  // Checked after rounding: 0.5 x 1,999,999,999,999,999 rounds up to the ceiling itself.
  if (!isUnderCeiling(amountCents)) {
    throw new InvoiceMathError(`lines.${index}.unitPriceCents`, 'makes the line amount ten trillion dollars or more');
  }
  return amountCents;
}

function checkTaxRate(text: string): void {
  const rate = parseField('taxRatePercent', text, TAX_RATE_SCALE);
  if (rate.units > MAX_TAX_RATE_UNITS) throw new InvoiceMathError('taxRatePercent', 'must be between 0 and 100');
}

/** parseDecimal with its refusal (malformed text, too many places) reported on the caller's field. */
function parseField(field: string, text: string, scale: number): { units: bigint } {
  try {
    return parseDecimal(text, scale);
  } catch (error) {
    if (error instanceof MoneyError) throw new InvoiceMathError(field, error.message);
    throw error;
  }
}

/**
 * Splits a non-negative total over non-negative weights in proportion, by the largest-remainder
 * method: each share is floor(total x weight / sum of weights), and the cents the floors leave
 * over go one each to the largest remainders, the earlier index first on a tie. The shares sum
 * to exactly the total and each is within one cent of its exact proportion; a zero weight gets
 * nothing (its remainder is zero, and fewer cents are left over than there are non-zero
 * remainders, so one never reaches it).
 */
export function allocate(totalCents: bigint, weights: readonly bigint[]): bigint[] {
  invariant(typeof totalCents === 'bigint' && totalCents >= 0n, 'allocate: the total must be non-negative bigint cents');
  invariant(weights.every((weight) => typeof weight === 'bigint' && weight >= 0n), 'allocate: weights must be non-negative bigints');
  const weightSum = weights.reduce((sum, weight) => sum + weight, 0n);
  if (weightSum === 0n) {
    invariant(totalCents === 0n, 'allocate: cannot spread a non-zero total over weights that are all zero');
    return weights.map(() => 0n);
  }

  const shares = weights.map((weight) => (totalCents * weight) / weightSum);
  const remainders = weights.map((weight) => (totalCents * weight) % weightSum);
  // Fewer than weights.length cents are left over (each floor loses less than one), so Number() is exact.
  const leftoverCents = Number(totalCents - sumCents(shares));
  const byLargestRemainder = weights
    .map((_, index) => index)
    .sort((a, b) => compareBigintsDescending(remainders[a]!, remainders[b]!) || a - b);
  for (const index of byLargestRemainder.slice(0, leftoverCents)) shares[index]! += 1n;

  invariant(sumCents(shares) === totalCents, 'allocate: shares sum to the total');
  invariant(shares.every((share, index) => weights[index] !== 0n || share === 0n), 'allocate: a zero weight gets nothing');
  return shares;
}

function compareBigintsDescending(a: bigint, b: bigint): number {
  return a > b ? -1 : a < b ? 1 : 0;
}

/**
 * An invoice in US dollars at send: subtotal and tax are each converted once at the issue
 * date's rate, and the USD total is their sum, not a third conversion, so the accrual entry
 * (receivable = revenue + tax payable) balances to the cent. usdPerUnit is '1' for USD.
 */
export function convertInvoice(subtotalCents: bigint, taxCents: bigint, usdPerUnit: string): InvoiceUsdAmounts {
  invariant(subtotalCents >= 0n && taxCents >= 0n, 'convertInvoice: subtotal and tax must be non-negative');
  checkUsdRate(usdPerUnit);
  const subtotalUsdCents = convertToUsdCents(subtotalCents, usdPerUnit);
  const taxUsdCents = convertToUsdCents(taxCents, usdPerUnit);
  return { subtotalUsdCents, taxUsdCents, totalUsdCents: subtotalUsdCents + taxUsdCents };
}

/**
 * The USD receivable one payment clears (accrual basis): round(payment x issue date's rate),
 * except that the payment that settles the invoice clears whatever remains, so the receivable
 * always ends at exactly zero whatever the earlier payments' rounding left.
 */
export function receivableCleared(input: {
  paymentCents: bigint;
  issueUsdPerUnit: string;
  settles: boolean;
  totalUsdCents: bigint;
  clearedSoFarUsdCents: bigint;
}): bigint {
  const { paymentCents, issueUsdPerUnit, settles, totalUsdCents, clearedSoFarUsdCents } = input;
  invariant(paymentCents > 0n, 'receivableCleared: a payment must be greater than zero');
  invariant(
    clearedSoFarUsdCents >= 0n && clearedSoFarUsdCents <= totalUsdCents,
    'receivableCleared: cleared so far must be between zero and the USD total',
  );
  checkUsdRate(issueUsdPerUnit);

  const remainingUsdCents = totalUsdCents - clearedSoFarUsdCents;
  if (settles) return remainingUsdCents;
  // Capped at what remains: each partial payment rounds on its own, so partial payments can
  // convert to more than the USD total (ten 1-cent payments at 1.6 clear 20 cents of a 16-cent
  // receivable). Clearing past zero would leave a credit on an unpaid invoice's receivable and
  // make the settling payment clear a negative amount; the excess is FX gain instead.
  const atIssueRateUsdCents = convertToUsdCents(paymentCents, issueUsdPerUnit);
  return atIssueRateUsdCents < remainingUsdCents ? atIssueRateUsdCents : remainingUsdCents;
}

/**
 * Cash basis: after each payment, revenue recognised so far = round(USD cash so far x subtotal /
 * total), with subtotal and total in the invoice's own currency, so the split follows the
 * invoice's own proportion of revenue to tax. This payment's revenue is the increase; the rest of
 * its cash is sales tax. Working cumulatively, not payment by payment, keeps rounding from
 * drifting: the revenue recognised after any payment is one rounding of the whole.
 */
export function cashRecognition(input: {
  cashUsdBeforeCents: bigint;
  cashUsdThisPaymentCents: bigint;
  subtotalCents: bigint;
  totalCents: bigint;
}): CashRecognition {
  const { cashUsdBeforeCents, cashUsdThisPaymentCents, subtotalCents, totalCents } = input;
  invariant(cashUsdBeforeCents >= 0n && cashUsdThisPaymentCents >= 0n, 'cashRecognition: cash must be non-negative');
  invariant(totalCents > 0n && subtotalCents >= 0n && subtotalCents <= totalCents, 'cashRecognition: need 0 <= subtotal <= total, total > 0');

  const revenueBeforeUsdCents = revenueSoFarUsdCents(cashUsdBeforeCents, subtotalCents, totalCents);
  const revenueAfterUsdCents = revenueSoFarUsdCents(cashUsdBeforeCents + cashUsdThisPaymentCents, subtotalCents, totalCents);
  const revenueUsdCents = revenueAfterUsdCents - revenueBeforeUsdCents;
  const taxUsdCents = cashUsdThisPaymentCents - revenueUsdCents;
  // Both hold because the ratio is at most 1 and rounding is monotonic: more cash never
  // recognises less revenue, and adding p cents adds at most p cents of revenue.
  invariant(revenueUsdCents >= 0n && taxUsdCents >= 0n, 'cashRecognition: revenue and tax are non-negative');
  return { revenueUsdCents, taxUsdCents };
}

function revenueSoFarUsdCents(cashSoFarUsdCents: bigint, subtotalCents: bigint, totalCents: bigint): bigint {
  // One rounding of the whole product: rounding the ratio first would lose cents on large sums.
  return divideRoundHalfAwayFromZero(cashSoFarUsdCents * subtotalCents, totalCents);
}

/** The USD cash a payment brings in: round(payment x the payment date's rate). */
export function cashUsdCents(paymentCents: bigint, usdPerUnit: string): bigint {
  invariant(paymentCents > 0n, 'cashUsdCents: a payment must be greater than zero');
  checkUsdRate(usdPerUnit);
  return convertToUsdCents(paymentCents, usdPerUnit);
}

/** Rates reach us from the stored rate table, which refuses zero and malformed text, so a bad one is our bug. */
function checkUsdRate(usdPerUnit: string): void {
  let units: bigint;
  try {
    units = parseDecimal(usdPerUnit, FX_RATE_SCALE).units;
  } catch (error) {
    throw new Error(`invoice-math: usdPerUnit ${JSON.stringify(usdPerUnit)} ${(error as Error).message}`, { cause: error });
  }
  invariant(units > 0n, `invoice-math: usdPerUnit ${JSON.stringify(usdPerUnit)} must be greater than zero`);
}

function invariant(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}
