import { expect } from 'chai';
import { DEMO_HISTORY_DAYS, DEMO_TENANT_NAME, seedDemo } from '../../src/seeds/demo.js';
import { listCustomers } from '../../src/books/customers.js';
import { listTransactions } from '../../src/books/transactions.js';
import { getTenant } from '../../src/books/tenants.js';
import { getBusiness, listBusinesses } from '../../src/books/businesses.js';
import { listReviewQueue } from '../../src/books/review.js';
import { refreshToday } from '../../src/books/today.js';
import { authenticateKey, listKeys } from '../../src/books/keys.js';
import { ledgerTotals } from '../../src/books/ledger.js';
import { payablesAging } from '../../src/books/reports/aging.js';
import { profitAndLoss } from '../../src/books/reports/statements.js';
import { verifyBalances } from '../../src/books/reports/verify.js';
import { fixedClock } from '../../src/clock.js';
import { addDays } from '../../src/dates.js';
import { all } from '../../src/db/statements.js';
import { freshDb, type TempDb } from '../support/db.js';
import { CLOCK_START } from './support.js';

describe('demo seed (src/seeds/demo.ts)', () => {
  let temp: TempDb;
  const clock = fixedClock(CLOCK_START);
  beforeEach(async () => (temp = await freshDb()));
  afterEach(() => temp.close());

  it('creates a middle-plan account on plan budgets, with an accrual and a cash business', () => {
    const demo = seedDemo(temp.db, clock);
    const account = getTenant(temp.db, demo.tenantId);
    expect(account).to.include({ name: DEMO_TENANT_NAME, plan: 'middle', billingState: 'active', apiAccess: true });
    expect(account.rateLimit).to.deep.equal({ mode: 'plan' });
    const businesses = listBusinesses(temp.db, demo.tenantId);
    expect(businesses.map((b) => b.basis).sort()).to.deep.equal(['accrual', 'cash']);
    expect(demo.businesses).to.deep.equal(businesses.map((b) => ({ id: b.id, name: b.name })));
  });

  it('makes a read-write key for every business that authenticates, and a read-only one that expires', () => {
    const demo = seedDemo(temp.db, clock);
    const principal = authenticateKey(temp.db, clock, demo.key);
    expect(principal).to.include({ keyId: demo.keyId, access: 'read_write', businessIds: null });
    const keys = listKeys(temp.db, demo.tenantId);
    expect(keys.map((key) => [key.name, key.access, key.expiresOn]).sort()).to.deep.equal([
      ['demo key', 'read_write', null],
      ['nightly export', 'read', '2026-03-25'],
    ]);
  });

  it('posts balanced entries, an opening deposit first, over the two years up to the clock', () => {
    const demo = seedDemo(temp.db, clock);
    for (const business of demo.businesses) {
      for (const view of ['accrual', 'cash'] as const) {
        const totals = ledgerTotals(temp.db, business.id, view);
        expect(totals.debitCents).to.equal(totals.creditCents);
        expect(totals.debitCents > 0n).to.equal(true);
      }
      const entries = all<{ entry_date: string; source_type: string }>(
        temp.db,
        'SELECT entry_date, source_type FROM journal_entries WHERE business_id = ? ORDER BY entry_date, created_at',
        business.id,
      );
      expect(entries.length).to.be.at.least(150);
      expect(entries[0]?.source_type).to.equal('opening_balance');
      expect(entries.slice(1).map((entry) => entry.source_type)).to.satisfy((types: string[]) =>
        types.every((type) => ['expense', 'invoice', 'invoice_payment', 'reversal', 'manual', 'bill', 'bill_payment'].includes(type)),
      );
      const first = addDays('2026-03-15', -DEMO_HISTORY_DAYS - 1);
      for (const entry of entries) {
        expect(entry.entry_date >= first && entry.entry_date <= '2026-03-15', entry.entry_date).to.equal(true);
      }
      expect(entries[entries.length - 1]!.entry_date >= addDays('2026-03-15', -31), 'recent expenses too').to.equal(true);
    }
  });

  it('holds a few hundred expenses from a dozen vendors, as POST /expenses records them', () => {
    const demo = seedDemo(temp.db, clock);
    const count = (sql: string, ...params: unknown[]) => Number(Object.values(temp.db.prepare(sql).get(...params) as Record<string, bigint>)[0]);
    // Twelve paid through expenses; two more only send bills.
    expect(count('SELECT count(*) FROM vendors WHERE tenant_id = ?', demo.tenantId)).to.equal(14);
    const expenses = count('SELECT count(*) FROM expenses');
    expect(expenses).to.be.within(300, 700);
    expect(count("SELECT count(*) FROM transactions WHERE source = 'manual' AND status = 'accepted'")).to.equal(expenses);
  });

  it('holds bills in every aging bucket, weekly takings, and profitable years; the stored balances agree with the lines', () => {
    const demo = seedDemo(temp.db, clock);
    const [bakery, landscaping] = demo.businesses.map((business) => getBusiness(temp.db, business.id));
    const aging = payablesAging(temp.db, bakery!.id, '2026-03-15');
    expect(Object.entries(aging.buckets).filter(([, cents]) => cents > 0n).map(([bucket]) => bucket)).to.deep.equal(['current', 'd1_30', 'd31_60', 'd61_90', 'd90plus']);
    expect(payablesAging(temp.db, landscaping!.id, '2026-03-15').items.map((item) => item.number)).to.deep.equal(['GN-3301', 'RF-912', 'STR-404']);
    for (const business of [bakery!, landscaping!]) {
      const year = profitAndLoss(temp.db, business, '2025-03-16', '2026-03-15');
      expect(year.totals.netIncomeCents > 0n, `${business.name} made money over the last year`).to.equal(true);
      expect(verifyBalances(temp.db, business.id).mismatchCount).to.equal(0);
    }
  });

  it('holds customers in all five currencies, more than a page of them', () => {
    const demo = seedDemo(temp.db, clock);
    const page = listCustomers(temp.db, demo.tenantId, {}, { limit: 50 });
    expect(page.nextCursor).to.be.a('string');
    const currencies = all<{ currency: string }>(temp.db, 'SELECT DISTINCT currency FROM customers WHERE tenant_id = ? ORDER BY currency', demo.tenantId);
    expect(currencies.map((row) => row.currency)).to.deep.equal(['CAD', 'EUR', 'GBP', 'MXN', 'USD']);
  });

  it('fills more than a page of each business\'s register', () => {
    const demo = seedDemo(temp.db, clock);
    for (const business of demo.businesses) {
      expect(listTransactions(temp.db, business.id, {}, { limit: 50 }).nextCursor, business.name).to.be.a('string');
    }
  });

  it('gives the same books for the same clock', async () => {
    const amounts = (db: typeof temp.db) => all<{ amount_cents: bigint }>(db, 'SELECT amount_cents FROM expenses ORDER BY expense_date, amount_cents').map((row) => row.amount_cents);
    seedDemo(temp.db, clock);
    const again = await freshDb();
    try {
      seedDemo(again.db, clock);
      expect(amounts(again.db)).to.deep.equal(amounts(temp.db));
    } finally {
      again.close();
    }
  });

  it('lists the rows of one date in the order it wrote them: the same day gives the same register and queue, at any hour of it', async () => {
    const withoutIds = (db: typeof temp.db, demo: ReturnType<typeof seedDemo>) =>
      demo.businesses.map((business) => {
        const { highConfidence, needsReview } = listReviewQueue(db, [business.id], 100, 0.9);
        return {
          register: listTransactions(db, business.id, {}, { limit: 100 }).rows.map(({ id: _id, ...row }) => row),
          queue: [...highConfidence, ...needsReview].map(({ id: _id, businessId: _business, transactionId: _transaction, proposedAccountId: _account, ...item }) => item),
        };
      });
    const morning = seedDemo(temp.db, fixedClock('2026-03-15T09:00:00.000Z'));
    const again = await freshDb();
    try {
      // Late enough that a seed writing from the clock's own instant would run into the next day.
      const lateEvening = seedDemo(again.db, fixedClock('2026-03-15T23:59:59.900Z'));
      expect(withoutIds(again.db, lateEvening)).to.deep.equal(withoutIds(temp.db, morning));
    } finally {
      again.close();
    }
  });

  it('holds invoices in every status, in at least three currencies, with a partial payment and a realised FX difference', () => {
    const demo = seedDemo(temp.db, clock);
    const statuses = all<{ status: string }>(temp.db, 'SELECT DISTINCT status FROM invoices ORDER BY status').map((row) => row.status);
    expect(statuses).to.deep.equal(['draft', 'overdue', 'paid', 'partially_paid', 'sent', 'viewed', 'void']);
    const currencies = all<{ currency: string }>(temp.db, "SELECT DISTINCT currency FROM invoices WHERE status <> 'draft'").map((row) => row.currency);
    expect(currencies.length).to.be.at.least(3);
    const fx = all<{ n: bigint }>(
      temp.db,
      "SELECT count(*) AS n FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id WHERE a.system_role = 'fx_gain_loss'",
    )[0]!.n;
    expect(Number(fx)).to.be.greaterThan(0);
    expect(all<{ n: bigint }>(temp.db, "SELECT count(*) AS n FROM email_outbox WHERE status <> 'sent'")[0]!.n).to.equal(0n);
    for (const business of demo.businesses) {
      const receivable = all<{ net: bigint | null }>(
        temp.db,
        `SELECT sum(CASE WHEN l.direction = 'debit' THEN l.amount_cents ELSE -l.amount_cents END) AS net
         FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
         WHERE l.business_id = ? AND a.system_role = 'accounts_receivable'`,
        business.id,
      )[0]!.net;
      // What is owed: the USD value of every unpaid sent invoice, at its issue rate, less what payments cleared.
      expect((receivable ?? 0n) > 0n, business.name).to.equal(true);
    }
  });

  it('holds review items in both lists, and money in kept out of the queue', () => {
    const demo = seedDemo(temp.db, clock);
    for (const business of demo.businesses) {
      const queue = listReviewQueue(temp.db, [business.id], 100, 0.9);
      expect(queue.highConfidence.length, `${business.name} high confidence`).to.be.greaterThan(0);
      expect(queue.needsReview.length, `${business.name} needs review`).to.be.greaterThan(0);
      expect(queue.needsReview.some((item) => item.confidence === null), `${business.name}: one nobody can place`).to.equal(true);
    }
    const moneyIn = all<{ n: bigint }>(temp.db, "SELECT count(*) AS n FROM transactions WHERE source = 'csv' AND direction = 'in' AND status = 'uncategorized'")[0]!.n;
    expect(moneyIn).to.equal(3n);
  });

  it('shows Today signals of every severity', () => {
    const demo = seedDemo(temp.db, clock);
    const severities = new Set<string>();
    for (const { id } of demo.businesses) {
      for (const signal of refreshToday(temp.db, clock, getBusiness(temp.db, id), { siteUrl: 'http://localhost:3000' }).signals) severities.add(signal.severity);
    }
    expect([...severities].sort()).to.deep.equal(['attention', 'blocking', 'informational', 'urgent']);
  });
});

