import { expect } from 'chai';
import fc from 'fast-check';
import {
  InvoiceMathError,
  type InvoiceLineInput,
  allocate,
  cashRecognition,
  cashUsdCents,
  convertInvoice,
  priceInvoice,
  receivableCleared,
} from '../../src/books/invoice-math.js';
import { AMOUNT_CEILING_CENTS, FX_RATE_SCALE, QUANTITY_SCALE, TAX_RATE_SCALE } from '../../src/money.js';

const RUNS = { numRuns: 200 };

/** Runs `work`, expects it to refuse with InvoiceMathError on `field`, and returns the error. */
function refusal(work: () => unknown, field: string, problem: RegExp): InvoiceMathError {
  try {
    work();
  } catch (error) {
    expect(error).to.be.instanceOf(InvoiceMathError);
    const refused = error as InvoiceMathError;
    expect(refused.field).to.equal(field);
    expect(refused.problem).to.match(problem);
    expect(refused.message).to.equal(`${field}: ${refused.problem}`);
    return refused;
  }
  expect.fail(`expected a refusal on ${field}`);
}

/** A scaled integer as decimal text: 1_500_000n at scale 6 is "1.5". */
function decimalText(units: bigint, scale: number): string {
  const digits = units.toString().padStart(scale + 1, '0');
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  const whole = digits.slice(0, digits.length - scale);
  return fraction ? `${whole}.${fraction}` : whole;
}

function abs(value: bigint): bigint {
  return value < 0n ? -value : value;
}

/**
 * `rounded` is exact / scale rounded half away from zero: within half a unit, and a tie went up
 * (every figure here is non-negative). Pure bigint arithmetic, independent of the code under test.
 */
function expectRoundedHalfUp(rounded: bigint, exactScaled: bigint, scale: bigint): void {
  const twiceError = 2n * abs(rounded * scale - exactScaled);
  expect(twiceError <= scale, `${rounded} is more than half a cent from ${exactScaled}/${scale}`).to.equal(true);
  if (twiceError === scale) expect(rounded * scale > exactScaled, 'a tie rounds away from zero').to.equal(true);
}

const QUANTITY_ONE = 10n ** BigInt(QUANTITY_SCALE);
const TAX_RATE_DIVISOR = 100n * 10n ** BigInt(TAX_RATE_SCALE);

const quantityUnitsArb = fc.oneof(fc.bigInt({ min: 1n, max: QUANTITY_ONE }), fc.bigInt({ min: 1n, max: 1000n * QUANTITY_ONE }));
const unitPriceArb = fc.oneof(fc.bigInt({ min: 0n, max: 100n }), fc.bigInt({ min: 0n, max: 10n ** 9n }));
const lineArb = fc.record({ quantityUnits: quantityUnitsArb, unitPriceCents: unitPriceArb });
const taxRateUnitsArb = fc.option(fc.bigInt({ min: 0n, max: TAX_RATE_DIVISOR }), { nil: undefined });
/**
 * USD per unit: USD itself, MXN-like (a few cents), anything up to 3 dollars, and rates whose
 * fraction is .5 or more, which turn every 1-cent payment into more than its exact worth.
 */
const usdPerUnitArb = fc.oneof(
  fc.constant('1'),
  fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 5000, max: 9999 })).map(([whole, fraction]) => `${whole}.${fraction}`),
  fc.bigInt({ min: 1n, max: 10n ** 9n }).map((units) => decimalText(units, FX_RATE_SCALE)),
  fc.bigInt({ min: 1n, max: 3n * 10n ** BigInt(FX_RATE_SCALE) }).map((units) => decimalText(units, FX_RATE_SCALE)),
);

type GeneratedLine = { quantityUnits: bigint; unitPriceCents: bigint };

function toInputs(lines: GeneratedLine[]): InvoiceLineInput[] {
  return lines.map((line) => ({ quantity: decimalText(line.quantityUnits, QUANTITY_SCALE), unitPriceCents: line.unitPriceCents }));
}

/** Some line is worth at least half a cent exactly, so the invoice cannot price to zero. */
function pricesToSomething(lines: GeneratedLine[]): boolean {
  return lines.some((line) => 2n * line.quantityUnits * line.unitPriceCents >= QUANTITY_ONE);
}

const invoiceArb = fc
  .record({ lines: fc.array(lineArb, { minLength: 1, maxLength: 8 }), taxRateUnits: taxRateUnitsArb })
  .filter(({ lines }) => pricesToSomething(lines));

/** A few cents in all, so that a handful of 1-cent payments can pay it off. */
const tinyInvoiceArb = fc.record({
  lines: fc.array(fc.record({ quantityUnits: fc.constant(QUANTITY_ONE), unitPriceCents: fc.bigInt({ min: 1n, max: 6n }) }), {
    minLength: 1,
    maxLength: 3,
  }),
  taxRateUnits: taxRateUnitsArb,
});

/** An invoice, its issue rate, and payments in its currency that end exactly at its total. */
const paidInvoiceArb = fc
  .record({
    invoice: fc.oneof(invoiceArb, tinyInvoiceArb),
    issueUsdPerUnit: usdPerUnitArb,
    // Runs of 1-3 cent payments are where each payment's own rounding adds up the most: enough
    // of them convert to more than the USD total and the cap on clearing comes into play.
    paymentSizesCents: fc.oneof(
      fc.nat({ max: 40 }).map((count) => Array.from({ length: count }, () => 1n)),
      fc.array(fc.bigInt({ min: 1n, max: 3n }), { maxLength: 40 }),
      fc.array(fc.oneof(fc.bigInt({ min: 1n, max: 3n }), fc.bigInt({ min: 1n, max: 10n ** 11n })), { maxLength: 20 }),
    ),
    paymentUsdPerUnits: fc.array(usdPerUnitArb, { minLength: 41, maxLength: 41 }),
  })
  .map(({ invoice, issueUsdPerUnit, paymentSizesCents, paymentUsdPerUnits }) => {
    const taxRatePercent = invoice.taxRateUnits === undefined ? undefined : decimalText(invoice.taxRateUnits, TAX_RATE_SCALE);
    const priced = priceInvoice(toInputs(invoice.lines), taxRatePercent);
    const paymentsCents: bigint[] = [];
    let remainingCents = priced.totalCents;
    for (const size of paymentSizesCents) {
      if (size >= remainingCents) break;
      paymentsCents.push(size);
      remainingCents -= size;
    }
    paymentsCents.push(remainingCents); // the payment that settles it
    return { priced, issueUsdPerUnit, paymentsCents, paymentUsdPerUnits };
  });

/** A tiny invoice paid off one cent at a time, issued at a rate whose fraction is .5 or more. */
const oneCentPaymentsArb = fc
  .record({
    invoice: tinyInvoiceArb,
    issueUsdPerUnit: fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 5000, max: 9999 })).map(([whole, fraction]) => `${whole}.${fraction}`),
    paymentUsdPerUnits: fc.array(usdPerUnitArb, { minLength: 41, maxLength: 41 }),
  })
  .map(({ invoice, issueUsdPerUnit, paymentUsdPerUnits }) => {
    const taxRatePercent = invoice.taxRateUnits === undefined ? undefined : decimalText(invoice.taxRateUnits, TAX_RATE_SCALE);
    const priced = priceInvoice(toInputs(invoice.lines), taxRatePercent);
    const paymentsCents = Array.from({ length: Number(priced.totalCents) }, () => 1n);
    return { priced, issueUsdPerUnit, paymentsCents, paymentUsdPerUnits };
  });

/**
 * Runs the payments through receivableCleared, the last one settling: each clears between zero
 * and what remained, all of them together exactly the USD total, and cash less cleared, payment
 * by payment, adds up to the whole realised FX gain or loss.
 */
function expectReceivableClearedExactly(paid: {
  priced: { subtotalCents: bigint; taxCents: bigint; totalCents: bigint };
  issueUsdPerUnit: string;
  paymentsCents: bigint[];
  paymentUsdPerUnits: string[];
}): void {
  const { priced, issueUsdPerUnit, paymentsCents, paymentUsdPerUnits } = paid;
  const usd = convertInvoice(priced.subtotalCents, priced.taxCents, issueUsdPerUnit);
  let clearedSoFarUsdCents = 0n;
  let cashSoFarUsdCents = 0n;
  let fxGainSoFarUsdCents = 0n;
  paymentsCents.forEach((paymentCents, index) => {
    const cleared = receivableCleared({
      paymentCents,
      issueUsdPerUnit,
      settles: index === paymentsCents.length - 1,
      totalUsdCents: usd.totalUsdCents,
      clearedSoFarUsdCents,
    });
    expect(cleared >= 0n && cleared <= usd.totalUsdCents - clearedSoFarUsdCents, 'cleared within what remained').to.equal(true);
    const cash = cashUsdCents(paymentCents, paymentUsdPerUnits[index % paymentUsdPerUnits.length]!);
    clearedSoFarUsdCents += cleared;
    cashSoFarUsdCents += cash;
    fxGainSoFarUsdCents += cash - cleared;
  });
  expect(paymentsCents.reduce((sum, payment) => sum + payment, 0n)).to.equal(priced.totalCents);
  expect(clearedSoFarUsdCents).to.equal(usd.totalUsdCents);
  expect(fxGainSoFarUsdCents).to.equal(cashSoFarUsdCents - usd.totalUsdCents);
}

describe('invoice math (DESIGN.md: the posting engine, exact rules)', () => {
  describe('priceInvoice: line = round(quantity x unit price), subtotal = sum, tax = round(subtotal x rate / 100)', () => {
    it('prices a three-line USD invoice at 8.875 % tax, figure by figure', () => {
      const priced = priceInvoice(
        [
          { quantity: '1.5', unitPriceCents: 1999n }, //      1.5 x 1999 = 2998.5 -> 2999 (a tie, rounded up)
          { quantity: '0.333333', unitPriceCents: 30000n }, // 0.333333 x 30000 = 9999.99 -> 10000
          { quantity: '2', unitPriceCents: 1250n }, //        2 x 1250 = 2500
        ],
        '8.875',
      );
      expect(priced.lineAmountsCents).to.deep.equal([2999n, 10000n, 2500n]);
      expect(priced.subtotalCents).to.equal(15499n); // 2999 + 10000 + 2500
      expect(priced.taxCents).to.equal(1376n); // 15499 x 8.875 / 100 = 1375.53625 -> 1376
      expect(priced.totalCents).to.equal(16875n); // 15499 + 1376
    });

    it('charges no tax without a rate, and none at 0 %', () => {
      const lines = [{ quantity: '3', unitPriceCents: 333n }];
      expect(priceInvoice(lines)).to.deep.equal({ lineAmountsCents: [999n], subtotalCents: 999n, taxCents: 0n, totalCents: 999n });
      expect(priceInvoice(lines, '0').taxCents).to.equal(0n);
    });

    it('rounds exactly half a cent away from zero, on a line and on the tax', () => {
      const priced = priceInvoice([{ quantity: '0.5', unitPriceCents: 1n }], '50');
      expect(priced.lineAmountsCents).to.deep.equal([1n]); // 0.5 x 1 = 0.5 -> 1
      expect(priced.taxCents).to.equal(1n); // 1 x 50 / 100 = 0.5 -> 1
      expect(priced.totalCents).to.equal(2n);
    });

    it('rounds just under half a cent down, on a line and on the tax', () => {
      const priced = priceInvoice(
        [
          { quantity: '0.499999', unitPriceCents: 1n }, // 0.499999 -> 0
          { quantity: '1', unitPriceCents: 1n }, //        1
        ],
        '49.999999', //                                      1 x 49.999999 / 100 = 0.49999999 -> 0
      );
      expect(priced).to.deep.equal({ lineAmountsCents: [0n, 1n], subtotalCents: 1n, taxCents: 0n, totalCents: 1n });
    });

    it('rounds a line of more than half a cent over a whole cent up', () => {
      // 1.000001 x 1_500_000 = 1_500_001.5 -> 1_500_002; 2.5 x 3 = 7.5 -> 8
      const priced = priceInvoice([
        { quantity: '1.000001', unitPriceCents: 1_500_000n },
        { quantity: '2.5', unitPriceCents: 3n },
      ]);
      expect(priced.lineAmountsCents).to.deep.equal([1_500_002n, 8n]);
      expect(priced.totalCents).to.equal(1_500_010n);
    });

    describe('every line amount, the subtotal and the total stay under ten trillion dollars (10^15 cents)', () => {
      const JUST_UNDER = AMOUNT_CEILING_CENTS - 1n; // 999,999,999,999,999 cents

      it('accepts a line of 10^15 - 1 cents and refuses one of 10^15 (lines.N.unitPriceCents)', () => {
        expect(priceInvoice([{ quantity: '1', unitPriceCents: JUST_UNDER }]).totalCents).to.equal(JUST_UNDER);
        const lines = [
          { quantity: '1', unitPriceCents: 1n },
          { quantity: '1', unitPriceCents: 1n },
          { quantity: '1', unitPriceCents: 1n },
          { quantity: '1', unitPriceCents: AMOUNT_CEILING_CENTS },
        ];
        refusal(() => priceInvoice(lines), 'lines.3.unitPriceCents', /^makes the line amount ten trillion dollars or more$/);
      });

      it('checks the line after rounding: 0.5 x (2 x 10^15 - 1) rounds up to the ceiling itself', () => {
        // 0.5 x 1,999,999,999,999,999 = 999,999,999,999,999.5 -> 1,000,000,000,000,000: refused
        refusal(
          () => priceInvoice([{ quantity: '0.5', unitPriceCents: 2n * AMOUNT_CEILING_CENTS - 1n }]),
          'lines.0.unitPriceCents',
          /line amount/,
        );
        // 0.5 x 1,999,999,999,999,998 = 999,999,999,999,999: accepted
        expect(priceInvoice([{ quantity: '0.5', unitPriceCents: 2n * AMOUNT_CEILING_CENTS - 2n }]).lineAmountsCents).to.deep.equal([JUST_UNDER]);
      });

      it('accepts a subtotal of 10^15 - 1 cents and refuses one of 10^15 (lines)', () => {
        const half = AMOUNT_CEILING_CENTS / 2n; // 500,000,000,000,000
        const under = priceInvoice([
          { quantity: '1', unitPriceCents: half },
          { quantity: '1', unitPriceCents: half - 1n },
        ]);
        expect(under.subtotalCents).to.equal(JUST_UNDER);
        refusal(
          () =>
            priceInvoice([
              { quantity: '1', unitPriceCents: half },
              { quantity: '1', unitPriceCents: half },
            ]),
          'lines',
          /subtotal ten trillion dollars or more/,
        );
      });

      it('refuses a total the tax pushes to 10^15 cents (taxRatePercent) and accepts one a cent under', () => {
        // 990,099,009,900,990 x 1 / 100 = 9,900,990,099,009.9 -> 9,900,990,099,010; total = 10^15: refused
        refusal(
          () => priceInvoice([{ quantity: '1', unitPriceCents: 990_099_009_900_990n }], '1'),
          'taxRatePercent',
          /^makes the total ten trillion dollars or more$/,
        );
        // 990,099,009,900,989 x 1 / 100 = 9,900,990,099,009.89 -> 9,900,990,099,010; total = 10^15 - 1
        const priced = priceInvoice([{ quantity: '1', unitPriceCents: 990_099_009_900_989n }], '1');
        expect(priced.taxCents).to.equal(9_900_990_099_010n);
        expect(priced.totalCents).to.equal(JUST_UNDER);
      });
    });

    describe('refuses input the contract does not allow, naming the field', () => {
      it('refuses a quantity of zero (lines.N.quantity)', () => {
        refusal(() => priceInvoice([{ quantity: '0', unitPriceCents: 100n }]), 'lines.0.quantity', /greater than zero/);
        refusal(() => priceInvoice([{ quantity: '0.000000', unitPriceCents: 100n }]), 'lines.0.quantity', /greater than zero/);
      });

      it('refuses a quantity with more than 6 decimals and accepts exactly 6', () => {
        expect(priceInvoice([{ quantity: '0.000001', unitPriceCents: 1_000_000n }]).totalCents).to.equal(1n);
        const lines = [
          { quantity: '1', unitPriceCents: 100n },
          { quantity: '1.0000001', unitPriceCents: 100n },
        ];
        refusal(() => priceInvoice(lines), 'lines.1.quantity', /at most 6 decimal places/);
      });

      for (const bad of ['', '-1', '+1', '1e3', '.5', '1.', ' 1', '1,5', 'abc', '0x10']) {
        it(`refuses the malformed quantity ${JSON.stringify(bad)} with the field, not a raw exception`, () => {
          refusal(() => priceInvoice([{ quantity: bad, unitPriceCents: 100n }]), 'lines.0.quantity', /decimal/);
        });
      }

      it('refuses a quantity that is a number rather than text', () => {
        refusal(() => priceInvoice([{ quantity: 1.5 as unknown as string, unitPriceCents: 100n }]), 'lines.0.quantity', /decimal string/);
      });

      it('refuses a negative unit price (lines.N.unitPriceCents) and accepts zero on a line', () => {
        refusal(() => priceInvoice([{ quantity: '1', unitPriceCents: -1n }]), 'lines.0.unitPriceCents', /must not be negative/);
        const priced = priceInvoice([
          { quantity: '1', unitPriceCents: 0n },
          { quantity: '1', unitPriceCents: 5n },
        ]);
        expect(priced.lineAmountsCents).to.deep.equal([0n, 5n]);
      });

      it('accepts a rate of exactly 100 % and refuses anything above it (taxRatePercent)', () => {
        expect(priceInvoice([{ quantity: '1', unitPriceCents: 250n }], '100').taxCents).to.equal(250n);
        expect(priceInvoice([{ quantity: '1', unitPriceCents: 250n }], '100.000000').taxCents).to.equal(250n);
        refusal(() => priceInvoice([{ quantity: '1', unitPriceCents: 250n }], '100.000001'), 'taxRatePercent', /between 0 and 100/);
      });

      for (const bad of ['', '-5', '12.5%', '8,875', '1.1234567', 'ten']) {
        it(`refuses the tax rate ${JSON.stringify(bad)} (taxRatePercent)`, () => {
          refusal(() => priceInvoice([{ quantity: '1', unitPriceCents: 100n }], bad), 'taxRatePercent', /decimal/);
        });
      }

      it('refuses an invoice without lines (lines)', () => {
        refusal(() => priceInvoice([]), 'lines', /at least one line/);
      });

      it('refuses an invoice whose total is zero (lines), including lines that round to nothing', () => {
        const problem = /^the invoice total must be greater than zero$/;
        refusal(() => priceInvoice([{ quantity: '5', unitPriceCents: 0n }], '20'), 'lines', problem);
        refusal(() => priceInvoice([{ quantity: '0.4', unitPriceCents: 1n }], '100'), 'lines', problem); // 0.4 -> 0
      });
    });

    it('never loses or invents a cent: total = sum of lines + tax, each line and the tax within half a cent of exact', () => {
      fc.assert(
        fc.property(invoiceArb, ({ lines, taxRateUnits }) => {
          const taxRatePercent = taxRateUnits === undefined ? undefined : decimalText(taxRateUnits, TAX_RATE_SCALE);
          const priced = priceInvoice(toInputs(lines), taxRatePercent);

          lines.forEach((line, index) => {
            // exact line amount = quantityUnits x unit price / 10^6
            expectRoundedHalfUp(priced.lineAmountsCents[index]!, line.quantityUnits * line.unitPriceCents, QUANTITY_ONE);
          });
          const sumOfLines = priced.lineAmountsCents.reduce((sum, amount) => sum + amount, 0n);
          expect(priced.subtotalCents).to.equal(sumOfLines);
          // exact tax = subtotal x rateUnits / (100 x 10^6)
          expectRoundedHalfUp(priced.taxCents, priced.subtotalCents * (taxRateUnits ?? 0n), TAX_RATE_DIVISOR);
          expect(priced.totalCents).to.equal(sumOfLines + priced.taxCents);
        }),
        RUNS,
      );
    });
  });

  describe('allocate: largest remainder, so the shares sum to exactly the total', () => {
    it('gives 100 over [1, 1, 1] as [34, 33, 33]: the leftover cent goes to the earliest of equal remainders', () => {
      // floors 33, 33, 33 (sum 99), remainders 1/3 each: the 1 leftover cent goes to index 0
      expect(allocate(100n, [1n, 1n, 1n])).to.deep.equal([34n, 33n, 33n]);
    });

    it('gives a zero weight nothing: 10 over [5, 0, 5] is [5, 0, 5]', () => {
      expect(allocate(10n, [5n, 0n, 5n])).to.deep.equal([5n, 0n, 5n]);
    });

    it('gives the leftover cent to the largest remainder, not the largest weight: 10 over [1, 2, 3] is [2, 3, 5]', () => {
      // exact 10/6 = 1.667, 20/6 = 3.333, 30/6 = 5; floors 1, 3, 5 (sum 9); remainders 4/6, 2/6, 0
      expect(allocate(10n, [1n, 2n, 3n])).to.deep.equal([2n, 3n, 5n]);
    });

    it('spreads a EUR invoice USD subtotal over its revenue lines, the tie going to the earlier line', () => {
      // 108120 x 33333 / 100000 = 36039.6396 (twice), 108120 x 33334 / 100000 = 36040.7208
      // floors 36039 + 36039 + 36040 = 108118: 2 cents left, to .7208 (index 2) then the first .6396 (index 0)
      expect(allocate(108_120n, [33_333n, 33_333n, 33_334n])).to.deep.equal([36_040n, 36_039n, 36_041n]);
    });

    it('gives zeros for a zero total, even over all-zero or no weights', () => {
      expect(allocate(0n, [0n, 0n])).to.deep.equal([0n, 0n]);
      expect(allocate(0n, [3n, 7n])).to.deep.equal([0n, 0n]);
      expect(allocate(0n, [])).to.deep.equal([]);
    });

    it('refuses to spread a non-zero total over weights that are all zero, or negative figures', () => {
      expect(() => allocate(5n, [0n, 0n])).to.throw(Error, /all zero/);
      expect(() => allocate(5n, [])).to.throw(Error, /all zero/);
      expect(() => allocate(5n, [1n, -1n, 3n])).to.throw(Error, /non-negative/);
      expect(() => allocate(-5n, [1n])).to.throw(Error, /non-negative/);
    });

    it('always sums to the total, each share within one cent of its exact proportion, zero weights getting zero', () => {
      fc.assert(
        fc.property(
          fc.oneof(fc.bigInt({ min: 0n, max: 20n }), fc.bigInt({ min: 0n, max: 10n ** 13n })),
          fc.array(fc.oneof(fc.bigInt({ min: 0n, max: 3n }), fc.bigInt({ min: 0n, max: 10n ** 12n })), { minLength: 1, maxLength: 10 }),
          (totalCents, weights) => {
            const weightSum = weights.reduce((sum, weight) => sum + weight, 0n);
            fc.pre(weightSum > 0n);
            const shares = allocate(totalCents, weights);
            expect(shares.reduce((sum, share) => sum + share, 0n)).to.equal(totalCents);
            shares.forEach((share, index) => {
              const weight = weights[index]!;
              // |share - total x w / W| < 1, scaled by W
              expect(abs(share * weightSum - totalCents * weight) < weightSum).to.equal(true);
              if (weight === 0n) expect(share).to.equal(0n);
            });
          },
        ),
        RUNS,
      );
    });
  });

  describe('convertInvoice: subtotal and tax each converted once, the USD total their sum', () => {
    it('leaves a USD invoice as it is at the rate 1', () => {
      expect(convertInvoice(15_499n, 1_376n, '1')).to.deep.equal({ subtotalUsdCents: 15_499n, taxUsdCents: 1_376n, totalUsdCents: 16_875n });
    });

    it('adds the converted parts rather than converting the total', () => {
      // 1 x 1.5 = 1.5 -> 2, twice: total 4 (round(2 x 1.5) would be 3 and the entry would not balance)
      expect(convertInvoice(1n, 1n, '1.5')).to.deep.equal({ subtotalUsdCents: 2n, taxUsdCents: 2n, totalUsdCents: 4n });
    });

    it('refuses a zero or malformed rate as a bug, not the caller’s input', () => {
      expect(() => convertInvoice(100n, 0n, '0')).to.throw(Error, /greater than zero/);
      expect(() => convertInvoice(100n, 0n, '1,08')).to.throw(Error, /usdPerUnit/);
      expect(() => convertInvoice(100n, 0n, '1,08')).not.to.throw(InvoiceMathError);
    });
  });

  describe('a EUR invoice through send and two payments, figure by figure', () => {
    // EUR 1,000.00 + 20 % tax = EUR 1,200.00, sent at 1.0812 USD/EUR
    const priced = priceInvoice([{ quantity: '1', unitPriceCents: 100_000n }], '20');
    const usd = convertInvoice(priced.subtotalCents, priced.taxCents, '1.0812');

    it('prices and converts it: USD 1081.20 + 216.24 = 1297.44', () => {
      expect(priced).to.deep.equal({ lineAmountsCents: [100_000n], subtotalCents: 100_000n, taxCents: 20_000n, totalCents: 120_000n });
      expect(usd.subtotalUsdCents).to.equal(108_120n); // 100000 x 1.0812
      expect(usd.taxUsdCents).to.equal(21_624n); //       20000 x 1.0812
      expect(usd.totalUsdCents).to.equal(129_744n); //    108120 + 21624
    });

    it('clears round(payment x issue rate) per partial payment and the remainder on settling, the difference being FX gain or loss', () => {
      // First: EUR 500.00 on a day at 1.0950
      const firstCash = cashUsdCents(50_000n, '1.095'); // 50000 x 1.0950 = 54750
      const firstCleared = receivableCleared({
        paymentCents: 50_000n,
        issueUsdPerUnit: '1.0812',
        settles: false,
        totalUsdCents: usd.totalUsdCents,
        clearedSoFarUsdCents: 0n,
      }); // 50000 x 1.0812 = 54060
      expect(firstCash).to.equal(54_750n);
      expect(firstCleared).to.equal(54_060n);
      expect(firstCash - firstCleared).to.equal(690n); // realised gain USD 6.90

      // Second: EUR 700.00 on a day at 1.0700; it settles the invoice
      const secondCash = cashUsdCents(70_000n, '1.07'); // 70000 x 1.0700 = 74900
      const secondCleared = receivableCleared({
        paymentCents: 70_000n,
        issueUsdPerUnit: '1.0812',
        settles: true,
        totalUsdCents: usd.totalUsdCents,
        clearedSoFarUsdCents: firstCleared,
      }); // 129744 - 54060 = 75684 (here also 70000 x 1.0812, as no conversion rounded)
      expect(secondCash).to.equal(74_900n);
      expect(secondCleared).to.equal(75_684n);
      expect(secondCash - secondCleared).to.equal(-784n); // realised loss USD 7.84

      expect(firstCleared + secondCleared).to.equal(usd.totalUsdCents); // the receivable ends at zero
      expect(firstCash + secondCash - usd.totalUsdCents).to.equal(690n - 784n); // net FX: -94
    });

    it('recognises on the cash basis revenue so far = round(cash so far x 1000 / 1200), the rest of each payment tax', () => {
      // After the first: round(54750 x 1000 / 1200) = 45625 exactly; tax 54750 - 45625 = 9125
      const first = cashRecognition({ cashUsdBeforeCents: 0n, cashUsdThisPaymentCents: 54_750n, subtotalCents: 100_000n, totalCents: 120_000n });
      expect(first).to.deep.equal({ revenueUsdCents: 45_625n, taxUsdCents: 9_125n });
      // After the second: round(129650 x 1000 / 1200) = round(108041.67) = 108042, so this payment's
      // revenue is 108042 - 45625 = 62417 and its tax 74900 - 62417 = 12483
      const second = cashRecognition({
        cashUsdBeforeCents: 54_750n,
        cashUsdThisPaymentCents: 74_900n,
        subtotalCents: 100_000n,
        totalCents: 120_000n,
      });
      expect(second).to.deep.equal({ revenueUsdCents: 62_417n, taxUsdCents: 12_483n });
      // together: 108042 + 21608 = 129650, the USD cash received
      expect(first.revenueUsdCents + first.taxUsdCents + second.revenueUsdCents + second.taxUsdCents).to.equal(129_650n);
    });
  });

  describe('receivableCleared: never negative, never more than remains', () => {
    it('clears a USD payment one for one', () => {
      const cleared = receivableCleared({ paymentCents: 4_000n, issueUsdPerUnit: '1', settles: false, totalUsdCents: 10_000n, clearedSoFarUsdCents: 2_500n });
      expect(cleared).to.equal(4_000n);
    });

    it('lets the settling payment clear what remains even where its own conversion differs', () => {
      // EUR 0.01 + 100 % tax = EUR 0.02 at 1.5: USD 1 x 1.5 -> 2 plus 1 x 1.5 -> 2 = 4 cents,
      // while the whole 2-cent payment converts to round(2 x 1.5) = 3
      const priced = priceInvoice([{ quantity: '1', unitPriceCents: 1n }], '100');
      const { totalUsdCents } = convertInvoice(priced.subtotalCents, priced.taxCents, '1.5');
      expect(totalUsdCents).to.equal(4n);
      const settling = { paymentCents: priced.totalCents, issueUsdPerUnit: '1.5', totalUsdCents, clearedSoFarUsdCents: 0n };
      expect(receivableCleared({ ...settling, settles: true })).to.equal(4n);
      expect(receivableCleared({ ...settling, settles: false })).to.equal(3n);
    });

    it('caps partial payments whose own roundings add up to more than the USD total', () => {
      // EUR 0.10 at 1.6 is USD 0.16; each 1-cent payment converts to round(1.6) = 2 cents
      const { totalUsdCents } = convertInvoice(10n, 0n, '1.6');
      expect(totalUsdCents).to.equal(16n);
      let clearedSoFarUsdCents = 0n;
      const clearings: bigint[] = [];
      for (let payment = 1; payment <= 10; payment += 1) {
        const cleared = receivableCleared({ paymentCents: 1n, issueUsdPerUnit: '1.6', settles: payment === 10, totalUsdCents, clearedSoFarUsdCents });
        clearings.push(cleared);
        clearedSoFarUsdCents += cleared;
      }
      // eight payments clear 2 each (16); the ninth is capped at the 0 remaining; the tenth settles 0
      expect(clearings).to.deep.equal([2n, 2n, 2n, 2n, 2n, 2n, 2n, 2n, 0n, 0n]);
      expect(clearedSoFarUsdCents).to.equal(totalUsdCents);
    });

    it('refuses impossible input as a bug: nothing paid, more cleared than the total, a zero rate', () => {
      const base = { paymentCents: 100n, issueUsdPerUnit: '1', settles: false, totalUsdCents: 1_000n, clearedSoFarUsdCents: 0n };
      expect(() => receivableCleared({ ...base, paymentCents: 0n })).to.throw(Error, /greater than zero/);
      expect(() => receivableCleared({ ...base, clearedSoFarUsdCents: 1_001n })).to.throw(Error, /cleared so far/);
      expect(() => receivableCleared({ ...base, clearedSoFarUsdCents: -1n })).to.throw(Error, /cleared so far/);
      expect(() => receivableCleared({ ...base, issueUsdPerUnit: '0' })).to.throw(Error, /greater than zero/);
    });
  });

  describe('cashRecognition and cashUsdCents', () => {
    it('recognises a USD invoice paid in one payment as exactly its subtotal and tax', () => {
      expect(cashRecognition({ cashUsdBeforeCents: 0n, cashUsdThisPaymentCents: 16_875n, subtotalCents: 15_499n, totalCents: 16_875n })).to.deep.equal({
        revenueUsdCents: 15_499n,
        taxUsdCents: 1_376n,
      });
    });

    it('splits a payment worth no USD cents into nothing (1 MXN cent at 0.05)', () => {
      const cash = cashUsdCents(1n, '0.05'); // 1 x 0.05 = 0.05 -> 0
      expect(cash).to.equal(0n);
      expect(cashRecognition({ cashUsdBeforeCents: 0n, cashUsdThisPaymentCents: cash, subtotalCents: 10n, totalCents: 12n })).to.deep.equal({
        revenueUsdCents: 0n,
        taxUsdCents: 0n,
      });
    });

    it('refuses a subtotal above the total or a zero total as a bug', () => {
      expect(() => cashRecognition({ cashUsdBeforeCents: 0n, cashUsdThisPaymentCents: 5n, subtotalCents: 13n, totalCents: 12n })).to.throw(Error);
      expect(() => cashRecognition({ cashUsdBeforeCents: 0n, cashUsdThisPaymentCents: 5n, subtotalCents: 0n, totalCents: 0n })).to.throw(Error);
    });
  });

  describe('any invoice paid by partial payments ending in the one that settles', () => {
    it('clears exactly the USD total: the receivable ends at zero, each clearing within what remained', () => {
      fc.assert(fc.property(paidInvoiceArb, expectReceivableClearedExactly), RUNS);
    });

    it('still clears exactly the USD total when 1-cent payments at a rounding-up rate convert to more than it', () => {
      fc.assert(fc.property(oneCentPaymentsArb, expectReceivableClearedExactly), RUNS);
    });

    it('recognises on the cash basis revenue + tax equal to the USD cash received, neither ever negative', () => {
      fc.assert(
        fc.property(paidInvoiceArb, ({ priced, paymentsCents, paymentUsdPerUnits }) => {
          let cashSoFarUsdCents = 0n;
          let revenueSoFarUsdCents = 0n;
          let taxSoFarUsdCents = 0n;
          paymentsCents.forEach((paymentCents, index) => {
            const cashThisPaymentUsdCents = cashUsdCents(paymentCents, paymentUsdPerUnits[index]!);
            const part = cashRecognition({
              cashUsdBeforeCents: cashSoFarUsdCents,
              cashUsdThisPaymentCents: cashThisPaymentUsdCents,
              subtotalCents: priced.subtotalCents,
              totalCents: priced.totalCents,
            });
            expect(part.revenueUsdCents >= 0n && part.taxUsdCents >= 0n).to.equal(true);
            expect(part.revenueUsdCents + part.taxUsdCents).to.equal(cashThisPaymentUsdCents);
            cashSoFarUsdCents += cashThisPaymentUsdCents;
            revenueSoFarUsdCents += part.revenueUsdCents;
            taxSoFarUsdCents += part.taxUsdCents;
            // cumulative: revenue so far is one rounding of cash so far x subtotal / total
            expectRoundedHalfUp(revenueSoFarUsdCents, cashSoFarUsdCents * priced.subtotalCents, priced.totalCents);
          });
          expect(revenueSoFarUsdCents + taxSoFarUsdCents).to.equal(cashSoFarUsdCents);
        }),
        RUNS,
      );
    });

    it('recognises a USD invoice, once paid in full, as exactly its subtotal and its tax', () => {
      fc.assert(
        fc.property(paidInvoiceArb, ({ priced, paymentsCents }) => {
          let cashSoFarUsdCents = 0n;
          let revenueUsdCents = 0n;
          let taxUsdCents = 0n;
          for (const paymentCents of paymentsCents) {
            const cashThisPaymentUsdCents = cashUsdCents(paymentCents, '1');
            const part = cashRecognition({
              cashUsdBeforeCents: cashSoFarUsdCents,
              cashUsdThisPaymentCents: cashThisPaymentUsdCents,
              subtotalCents: priced.subtotalCents,
              totalCents: priced.totalCents,
            });
            cashSoFarUsdCents += cashThisPaymentUsdCents;
            revenueUsdCents += part.revenueUsdCents;
            taxUsdCents += part.taxUsdCents;
          }
          expect(revenueUsdCents).to.equal(priced.subtotalCents);
          expect(taxUsdCents).to.equal(priced.taxCents);
        }),
        RUNS,
      );
    });
  });
});
