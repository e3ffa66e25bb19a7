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
import { receivablesAging } from '../../src/books/reports/aging.js';
import type { FixedClock } from '../../src/clock.js';
import { type Db, inTransaction } from '../../src/db/connection.js';
import { freshDb, type TempDb } from '../support/db.js';
import { accountIdByName, accountIdByRole, buildBusiness, buildTenant, TEST_ACTOR, testClock } from '../support/factories.js';

/**
 * Issue 27, "Payments in any currency settle to the cent": every payment from one cent up to the
 * balance is accepted in the invoice's currency, whatever it is worth in US dollars. A part worth
 * 0 US cents is recorded and posts only what is not zero (nothing at all when every line is
 * zero); the settling payment clears the receivable exactly, the rest going to realised FX.
 */

const RUNS = { numRuns: 60 };
const MAIL = { siteUrl: 'http://localhost:3000' };
const ISSUE_DATE = '2026-03-02';
const PAY_DATES = ['2026-03-02', '2026-03-05', '2026-03-09', '2026-03-13'] as const;

/** A rate at scale 6 as decimal text: 52418 is "0.052418". */
function rateText(units: number): string {
  const digits = String(units).padStart(7, '0');
  const fraction = digits.slice(-6).replace(/0+$/, '');
  const whole = digits.slice(0, -6);
  return fraction ? `${whole}.${fraction}` : whole;
}

/** USD per unit at scale 6: realistic for the currency, or tiny (a unit worth a thousandth of a US cent up to half a cent). */
const rateArb = (currency: 'MXN' | 'EUR' | 'GBP' | 'CAD') =>
  fc.oneof(
    {
      MXN: fc.integer({ min: 40_000, max: 70_000 }),
      EUR: fc.integer({ min: 900_000, max: 1_300_000 }),
      GBP: fc.integer({ min: 1_100_000, max: 1_500_000 }),
      CAD: fc.integer({ min: 650_000, max: 850_000 }),
    }[currency],
    fc.integer({ min: 1, max: 5_000 }),
  );

const partArb = fc.oneof(
  fc.constant({ kind: 'cent' as const, cents: 1n }),
  fc.record({ kind: fc.constant('small' as const), cents: fc.bigInt({ min: 1n, max: 99n }) }),
  fc.record({ kind: fc.constant('share' as const), cents: fc.bigInt({ min: 1n, max: 1_000_000n }) }),
);

const lifeArb = fc.constantFrom('MXN' as const, 'EUR' as const, 'GBP' as const, 'CAD' as const).chain((currency) =>
  fc.record({
    currency: fc.constant(currency),
    basis: fc.constantFrom('accrual' as const, 'cash' as const),
    lines: fc.array(
      fc.record({ quantity: fc.constantFrom('1', '2', '3', '0.5'), unitPriceCents: fc.oneof(fc.bigInt({ min: 1n, max: 500n }), fc.bigInt({ min: 1n, max: 5_000_000n })) }),
      { minLength: 1, maxLength: 3 },
    ),
    taxRatePercent: fc.option(fc.constantFrom('0', '7.25', '16', '20'), { nil: undefined }),
    issueRate: rateArb(currency),
    payRates: fc.array(rateArb(currency), { minLength: PAY_DATES.length, maxLength: PAY_DATES.length }),
    parts: fc.array(partArb, { maxLength: 5 }),
    // How the last of the balance is paid: in one payment, or (when it is a few cents) a cent at a time.
    finish: fc.constantFrom('one' as const, 'cents' as const),
    // Leave this many cents for the finish, as in MX$100.01 paid MX$100.00 then MX$0.01.
    leave: fc.bigInt({ min: 0n, max: 3n }),
  }),
);

describe('sub-cent settlement: payments in any currency settle to the cent (books level)', () => {
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
      findOrCreateCustomer(db, clock, TEST_ACTOR, tenant.id, { name: `Cliente ${++runNo}`, email: `pagos${runNo}@example.com` }),
    );
    return { business, customerId };
  }

  /** Every entry of the business balances in each view, and no line is zero. */
  function expectEveryEntryBalanced(businessId: string, after: string): void {
    const unbalanced = db
      .prepare(
        `SELECT entry_id,
           sum(CASE WHEN basis IN ('both','accrual') THEN (CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END) ELSE 0 END) AS accrual,
           sum(CASE WHEN basis IN ('both','cash') THEN (CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END) ELSE 0 END) AS cash,
           sum(CASE WHEN amount_cents <= 0 THEN 1 ELSE 0 END) AS zero_lines, count(*) AS lines
         FROM journal_lines WHERE business_id = ? GROUP BY entry_id
         HAVING accrual <> 0 OR cash <> 0 OR zero_lines > 0 OR lines < 2`,
      )
      .all(businessId);
    expect(unbalanced, `entries after ${after}`).to.deep.equal([]);
    for (const view of ['accrual', 'cash'] as const) {
      const totals = ledgerTotals(db, businessId, view);
      expect(totals.debitCents, `${view} trial balance after ${after}: debits = credits`).to.equal(totals.creditCents);
    }
  }

  function receivableUsdCents(businessId: string): bigint {
    const row = db
      .prepare(
        `SELECT coalesce(sum(CASE WHEN direction = 'debit' THEN amount_cents ELSE -amount_cents END), 0) AS n
         FROM journal_lines WHERE business_id = ? AND ledger_account_id = ? AND basis IN ('both','accrual')`,
      )
      .get(businessId, accountIdByRole(db, businessId, 'accounts_receivable')) as { n: bigint | number };
    return BigInt(row.n);
  }

  it('random foreign invoices paid in random parts, 1-cent and sub-US-cent parts included, end paid with the receivable at exactly zero', () => {
    fc.assert(
      fc.property(lifeArb, (life) => {
        const lines = life.lines.map((l) => ({ quantity: l.quantity, unitPriceCents: l.unitPriceCents }));
        let total: bigint;
        try {
          total = priceInvoice(lines, life.taxRatePercent).totalCents;
        } catch {
          total = 0n;
        }
        fc.pre(total > 0n);
        const { business, customerId } = newBusiness(life.basis);
        // Rates are installation-wide: each run sets the ones it uses just before using them.
        setRate(db, clock, CLI_ACTOR, { currency: life.currency, date: ISSUE_DATE, usdPerUnit: rateText(life.issueRate) });
        const { invoiceId } = inTransaction(db, () =>
          createInvoice(db, clock, TEST_ACTOR, {
            business,
            customerId,
            issueDate: ISSUE_DATE,
            currency: life.currency,
            ...(life.taxRatePercent === undefined ? {} : { taxRatePercent: life.taxRatePercent }),
            lines: lines.map((l, index) => ({ description: `Line ${index + 1}`, ...l, accountId: accountIdByName(db, business.id, 'Service Revenue') })),
          }),
        );
        inTransaction(db, () => sendInvoice(db, clock, TEST_ACTOR, invoiceId, MAIL));
        expectEveryEntryBalanced(business.id, 'the send');

        let payNo = 0;
        const pay = (amountCents: bigint) => {
          const index = Math.min(payNo, PAY_DATES.length - 1);
          const paidAt = PAY_DATES[index]!;
          setRate(db, clock, CLI_ACTOR, { currency: life.currency, date: paidAt, usdPerUnit: rateText(life.payRates[index]!) });
          const before = findInvoice(db, invoiceId)!;
          inTransaction(db, () => recordPayment(db, clock, TEST_ACTOR, { invoiceId, amountCents, method: 'wire', paidAt }));
          const after = findInvoice(db, invoiceId)!;
          expect(after.paidCents, `payment ${payNo + 1} of ${amountCents} recorded`).to.equal(before.paidCents + amountCents);
          expect(after.status).to.equal(after.paidCents === after.totalCents ? 'paid' : 'partially_paid');
          payNo += 1;
          expectEveryEntryBalanced(business.id, `payment ${payNo} of ${amountCents} at ${rateText(life.payRates[index]!)}`);
        };

        const reserve = life.leave < total ? life.leave : 0n;
        for (const part of life.parts) {
          const open = total - findInvoice(db, invoiceId)!.paidCents - reserve;
          if (open <= 0n) break;
          const wanted = part.kind === 'share' ? (part.cents * open) / 1_000_000n || 1n : part.cents;
          pay(wanted < open ? wanted : open);
        }
        const rest = total - findInvoice(db, invoiceId)!.paidCents;
        if (life.finish === 'cents' && rest <= 5n) {
          for (let i = 0n; i < rest; i++) pay(1n);
        } else if (rest > 0n) {
          pay(rest);
        }

        const invoice = findInvoice(db, invoiceId)!;
        expect(invoice.status).to.equal('paid');
        expect(invoice.paidCents).to.equal(invoice.totalCents);
        expect(receivableUsdCents(business.id), 'the USD receivable in the accrual view').to.equal(0n);
        expect(receivablesAging(db, business.id, '2026-03-15').items.map((item) => item.id)).to.not.include(invoiceId);
      }),
      RUNS,
    );
  });

  /*
   * The case from the issue: MX$100.01 at 0.052418 USD per peso is round(524.23...) = USD 5.24.
   * MX$100.00 clears round(524.18) = 524, all of it; the last MX$0.01 is worth round(0.52) = 0
   * US cents and clears nothing: every line of it is zero, so it posts no entry, and is recorded.
   */
  it('MX$100.01 paid MX$100.00 and then MX$0.01: the last centavo is recorded with no entry and the invoice is paid', () => {
    const { business, customerId } = newBusiness('accrual');
    setRate(db, clock, CLI_ACTOR, { currency: 'MXN', date: ISSUE_DATE, usdPerUnit: '0.052418' });
    const { invoiceId } = inTransaction(db, () =>
      createInvoice(db, clock, TEST_ACTOR, {
        business,
        customerId,
        issueDate: ISSUE_DATE,
        currency: 'MXN',
        lines: [{ description: 'Refacciones', quantity: '1', unitPriceCents: 10001n, accountId: accountIdByName(db, business.id, 'Service Revenue') }],
      }),
    );
    inTransaction(db, () => sendInvoice(db, clock, TEST_ACTOR, invoiceId, MAIL));
    inTransaction(db, () => recordPayment(db, clock, TEST_ACTOR, { invoiceId, amountCents: 10000n, method: 'wire', paidAt: ISSUE_DATE }));
    const entries = () => (db.prepare('SELECT count(*) AS n FROM journal_entries WHERE business_id = ?').get(business.id) as { n: bigint | number }).n;
    const entriesBefore = entries();
    const { paymentId, invoice } = inTransaction(db, () => recordPayment(db, clock, TEST_ACTOR, { invoiceId, amountCents: 1n, method: 'wire', paidAt: ISSUE_DATE }));
    expect(invoice).to.include({ status: 'paid', paidCents: 10001n });
    expect(entries(), 'no entry for a payment whose every line is zero').to.equal(entriesBefore);
    expect(db.prepare('SELECT usd_cents, receivable_usd_cents, journal_entry_id FROM invoice_payments WHERE id = ?').get(paymentId)).to.deep.equal({
      usd_cents: 0n,
      receivable_usd_cents: 0n,
      journal_entry_id: null,
    });
    expect(receivableUsdCents(business.id)).to.equal(0n);
    expectEveryEntryBalanced(business.id, 'the last centavo');
    expect(receivablesAging(db, business.id, '2026-03-15').items).to.deep.equal([]);
  });
});
