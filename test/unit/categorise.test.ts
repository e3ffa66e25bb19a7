import { expect } from 'chai';
import fc from 'fast-check';
import type { Business } from '../../src/books/businesses.js';
import { listPostableAccounts } from '../../src/books/chart.js';
import { recordExpense } from '../../src/books/expenses.js';
import { type CategoriseInput, type Categoriser, categoriserFor, type Proposal } from '../../src/books/categorise/index.js';
import { loadConfig } from '../../src/config.js';
import { inTransaction, type Db } from '../../src/db/connection.js';
import { foldName } from '../../src/names.js';
import { freshDb, type TempDb } from '../support/db.js';
import { generateExpenseHistory, type GeneratedExpense, insertExpenseHistory } from '../../bench/support/expense-history.js';
import { TEST_ACTOR, accountIdByName, accountIdByRole, buildBusiness, testClock } from '../support/factories.js';

/** The review threshold the app uses (DAYBOOK_REVIEW_CONFIDENCE, default 0.9). */
const THRESHOLD = loadConfig().reviewConfidence;

const inputOf = (expense: GeneratedExpense): CategoriseInput => ({
  description: expense.description,
  vendorName: expense.vendorName,
  amountCents: expense.amountCents,
});

describe('the expense categoriser (src/books/categorise)', () => {
  const clock = testClock();
  let temp: TempDb;
  before(async () => {
    temp = await freshDb();
  });
  after(() => temp.close());

  /** Every account an expense may be booked to: postable, not archived, no system role but uncategorized_expense and payment_fees. */
  function allowedAccountIds(db: Db, businessId: string): Set<string> {
    const rows = db
      .prepare(`SELECT id FROM ledger_accounts WHERE business_id = ? AND is_heading = 0 AND archived = 0 AND (system_role IS NULL OR system_role IN ('uncategorized_expense', 'payment_fees'))`)
      .all(businessId) as Array<{ id: string }>;
    return new Set(rows.map((row) => row.id));
  }

  describe('on a generated history of several thousand payments, the last 20 % held out', () => {
    let business: Business;
    let heldOut: GeneratedExpense[];
    let categoriser: Categoriser;
    let accountIds: Map<string, string>;

    before(() => {
      business = buildBusiness(temp.db, clock);
      const history = generateExpenseHistory(20260315, 5000);
      const cut = Math.floor(history.length * 0.8);
      // Held out by date: the training rows all come before the first held-out day.
      const cutDate = (history[cut] as GeneratedExpense).date;
      const training = history.filter((expense) => expense.date < cutDate);
      heldOut = history.filter((expense) => expense.date >= cutDate);
      insertExpenseHistory(temp.db, business, training);
      accountIds = new Map(listPostableAccounts(temp.db, business.id).map((account) => [account.name, account.id]));
      categoriser = categoriserFor(temp.db, business.id);
    });

    it(`is right at least 95 % of the time at or above the review threshold, and reaches it for at least half the held-out payments`, () => {
      let confident = 0;
      let confidentRight = 0;
      let proposed = 0;
      let proposedRight = 0;
      const bands = new Map<string, { n: number; right: number }>();
      for (const expense of heldOut) {
        const proposal = categoriser.propose(inputOf(expense));
        const right = proposal.accountId === accountIds.get(expense.accountName);
        if (proposal.confidence === null) continue;
        proposed += 1;
        if (right) proposedRight += 1;
        if (proposal.confidence >= THRESHOLD) {
          confident += 1;
          if (right) confidentRight += 1;
        }
        const band = proposal.confidence >= 0.9 ? '0.90-1.00' : proposal.confidence >= 0.75 ? '0.75-0.89' : proposal.confidence >= 0.5 ? '0.50-0.74' : '0.00-0.49';
        const entry = bands.get(band) ?? { n: 0, right: 0 };
        entry.n += 1;
        if (right) entry.right += 1;
        bands.set(band, entry);
      }
      const precision = confidentRight / confident;
      const coverage = confident / heldOut.length;
      console.log(
        `      at confidence >= ${THRESHOLD}: precision ${(precision * 100).toFixed(1)} % (${confidentRight}/${confident}), ` +
          `coverage ${(coverage * 100).toFixed(1)} % (${confident}/${heldOut.length})`,
      );
      console.log(`      any proposal: ${proposed}/${heldOut.length}, right ${((proposedRight / proposed) * 100).toFixed(1)} %`);
      for (const band of [...bands.keys()].sort().reverse()) {
        const { n, right } = bands.get(band) as { n: number; right: number };
        console.log(`      confidence ${band}: ${n} proposals, ${((right / n) * 100).toFixed(1)} % right`);
      }
      expect(precision, 'precision at the threshold').to.be.at.least(0.95);
      expect(coverage, 'coverage at the threshold').to.be.at.least(0.5);
    });

    it('gives the same proposal for the same input, again and from a categoriser built afresh', () => {
      const again = categoriserFor(temp.db, business.id);
      for (const expense of heldOut) {
        const first = categoriser.propose(inputOf(expense));
        expect(categoriser.propose(inputOf(expense))).to.deep.equal(first);
        expect(again.propose(inputOf(expense))).to.deep.equal(first);
      }
    });

    it('proposes only accounts an expense may be booked to, in [0, 1] to two decimals, with a rationale of at most 2000 characters', () => {
      const allowed = allowedAccountIds(temp.db, business.id);
      for (const expense of heldOut) {
        const proposal = categoriser.propose(inputOf(expense));
        expectWellFormed(proposal, allowed);
      }
    });

    it('matches a bank description with another store number and city to the same merchant', () => {
      const proposal = categoriser.propose({ description: 'SHELL OIL 57442 AUSTIN TX', vendorName: null, amountCents: 4800n });
      expect(proposal.accountId).to.equal(accountIds.get('Travel'));
      expect(proposal.confidence).to.be.at.least(THRESHOLD);
      expect(proposal.rationale).to.match(/^(All \d+|\d+ of \d+) earlier payments described as 'shell oil' were booked to Travel\.$/);
    });

    it('names the vendor and the counts in its rationale', () => {
      const proposal = categoriser.propose({ description: null, vendorName: 'Staples', amountCents: 4000n });
      expect(proposal.accountId).to.equal(accountIds.get('Office Supplies'));
      expect(proposal.rationale).to.match(/^(All \d+|\d+ of \d+) earlier payments to Staples were booked to Office Supplies/);
    });

    it('keeps a payee booked to two accounts below the threshold', () => {
      const proposal = categoriser.propose({ description: null, vendorName: 'Costco', amountCents: 10000n });
      expect(proposal.confidence).to.be.below(THRESHOLD);
      expect(proposal.confidence).to.be.above(0);
    });

    it('puts a misspelt name of a known payee below the threshold, saying what it looks like', () => {
      // One letter dropped: the generator's misspellings swap letters, so this name has no history of its own.
      const proposal = categoriser.propose({ description: null, vendorName: 'Stapls', amountCents: 4000n });
      expect(proposal.accountId).to.equal(accountIds.get('Office Supplies'));
      expect(proposal.confidence).to.be.below(THRESHOLD);
      expect(proposal.rationale).to.match(/^'Stapls' looks like Staples: (all \d+|\d+ of \d+) earlier payments to Staples were booked to Office Supplies\.$/);
    });
  });

  describe('on fresh books (no history)', () => {
    let business: Business;
    let categoriser: Categoriser;
    before(() => {
      business = buildBusiness(temp.db, clock);
      categoriser = categoriserFor(temp.db, business.id);
    });

    const cases: Array<[input: Partial<CategoriseInput>, accountName: string, phrase: string]> = [
      [{ description: 'SHELL OIL 57442 AUSTIN TX' }, 'Travel', 'shell'],
      [{ vendorName: 'Adobe', description: 'Creative Cloud' }, 'Software and Subscriptions', 'adobe'],
      [{ description: 'OFFICE DEPOT #1123 DALLAS TX' }, 'Office Supplies', 'office depot'],
      [{ description: 'SQ *UBER EATS 8005928996' }, 'Meals', 'uber eats'],
      [{ vendorName: "Joe's Fuel Stop" }, 'Travel', 'fuel'],
      [{ description: 'MONTHLY SERVICE FEE' }, 'Bank Fees', 'service fee'],
      [{ vendorName: 'Riverside Cafe' }, 'Meals', 'cafe'],
      [{ vendorName: 'AT&T' }, 'Utilities', 'att'],
      [{ vendorName: 'Upwork', description: 'Milestone payment' }, 'Contractors', 'upwork'],
      [{ description: 'Liability insurance premium' }, 'Insurance', 'insurance premium'],
    ];
    for (const [input, accountName, phrase] of cases) {
      it(`proposes ${accountName} below the threshold for ${JSON.stringify(input)}, naming '${phrase}'`, () => {
        const proposal = categoriser.propose({ description: null, vendorName: null, amountCents: 2500n, ...input });
        expect(proposal.accountId).to.equal(accountIdByName(temp.db, business.id, accountName));
        expect(proposal.confidence).to.be.at.least(0.6).and.below(0.9);
        expect(proposal.rationale).to.include(`'${phrase}'`);
        expect(proposal.rationale).to.include(accountName);
      });
    }

    it('gives no proposal and null confidence for text it cannot place, and says so', () => {
      const proposal = categoriser.propose({ description: 'XYZ 123', vendorName: null, amountCents: 999n });
      expect(proposal).to.deep.equal({
        accountId: null,
        confidence: null,
        rationale: "No earlier payment or known merchant matches 'XYZ 123'; choose the account yourself.",
      });
    });

    it('gives no proposal when there is neither vendor nor description', () => {
      const proposal = categoriser.propose({ description: '   ', vendorName: null, amountCents: 999n });
      expect(proposal.accountId).to.equal(null);
      expect(proposal.confidence).to.equal(null);
      expect(proposal.rationale).to.equal('There is no vendor or description to go on; choose the account yourself.');
    });

    it('quotes text safely: no control characters, one line, cut short', () => {
      const proposal = categoriser.propose({ description: `QQQ\u0007\nZZZ ${'W'.repeat(3000)}`, vendorName: null, amountCents: 1n });
      expect(proposal.rationale).to.not.match(/[\u0000-\u001f]/);
      expect([...proposal.rationale].length).to.be.below(200);
    });

    it('skips built-in knowledge whose account the business does not have (archived)', async () => {
      const other = await freshDb();
      try {
        const own = buildBusiness(other.db, clock);
        other.db.prepare(`UPDATE ledger_accounts SET archived = 1 WHERE business_id = ? AND name = 'Meals'`).run(own.id);
        const proposal = categoriserFor(other.db, own.id).propose({ description: 'STARBUCKS STORE #123', vendorName: null, amountCents: 500n });
        expect(proposal.accountId).to.equal(null);
      } finally {
        other.close();
      }
    });
  });

  describe('learn()', () => {
    it('uses an example learned for a new vendor in the next proposal, and grows surer with more', () => {
      const business = buildBusiness(temp.db, clock);
      const categoriser = categoriserFor(temp.db, business.id);
      const supplies = accountIdByName(temp.db, business.id, 'Office Supplies');
      const vendorName = 'Quarry Ridge Trading';
      expect(categoriser.propose({ vendorName, description: null, amountCents: 5000n }).accountId).to.equal(null);

      categoriser.learn({ vendorName, description: null, amountCents: 5000n, accountId: supplies });
      expect(categoriser.propose({ vendorName, description: null, amountCents: 5200n })).to.deep.equal({
        accountId: supplies,
        confidence: 0.66,
        rationale: 'The one earlier payment to Quarry Ridge Trading was booked to Office Supplies.',
      });

      for (let i = 0; i < 8; i += 1) categoriser.learn({ vendorName, description: null, amountCents: 5000n, accountId: supplies });
      const surer = categoriser.propose({ vendorName, description: null, amountCents: 5200n });
      expect(surer.accountId).to.equal(supplies);
      expect(surer.confidence).to.be.at.least(0.9);
      expect(surer.rationale).to.equal('All 9 earlier payments to Quarry Ridge Trading were booked to Office Supplies.');
    });

    it("prefers the business's own booking of a known merchant over built-in knowledge", () => {
      const business = buildBusiness(temp.db, clock);
      const categoriser = categoriserFor(temp.db, business.id);
      const equipment = accountIdByName(temp.db, business.id, 'Equipment');
      categoriser.learn({ vendorName: 'Staples', description: null, amountCents: 90000n, accountId: equipment });
      const proposal = categoriser.propose({ vendorName: 'Staples', description: null, amountCents: 90000n });
      expect(proposal.accountId).to.equal(equipment);
      expect(proposal.confidence).to.be.below(0.9);
    });

    it('learns bank descriptions: another store number and city match the same merchant', () => {
      const business = buildBusiness(temp.db, clock);
      const categoriser = categoriserFor(temp.db, business.id);
      const travel = accountIdByName(temp.db, business.id, 'Travel');
      for (const text of ['SHELL OIL 12931 DALLAS TX', 'SHELL OIL 40417 HOUSTON TX', 'SHELL OIL 55012 DENVER CO']) {
        categoriser.learn({ vendorName: null, description: text, amountCents: 4000n, accountId: travel });
      }
      const proposal = categoriser.propose({ vendorName: null, description: 'SHELL OIL 57442 AUSTIN TX', amountCents: 4400n });
      expect(proposal.accountId).to.equal(travel);
      expect(proposal.rationale).to.equal("All 3 earlier payments described as 'shell oil' were booked to Travel, as 'shell' usually is.");
      expect(proposal.confidence).to.be.above(0.7).and.below(0.9);
    });

    it('breaks a near tie between two accounts by the amount', () => {
      const business = buildBusiness(temp.db, clock);
      const categoriser = categoriserFor(temp.db, business.id);
      const meals = accountIdByName(temp.db, business.id, 'Meals');
      const supplies = accountIdByName(temp.db, business.id, 'Office Supplies');
      for (let i = 0; i < 3; i += 1) {
        categoriser.learn({ vendorName: 'Corner Market', description: null, amountCents: 1500n, accountId: meals });
        categoriser.learn({ vendorName: 'Corner Market', description: null, amountCents: 30000n, accountId: supplies });
      }
      const small = categoriser.propose({ vendorName: 'Corner Market', description: null, amountCents: 1400n });
      const large = categoriser.propose({ vendorName: 'Corner Market', description: null, amountCents: 28000n });
      expect(small.accountId).to.equal(meals);
      expect(large.accountId).to.equal(supplies);
      expect(large.rationale).to.equal('3 of 6 earlier payments to Corner Market were booked to Office Supplies and 3 to Meals; this amount is closer to the Office Supplies ones.');
      // Recency weights: the Meals bookings are each one step older than the Office Supplies ones.
      expect(small.confidence).to.equal(0.49);
    });

    it('refuses an example booked to an account of another business', () => {
      const business = buildBusiness(temp.db, clock);
      const other = buildBusiness(temp.db, clock);
      const categoriser = categoriserFor(temp.db, business.id);
      expect(() =>
        categoriser.learn({ vendorName: 'X', description: null, amountCents: 1n, accountId: accountIdByName(temp.db, other.id, 'Meals') }),
      ).to.throw(/not an account of this business/);
    });
  });

  describe('what counts as history', () => {
    it('reads recorded expenses and accepted or edited money out; pending, uncategorized and money-in rows are not history', () => {
      const business = buildBusiness(temp.db, clock);
      const rent = accountIdByName(temp.db, business.id, 'Rent');
      const travel = accountIdByName(temp.db, business.id, 'Travel');
      inTransaction(temp.db, () => {
        for (const date of ['2026-01-05', '2026-02-05']) {
          recordExpense(temp.db, clock, TEST_ACTOR, { business, date, amountCents: 150000n, vendor: { name: 'Harborview Leasing' }, accountId: rent, memo: 'Studio rent' });
        }
      });
      const vendorId = (temp.db.prepare('SELECT id FROM vendors WHERE tenant_id = ? AND name = ?').get(business.tenantId, 'Harborview Leasing') as { id: string }).id;
      const insert = temp.db.prepare(
        `INSERT INTO transactions (id, business_id, txn_date, amount_cents, direction, vendor_id, ledger_account_id, status, source, description, created_at)
         VALUES (?, ?, '2026-03-01', 5000, ?, ?, ?, ?, 'csv', NULL, '2026-03-01T00:00:00.000Z')`,
      );
      // None of these is a booked expense: each would otherwise say Travel.
      insert.run(`pending-${business.id}`, business.id, 'out', vendorId, null, 'pending');
      insert.run(`uncategorized-${business.id}`, business.id, 'out', vendorId, travel, 'uncategorized');
      for (let i = 0; i < 5; i += 1) insert.run(`in-${i}-${business.id}`, business.id, 'in', vendorId, travel, 'accepted');

      const before = categoriserFor(temp.db, business.id).propose({ vendorName: 'Harborview Leasing', description: null, amountCents: 150000n });
      expect(before.accountId).to.equal(rent);
      expect(before.rationale).to.equal('All 2 earlier payments to Harborview Leasing were booked to Rent.');

      // Accepting the pending item (as the review queue does) makes it history from then on.
      temp.db.prepare(`UPDATE transactions SET status = 'edited', ledger_account_id = ? WHERE id = ?`).run(rent, `pending-${business.id}`);
      const after = categoriserFor(temp.db, business.id).propose({ vendorName: 'Harborview Leasing', description: null, amountCents: 150000n });
      expect(after.rationale).to.equal('All 3 earlier payments to Harborview Leasing were booked to Rent.');
      expect(after.confidence).to.be.above(before.confidence as number);
    });
  });

  describe('only accounts an expense may be booked to are proposed', () => {
    let business: Business;
    let allowed: Set<string>;
    let everyAccount: string[];

    /** Books `count` payments to `vendorName` straight into the table, whatever the account. */
    function bookDirectly(vendorName: string, accountId: string, count: number): void {
      inTransaction(temp.db, () => {
        let vendor = temp.db.prepare('SELECT id FROM vendors WHERE tenant_id = ? AND name = ?').get(business.tenantId, vendorName) as { id: string } | undefined;
        if (!vendor) {
          vendor = { id: `v-${vendorName}-${business.id}` };
          temp.db.prepare('INSERT INTO vendors (id, tenant_id, name, name_key, created_at) VALUES (?, ?, ?, ?, ?)').run(vendor.id, business.tenantId, vendorName, foldName(vendorName), '2025-01-01T00:00:00.000Z');
        }
        for (let i = 0; i < count; i += 1) {
          temp.db
            .prepare(
              `INSERT INTO transactions (id, business_id, txn_date, amount_cents, direction, vendor_id, ledger_account_id, status, source, description, created_at)
               VALUES (?, ?, '2025-02-01', 1000, 'out', ?, ?, 'accepted', 'manual', NULL, ?)`,
            )
            .run(`t-${vendorName}-${accountId}-${i}`, business.id, vendor.id, accountId, `2025-02-01T00:00:0${i % 10}.000Z`);
        }
      });
    }

    before(() => {
      business = buildBusiness(temp.db, clock);
      const archived = accountIdByName(temp.db, business.id, 'Insurance');
      temp.db.prepare('UPDATE ledger_accounts SET archived = 1 WHERE id = ?').run(archived);
      const heading = (temp.db.prepare(`SELECT id FROM ledger_accounts WHERE business_id = ? AND name = 'Operating Expenses'`).get(business.id) as { id: string }).id;
      const refused: Array<[string, string]> = [
        ['Bank Booked Co', accountIdByRole(temp.db, business.id, 'bank')],
        ['Receivable Booked Co', accountIdByRole(temp.db, business.id, 'accounts_receivable')],
        ['Payable Booked Co', accountIdByRole(temp.db, business.id, 'accounts_payable')],
        ['Sales Tax Booked Co', accountIdByRole(temp.db, business.id, 'sales_tax_payable')],
        ['Heading Booked Co', heading],
        ['State Farm', archived],
      ];
      for (const [vendorName, accountId] of refused) bookDirectly(vendorName, accountId, 12);
      // Mostly refused, one allowed booking: that one is the proposal, with the refused ones as doubt.
      bookDirectly('Mixed Booked Co', accountIdByRole(temp.db, business.id, 'sales_tax_payable'), 9);
      bookDirectly('Mixed Booked Co', accountIdByName(temp.db, business.id, 'Travel'), 1);
      allowed = allowedAccountIds(temp.db, business.id);
      everyAccount = (temp.db.prepare('SELECT id FROM ledger_accounts WHERE business_id = ? ORDER BY code').all(business.id) as Array<{ id: string }>).map((row) => row.id);
    });

    it('never proposes the bank, receivables, payables, sales tax, a heading or an archived account, even when history booked there', () => {
      const categoriser = categoriserFor(temp.db, business.id);
      for (const vendorName of ['Bank Booked Co', 'Receivable Booked Co', 'Payable Booked Co', 'Sales Tax Booked Co', 'Heading Booked Co']) {
        const proposal = categoriser.propose({ vendorName, description: null, amountCents: 1000n });
        expect(proposal.accountId, vendorName).to.equal(null);
        expect(proposal.confidence, vendorName).to.equal(null);
      }
      // The archived Insurance account is out; nothing else knows State Farm's account.
      const insurer = categoriser.propose({ vendorName: 'State Farm', description: null, amountCents: 1000n });
      expect(insurer.accountId).to.equal(null);
      const mixed = categoriser.propose({ vendorName: 'Mixed Booked Co', description: null, amountCents: 1000n });
      expect(mixed.accountId).to.equal(accountIdByName(temp.db, business.id, 'Travel'));
      expect(mixed.confidence).to.equal(0.16);
      expect(mixed.rationale).to.equal('1 of 10 earlier payments to Mixed Booked Co were booked to Travel.');
    });

    it('holds for any history and any input (property)', () => {
      const word = fc.constantFrom('shell', 'oil', 'fuel', 'cafe', 'adobe', 'rent', 'fee', 'zeta', 'acme', 'service', '12345', '#77', '*', 'tx');
      const text = fc.option(fc.array(word, { minLength: 1, maxLength: 5 }).map((words) => words.join(' ')), { nil: null });
      const example = fc.record({ description: text, vendorName: text, amountCents: fc.bigInt({ min: 0n, max: 10n ** 9n }), account: fc.nat({ max: everyAccount.length - 1 }) });
      fc.assert(
        fc.property(fc.array(example, { maxLength: 40 }), fc.array(example, { minLength: 1, maxLength: 10 }), (history, inputs) => {
          const categoriser = categoriserFor(temp.db, business.id);
          for (const { account, ...input } of history) categoriser.learn({ ...input, accountId: everyAccount[account] as string });
          for (const { account: _unused, ...input } of inputs) {
            const proposal = categoriser.propose(input);
            expectWellFormed(proposal, allowed);
            expect(categoriser.propose(input)).to.deep.equal(proposal);
          }
        }),
        { numRuns: 150, seed: 42 },
      );
    });
  });
});

function expectWellFormed(proposal: Proposal, allowed: Set<string>): void {
  if (proposal.accountId === null) expect(proposal.confidence).to.equal(null);
  else {
    expect(allowed.has(proposal.accountId), `proposed ${proposal.accountId}`).to.equal(true);
    const confidence = proposal.confidence as number;
    expect(confidence).to.be.within(0, 1);
    expect(Math.round(confidence * 100) / 100).to.equal(confidence);
  }
  expect(proposal.rationale.length).to.be.above(0);
  expect([...proposal.rationale].length).to.be.at.most(2000);
  expect(proposal.rationale).to.match(/\.$/);
}
