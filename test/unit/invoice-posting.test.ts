import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import fc from 'fast-check';
import type { Business } from '../../src/books/businesses.js';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { setRate } from '../../src/books/fx.js';
import { priceInvoice } from '../../src/books/invoice-math.js';
import { recordPayment, sendInvoice } from '../../src/books/invoice-posting.js';
import { createInvoice, findInvoice } from '../../src/books/invoices.js';
import { ledgerTotals } from '../../src/books/ledger.js';
import type { FixedClock } from '../../src/clock.js';
import { type Db, inTransaction } from '../../src/db/connection.js';
import { ApiError } from '../../src/errors.js';
import { convertToUsdCents, divideRoundHalfAwayFromZero } from '../../src/money.js';
import { freshDb, type TempDb } from '../support/db.js';
import { accountIdByName, buildBusiness, buildTenant, TEST_ACTOR, testClock } from '../support/factories.js';

/**
 * The posting engine's invariants over whole invoice lives, at the books level: random invoices
 * sent and then paid in random parts, each part at its own random rate.
 */

const RUNS = { numRuns: 50 };
const MAIL = { siteUrl: 'http://localhost:3000' };
const ISSUE_DATE = '2026-03-02';
const REVENUE_ACCOUNTS = ['Sales', 'Service Revenue', 'Other Income'] as const;

/** A scaled integer as decimal text: 1_500_000n at scale 6 is "1.5". */
function decimalText(units: bigint, scale: number): string {
  const digits = units.toString().padStart(scale + 1, '0');
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  const whole = digits.slice(0, digits.length - scale);
  return fraction ? `${whole}.${fraction}` : whole;
}

/** `totalCents` cut into parts in proportion to `weights`, the rounding left to the last part; empty parts dropped. */
function splitCents(totalCents: bigint, weights: readonly number[]): bigint[] {
  const sum = BigInt(weights.reduce((a, b) => a + b, 0));
  const parts = weights.map((weight) => (totalCents * BigInt(weight)) / sum);
  parts[parts.length - 1]! += totalCents - parts.reduce((a, b) => a + b, 0n);
  return parts.filter((part) => part > 0n);
}

/** Whether the invoice prices to more than nothing (priceInvoice refuses a zero total). */
function pricesAboveZero(lines: { quantity: string; unitPriceCents: bigint }[], taxRatePercent: string | undefined): boolean {
  try {
    return priceInvoice(lines, taxRatePercent).totalCents > 0n;
  } catch {
    return false;
  }
}

/** Sum of amounts of the business's lines matching `where` (debits positive, credits negative). */
function signedSum(db: Db, businessId: string, where: string, ...params: unknown[]): bigint {
  const row = db
    .prepare(
      `SELECT coalesce(sum(CASE WHEN l.direction = 'debit' THEN l.amount_cents ELSE -l.amount_cents END), 0) AS n
       FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
       WHERE l.business_id = ? AND ${where}`,
    )
    .get(businessId, ...params) as { n: bigint | number };
  return BigInt(row.n);
}

function expectBalancedViews(db: Db, businessId: string, after: string): void {
  for (const view of ['accrual', 'cash'] as const) {
    const totals = ledgerTotals(db, businessId, view);
    expect(totals.debitCents, `${view} view after ${after}: debits = credits`).to.equal(totals.creditCents);
  }
}

const lineArb = fc.record({
  // Whole quantities, and fractional ones down to 0.01 with up to 6 places.
  quantityUnits: fc.oneof(fc.bigInt({ min: 1n, max: 50n }).map((n) => n * 1_000_000n), fc.bigInt({ min: 10_000n, max: 200_000_000n })),
  unitPriceCents: fc.oneof(fc.bigInt({ min: 1n, max: 999n }), fc.bigInt({ min: 1n, max: 5_000_000n })),
  account: fc.constantFrom(...REVENUE_ACCOUNTS),
});

const invoiceLifeArb = fc.record({
  basis: fc.constantFrom('accrual' as const, 'cash' as const),
  lines: fc.array(lineArb, { minLength: 1, maxLength: 4 }),
  // 0 to 30 %, up to 6 places; or no tax at all.
  taxRateUnits: fc.option(fc.bigInt({ min: 0n, max: 30_000_000n }), { nil: undefined }),
  currency: fc.constantFrom('USD' as const, 'EUR' as const),
  // USD per EUR, 0.5000 to 2.0000: the issue date's, then one per payment.
  issueRateUnits: fc.integer({ min: 5000, max: 20000 }),
  payments: fc.array(fc.record({ weight: fc.integer({ min: 1, max: 1000 }), rateUnits: fc.integer({ min: 5000, max: 20000 }) }), { minLength: 1, maxLength: 4 }),
});

describe('invoice posting: properties over random invoices (books level)', () => {
  let temp: TempDb;
  let db: Db;
  let clock: FixedClock;
  let runNo = 0;

  before(async () => {
    temp = await freshDb();
    db = temp.db;
    clock = testClock();
  });
  after(() => temp.close());

  function newBusiness(basis: 'accrual' | 'cash'): { business: Business; customerId: string } {
    const tenant = buildTenant(db, clock);
    const business = buildBusiness(db, clock, { tenantId: tenant.id, basis });
    const { id: customerId } = inTransaction(db, () =>
      findOrCreateCustomer(db, clock, TEST_ACTOR, tenant.id, { name: `Customer ${++runNo}`, email: `billing${runNo}@example.com` }),
    );
    return { business, customerId };
  }

  it('sent and paid in 1-4 parts: the receivable ends at zero, both views balance after every write, cash-view revenue + tax = cash received', () => {
    fc.assert(
      fc.property(invoiceLifeArb, (life) => {
        const lines = life.lines.map((l) => ({ quantity: decimalText(l.quantityUnits, 6), unitPriceCents: l.unitPriceCents, account: l.account }));
        const taxRatePercent = life.taxRateUnits === undefined ? undefined : decimalText(life.taxRateUnits, 6);
        // Tiny quantities at one cent can price to nothing: such an invoice is refused at the door.
        fc.pre(pricesAboveZero(lines, taxRatePercent));
        const priced = priceInvoice(lines, taxRatePercent);

        const { business, customerId } = newBusiness(life.basis);
        const issueRate = life.currency === 'USD' ? '1' : decimalText(BigInt(life.issueRateUnits), 4);
        // Rates are installation-wide: each run sets every rate it uses, just before using it.
        if (life.currency === 'EUR') setRate(db, clock, CLI_ACTOR, { currency: 'EUR', date: ISSUE_DATE, usdPerUnit: issueRate });
        const { invoiceId } = inTransaction(db, () =>
          createInvoice(db, clock, TEST_ACTOR, {
            business,
            customerId,
            issueDate: ISSUE_DATE,
            currency: life.currency,
            ...(taxRatePercent === undefined ? {} : { taxRatePercent }),
            lines: lines.map((l, index) => ({
              description: `Line ${index + 1}`,
              quantity: l.quantity,
              unitPriceCents: l.unitPriceCents,
              accountId: accountIdByName(db, business.id, l.account),
            })),
          }),
        );
        inTransaction(db, () => sendInvoice(db, clock, TEST_ACTOR, invoiceId, MAIL));
        expectBalancedViews(db, business.id, 'send');

        // The accrual view holds the whole invoice at the issue rate: subtotal and tax converted once each.
        const subtotalUsdCents = convertToUsdCents(priced.subtotalCents, issueRate);
        const taxUsdCents = convertToUsdCents(priced.taxCents, issueRate);
        const receivableUsdCents = subtotalUsdCents + taxUsdCents;
        const receivable = () => signedSum(db, business.id, "a.name = 'Accounts Receivable' AND l.basis IN ('both', 'accrual')");
        expect(receivable()).to.equal(receivableUsdCents);
        // Nothing in the cash view until money arrives.
        expect(ledgerTotals(db, business.id, 'cash')).to.deep.equal({ debitCents: 0n, creditCents: 0n });

        const parts = splitCents(priced.totalCents, life.payments.map((p) => p.weight));
        let cashUsdCents = 0n;
        parts.forEach((amountCents, index) => {
          const paidAt = `2026-03-${String(3 + index).padStart(2, '0')}`;
          const rate = life.currency === 'USD' ? '1' : decimalText(BigInt(life.payments[index]!.rateUnits), 4);
          if (life.currency === 'EUR') setRate(db, clock, CLI_ACTOR, { currency: 'EUR', date: paidAt, usdPerUnit: rate });
          const recorded = inTransaction(db, () => recordPayment(db, clock, TEST_ACTOR, { invoiceId, amountCents, method: 'check', paidAt }));
          cashUsdCents += convertToUsdCents(amountCents, rate);
          expectBalancedViews(db, business.id, `payment ${index + 1} of ${parts.length}`);
          expect(recorded.invoice.status).to.equal(index === parts.length - 1 ? 'paid' : 'partially_paid');
        });

        const invoice = findInvoice(db, invoiceId)!;
        expect(invoice.paidCents).to.equal(priced.totalCents);
        expect(receivable(), 'the receivable ends at exactly zero').to.equal(0n);

        const bank = signedSum(db, business.id, "a.name = 'Business Checking' AND l.basis = 'both'");
        expect(bank, 'the bank holds each payment at its own rate').to.equal(cashUsdCents);
        const revenuePlaceholders = REVENUE_ACCOUNTS.map(() => '?').join(', ');
        const cashRevenue = -signedSum(db, business.id, `a.name IN (${revenuePlaceholders}) AND l.basis = 'cash'`, ...REVENUE_ACCOUNTS);
        const cashTax = -signedSum(db, business.id, "a.name = 'Sales Tax Payable' AND l.basis = 'cash'");
        expect(cashRevenue + cashTax, 'cash-view revenue + sales tax = cash received').to.equal(cashUsdCents);
        // Cumulatively, revenue = round(cash so far x subtotal / total).
        expect(cashRevenue).to.equal(divideRoundHalfAwayFromZero(cashUsdCents * priced.subtotalCents, priced.totalCents));
        // Accrual view: revenue and tax as converted at send; the FX account takes cash minus receivable.
        expect(-signedSum(db, business.id, `a.name IN (${revenuePlaceholders}) AND l.basis = 'accrual'`, ...REVENUE_ACCOUNTS)).to.equal(subtotalUsdCents);
        expect(-signedSum(db, business.id, "a.name = 'Sales Tax Payable' AND l.basis = 'accrual'")).to.equal(taxUsdCents);
        const fxGain = -signedSum(db, business.id, "a.name = 'Realized FX Gain or Loss'");
        expect(fxGain).to.equal(cashUsdCents - receivableUsdCents);
        if (life.currency === 'USD') expect(fxGain).to.equal(0n);
      }),
      RUNS,
    );
  });

  /*
   * MXN 1,000.00 sent at 0.05 USD per peso (receivable USD 50.00), then a payment of MXN 0.09:
   * cash round(9 x 0.05 = 0.45) = 0, receivable cleared round(0.45) = 0, revenue and tax 0. Every
   * line is zero, so the posting engine has nothing to post. The caller's input is ordinary:
   * it must be recorded or refused with a validation error, not end in a bare Error (a 500).
   */
  it('a payment worth less than one US cent is recorded or refused as validation_failed, never a bare failure', () => {
    const { business, customerId } = newBusiness('accrual');
    setRate(db, clock, CLI_ACTOR, { currency: 'MXN', date: ISSUE_DATE, usdPerUnit: '0.05' });
    const { invoiceId } = inTransaction(db, () =>
      createInvoice(db, clock, TEST_ACTOR, {
        business,
        customerId,
        issueDate: ISSUE_DATE,
        currency: 'MXN',
        lines: [{ description: 'Repairs', quantity: '1', unitPriceCents: 100000n, accountId: accountIdByName(db, business.id, 'Service Revenue') }],
      }),
    );
    inTransaction(db, () => sendInvoice(db, clock, TEST_ACTOR, invoiceId, MAIL));
    let thrown: unknown;
    try {
      inTransaction(db, () => recordPayment(db, clock, TEST_ACTOR, { invoiceId, amountCents: 9n, method: 'cash', paidAt: ISSUE_DATE }));
    } catch (error) {
      thrown = error;
    }
    if (thrown !== undefined) {
      expect(thrown, `threw ${(thrown as Error).name}: ${(thrown as Error).message}`).to.be.instanceOf(ApiError);
      expect((thrown as ApiError).code).to.equal('validation_failed');
      expect(findInvoice(db, invoiceId)!.paidCents).to.equal(0n);
    } else {
      expect(findInvoice(db, invoiceId)!.paidCents).to.equal(9n);
    }
    expectBalancedViews(db, business.id, 'the sub-cent payment');
  });

  it('cash basis: each account ends with exactly what it earns, however many payments (no cent drifts between accounts)', () => {
    const { business, customerId } = newBusiness('cash');
    const sales = accountIdByName(db, business.id, 'Sales');
    const service = accountIdByName(db, business.id, 'Service Revenue');
    const { invoiceId } = inTransaction(db, () =>
      createInvoice(db, clock, TEST_ACTOR, {
        business,
        customerId,
        issueDate: ISSUE_DATE,
        lines: [
          { description: 'Bread', quantity: '1', unitPriceCents: 100n, accountId: sales },
          { description: 'Delivery', quantity: '1', unitPriceCents: 100n, accountId: service },
        ],
      }),
    );
    inTransaction(db, () => sendInvoice(db, clock, TEST_ACTOR, invoiceId, MAIL));
    // Nine payments of one cent: each alone would send its cent to the first account.
    for (let i = 0; i < 9; i++) {
      inTransaction(db, () => recordPayment(db, clock, TEST_ACTOR, { invoiceId, amountCents: 1n, method: 'cash', paidAt: ISSUE_DATE }));
      expectBalancedViews(db, business.id, `payment ${i + 1}`);
    }
    inTransaction(db, () => recordPayment(db, clock, TEST_ACTOR, { invoiceId, amountCents: 191n, method: 'cash', paidAt: ISSUE_DATE }));
    const cashRevenue = (accountId: string) => -signedSum(db, business.id, "l.basis = 'cash' AND l.ledger_account_id = ?", accountId);
    expect([cashRevenue(sales), cashRevenue(service)]).to.deep.equal([100n, 100n]);
    expectBalancedViews(db, business.id, 'the settling payment');
  });
});

