import { expect } from 'chai';
import fc from 'fast-check';
import { updateTenant } from '../../src/books/tenants.js';
import type { Business } from '../../src/books/businesses.js';
import { type AccountType, listPostableAccounts } from '../../src/books/chart.js';
import {
  type JournalEntryDraft,
  type JournalLineDraft,
  type LineBasis,
  MAX_LINES_PER_ENTRY,
  PostingError,
  postingRefusal,
  withPostingFields,
  type PostingRule,
  assertDraftBalanced,
  getEntry,
  ledgerTotals,
  postEntry,
  reverseEntry,
  viewTotals,
} from '../../src/books/ledger.js';
import { isDateLocked, lockPeriod, lockedThrough } from '../../src/books/periods.js';
import type { FixedClock } from '../../src/clock.js';
import type { Db } from '../../src/db/connection.js';
import { inTransaction } from '../../src/db/connection.js';
import { ApiError } from '../../src/errors.js';
import { AMOUNT_CEILING_CENTS } from '../../src/money.js';
import { type TempDb, freshDb } from '../support/db.js';
import { TEST_ACTOR, accountIdByName, accountIdByRole, buildTenant, buildBusiness, testClock, postDeposit } from '../support/factories.js';

interface RowCounts {
  entries: bigint;
  lines: bigint;
}

function rowCounts(db: Db): RowCounts {
  const entries = db.prepare('SELECT count(*) AS n FROM journal_entries').get() as { n: bigint };
  const lines = db.prepare('SELECT count(*) AS n FROM journal_lines').get() as { n: bigint };
  return { entries: entries.n, lines: lines.n };
}

/** Runs a posting that must be refused; checks it wrote nothing and returns the PostingError. */
function refusedPosting(db: Db, post: () => unknown): PostingError {
  const before = rowCounts(db);
  let caught: unknown;
  try {
    post();
  } catch (error) {
    caught = error;
  }
  expect(caught, 'the posting should have been refused').to.be.instanceOf(PostingError);
  expect(rowCounts(db)).to.deep.equal(before);
  return caught as PostingError;
}

function headingId(db: Db, businessId: string): string {
  const row = db.prepare("SELECT id FROM ledger_accounts WHERE business_id = ? AND is_heading = 1 AND name = 'Assets'").get(businessId) as
    | { id: string }
    | undefined;
  if (!row) throw new Error('no Assets heading');
  return row.id;
}

/** Net debit balance per account type in one basis view, straight from the journal lines. */
function netByType(db: Db, businessId: string, view: 'accrual' | 'cash'): Record<AccountType, bigint> {
  const rows = db
    .prepare(
      `SELECT a.type AS type,
              sum(CASE WHEN l.direction = 'debit' THEN l.amount_cents ELSE -l.amount_cents END) AS net
       FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
       WHERE l.business_id = ? AND l.basis IN ('both', ?)
       GROUP BY a.type`,
    )
    .all(businessId, view) as { type: AccountType; net: bigint }[];
  const net: Record<AccountType, bigint> = { asset: 0n, liability: 0n, equity: 0n, revenue: 0n, expense: 0n };
  for (const row of rows) net[row.type] = row.net;
  return net;
}

/** assets = liabilities + equity + (revenue - expenses), each in its normal direction. */
function assertAccountingEquation(db: Db, businessId: string): void {
  for (const view of ['accrual', 'cash'] as const) {
    const net = netByType(db, businessId, view);
    const assets = net.asset;
    const expenses = net.expense;
    const liabilities = -net.liability;
    const equity = -net.equity;
    const revenue = -net.revenue;
    expect(assets, `${view} view: assets = liabilities + equity + current earnings`).to.equal(liabilities + equity + (revenue - expenses));
  }
}

function assertLedgerBalances(db: Db, businessId: string): void {
  for (const view of ['accrual', 'cash'] as const) {
    const totals = ledgerTotals(db, businessId, view);
    expect(totals.debitCents, `${view} trial balance`).to.equal(totals.creditCents);
  }
}

describe('posting engine', () => {
  let temp: TempDb;
  let db: Db;
  let clock: FixedClock;
  let business: Business;
  let bank: string;
  let receivable: string;
  let sales: string;
  let rent: string;
  let salesTax: string;

  const draft = (overrides: Partial<JournalEntryDraft> = {}): JournalEntryDraft => ({
    businessId: business.id,
    date: '2026-03-10',
    sourceType: 'manual',
    lines: [
      { accountId: bank, direction: 'debit', amountCents: 500n },
      { accountId: sales, direction: 'credit', amountCents: 500n },
    ],
    ...overrides,
  });

  before(async () => {
    temp = await freshDb();
    db = temp.db;
    clock = testClock();
    business = buildBusiness(db, clock);
    bank = accountIdByRole(db, business.id, 'bank');
    receivable = accountIdByRole(db, business.id, 'accounts_receivable');
    sales = accountIdByRole(db, business.id, 'sales');
    salesTax = accountIdByRole(db, business.id, 'sales_tax_payable');
    rent = accountIdByName(db, business.id, 'Rent');
  });

  after(() => temp.close());

  describe('postEntry', () => {
    it('posts a balanced two-line entry and reads it back', () => {
      const before = rowCounts(db);
      const posted = postEntry(db, clock, TEST_ACTOR, draft({ memo: 'Cash sale', sourceId: 'sale-1' }));
      expect(rowCounts(db)).to.deep.equal({ entries: before.entries + 1n, lines: before.lines + 2n });
      expect(posted).to.deep.include({
        businessId: business.id,
        date: '2026-03-10',
        memo: 'Cash sale',
        sourceType: 'manual',
        sourceId: 'sale-1',
        reversesEntryId: null,
        actor: 'cli',
        createdAt: '2026-03-15T12:00:00.000Z',
      });
      expect(posted.lines).to.deep.equal([
        { lineNo: 1, accountId: bank, direction: 'debit', amountCents: 500n, basis: 'both' },
        { lineNo: 2, accountId: sales, direction: 'credit', amountCents: 500n, basis: 'both' },
      ]);
      expect(getEntry(db, posted.id)).to.deep.equal(posted);

      const stored = db.prepare('SELECT * FROM journal_lines WHERE entry_id = ? ORDER BY line_no').all(posted.id) as Record<string, unknown>[];
      expect(stored.map((row) => [row.ledger_account_id, row.direction, row.amount_cents, row.entry_date, row.business_id])).to.deep.equal([
        [bank, 'debit', 500n, '2026-03-10', business.id],
        [sales, 'credit', 500n, '2026-03-10', business.id],
      ]);
    });

    it('posts an entry of many lines, one debit against several credits', () => {
      const posted = postEntry(
        db,
        clock,
        TEST_ACTOR,
        draft({
          lines: [
            { accountId: receivable, direction: 'debit', amountCents: 10_825n },
            { accountId: sales, direction: 'credit', amountCents: 10_000n },
            { accountId: salesTax, direction: 'credit', amountCents: 825n },
          ],
        }),
      );
      expect(posted.lines.map((line) => [line.lineNo, line.amountCents])).to.deep.equal([
        [1, 10_825n],
        [2, 10_000n],
        [3, 825n],
      ]);
    });

    it('accepts an amount one cent under the ceiling', () => {
      const justUnder = AMOUNT_CEILING_CENTS - 1n;
      const posted = postEntry(
        db,
        clock,
        TEST_ACTOR,
        draft({
          lines: [
            { accountId: bank, direction: 'debit', amountCents: justUnder },
            { accountId: sales, direction: 'credit', amountCents: justUnder },
          ],
        }),
      );
      expect(posted.lines.map((line) => line.amountCents)).to.deep.equal([justUnder, justUnder]);
    });

    it('records an api_key actor by type and id', () => {
      const posted = postEntry(db, clock, { type: 'api_key', id: 'key-123', name: 'bookkeeping app' }, draft());
      expect(posted.actor).to.equal('api_key:key-123');
    });

    it('joins the caller’s transaction: a later failure rolls the posting back', () => {
      const before = rowCounts(db);
      expect(() =>
        inTransaction(db, () => {
          postEntry(db, clock, TEST_ACTOR, draft());
          expect(rowCounts(db).entries).to.equal(before.entries + 1n);
          throw new Error('later step failed');
        }),
      ).to.throw('later step failed');
      expect(rowCounts(db)).to.deep.equal(before);
    });
  });

  describe('refuses a draft that breaks a rule, and writes nothing', () => {
    let otherBusiness: Business;
    let archived: string;

    before(() => {
      otherBusiness = buildBusiness(db, clock, { tenantId: business.tenantId });
      archived = accountIdByName(db, business.id, 'Meals');
      db.prepare('UPDATE ledger_accounts SET archived = 1 WHERE id = ?').run(archived);
    });

    const cases: { title: string; make: () => JournalEntryDraft; rule: PostingRule; line: number | null; problem: RegExp }[] = [
      {
        title: 'an unbalanced entry',
        make: () =>
          draft({
            lines: [
              { accountId: bank, direction: 'debit', amountCents: 500n },
              { accountId: sales, direction: 'credit', amountCents: 499n },
            ],
          }),
        rule: 'unbalanced',
        line: null,
        problem: /accrual view does not balance: debits 500 cents, credits 499 cents/,
      },
      {
        title: 'two debits and no credit',
        make: () =>
          draft({
            lines: [
              { accountId: bank, direction: 'debit', amountCents: 500n },
              { accountId: rent, direction: 'debit', amountCents: 500n },
            ],
          }),
        rule: 'unbalanced',
        line: null,
        problem: /does not balance/,
      },
      {
        title: 'a single line',
        make: () => draft({ lines: [{ accountId: bank, direction: 'debit', amountCents: 500n }] }),
        rule: 'too_few_lines',
        line: null,
        problem: /at least two lines/,
      },
      { title: 'no lines at all', make: () => draft({ lines: [] }), rule: 'too_few_lines', line: null, problem: /at least two lines/ },
      {
        title: 'more lines than the limit',
        make: () =>
          draft({
            lines: Array.from({ length: MAX_LINES_PER_ENTRY + 1 }, (_, i): JournalLineDraft => ({
              accountId: i % 2 === 0 ? bank : sales,
              direction: i === MAX_LINES_PER_ENTRY ? 'debit' : i % 2 === 0 ? 'debit' : 'credit',
              amountCents: 1n,
            })),
          }),
        rule: 'too_many_lines',
        line: null,
        problem: /at most 1000 lines/,
      },
      {
        title: 'a zero amount',
        make: () =>
          draft({
            lines: [
              { accountId: bank, direction: 'debit', amountCents: 0n },
              { accountId: sales, direction: 'credit', amountCents: 0n },
            ],
          }),
        rule: 'amount_not_positive',
        line: 0,
        problem: /^must be a positive/,
      },
      {
        title: 'a negative amount (direction says debit or credit, never the sign)',
        make: () =>
          draft({
            lines: [
              { accountId: bank, direction: 'debit', amountCents: 500n },
              { accountId: sales, direction: 'debit', amountCents: -500n },
            ],
          }),
        rule: 'amount_not_positive',
        line: 1,
        problem: /^must be a positive/,
      },
      {
        title: 'an amount held in a JS number',
        make: () =>
          draft({
            lines: [
              { accountId: bank, direction: 'debit', amountCents: 500 as unknown as bigint },
              { accountId: sales, direction: 'credit', amountCents: 500 as unknown as bigint },
            ],
          }),
        rule: 'amount_not_positive',
        line: 0,
        problem: /^must be a positive/,
      },
      {
        title: 'an amount at the ten-trillion-dollar ceiling',
        make: () =>
          draft({
            lines: [
              { accountId: bank, direction: 'debit', amountCents: AMOUNT_CEILING_CENTS },
              { accountId: sales, direction: 'credit', amountCents: AMOUNT_CEILING_CENTS },
            ],
          }),
        rule: 'amount_over_ceiling',
        line: 0,
        problem: /^must be under ten trillion dollars/,
      },
      {
        title: 'a heading account',
        make: () =>
          draft({
            lines: [
              { accountId: headingId(db, business.id), direction: 'debit', amountCents: 500n },
              { accountId: sales, direction: 'credit', amountCents: 500n },
            ],
          }),
        rule: 'account_is_heading',
        line: 0,
        problem: /^a heading account/,
      },
      {
        title: 'an archived account',
        make: () =>
          draft({
            lines: [
              { accountId: bank, direction: 'credit', amountCents: 500n },
              { accountId: archived, direction: 'debit', amountCents: 500n },
            ],
          }),
        rule: 'account_archived',
        line: 1,
        problem: /^the account is archived/,
      },
      {
        title: 'an account of another business',
        make: () =>
          draft({
            lines: [
              { accountId: bank, direction: 'debit', amountCents: 500n },
              { accountId: accountIdByRole(db, otherBusiness.id, 'sales'), direction: 'credit', amountCents: 500n },
            ],
          }),
        rule: 'account_other_business',
        line: 1,
        problem: /^the account belongs to another business/,
      },
      {
        title: 'an unknown account',
        make: () =>
          draft({
            lines: [
              { accountId: '00000000-0000-4000-8000-000000000000', direction: 'debit', amountCents: 500n },
              { accountId: sales, direction: 'credit', amountCents: 500n },
            ],
          }),
        rule: 'unknown_account',
        line: 0,
        problem: /^no such account/,
      },
      {
        title: 'an unknown business',
        make: () => draft({ businessId: '00000000-0000-4000-8000-000000000001' }),
        rule: 'unknown_business',
        line: null,
        problem: /does not exist/,
      },
      { title: 'an impossible date', make: () => draft({ date: '2026-02-30' }), rule: 'bad_date', line: null, problem: /^2026-02-30/ },
      { title: 'a date in another form', make: () => draft({ date: '2026-3-10' }), rule: 'bad_date', line: null, problem: /is not a date/ },
    ];

    for (const { title, make, rule, line, problem } of cases) {
      it(`refuses ${title} (${rule})`, () => {
        const error = refusedPosting(db, () => postEntry(db, clock, TEST_ACTOR, make()));
        expect(error.rule).to.equal(rule);
        expect(error.lineIndex).to.equal(line);
        expect(error.problem).to.match(problem);
      });
    }
  });

  describe('period locks', () => {
    let locked: Business;

    before(() => {
      locked = buildBusiness(db, clock, { tenantId: business.tenantId });
      lockPeriod(db, clock, TEST_ACTOR, locked.id, '2026-01-31');
    });

    const lockedDraft = (date: string): JournalEntryDraft => ({
      businessId: locked.id,
      date,
      sourceType: 'manual',
      lines: [
        { accountId: accountIdByRole(db, locked.id, 'bank'), direction: 'debit', amountCents: 1_000n },
        { accountId: accountIdByRole(db, locked.id, 'owner_equity'), direction: 'credit', amountCents: 1_000n },
      ],
    });

    it('refuses a date on the lock day (409 period_locked)', () => {
      const error = refusedPosting(db, () => postEntry(db, clock, TEST_ACTOR, lockedDraft('2026-01-31')));
      expect(error.rule).to.equal('period_locked');
      expect(error.problem).to.equal('2026-01-31 falls in a closed period (locked through 2026-01-31)');
    });

    it('reports period_locked before any shape problem of the draft', () => {
      const unbalanced = lockedDraft('2026-01-15');
      unbalanced.lines[0]!.amountCents = 999n;
      const error = refusedPosting(db, () => postEntry(db, clock, TEST_ACTOR, unbalanced));
      expect(error.rule).to.equal('period_locked');
    });

    it('refuses a date well inside the locked period', () => {
      expect(refusedPosting(db, () => postEntry(db, clock, TEST_ACTOR, lockedDraft('2025-06-30'))).rule).to.equal('period_locked');
    });

    it('accepts the day after the lock', () => {
      const posted = postEntry(db, clock, TEST_ACTOR, lockedDraft('2026-02-01'));
      expect(posted.date).to.equal('2026-02-01');
    });

    it('reports the lock through lockedThrough and isDateLocked', () => {
      expect(lockedThrough(db, locked.id)).to.equal('2026-01-31');
      expect(isDateLocked(db, locked.id, '2026-01-31')).to.equal(true);
      expect(isDateLocked(db, locked.id, '2026-02-01')).to.equal(false);
      expect(lockedThrough(db, business.id)).to.equal(null);
    });

    it('only moves a lock forward', () => {
      expect(() => lockPeriod(db, clock, TEST_ACTOR, locked.id, '2026-01-15'))
        .to.throw(ApiError)
        .with.property('code', 'conflict');
      expect(() => lockPeriod(db, clock, TEST_ACTOR, locked.id, '2026-01-31'))
        .to.throw(ApiError)
        .with.property('code', 'conflict');
      expect(() => lockPeriod(db, clock, TEST_ACTOR, locked.id, '2026-02-30'))
        .to.throw(ApiError)
        .with.property('code', 'validation_failed');
      lockPeriod(db, clock, TEST_ACTOR, locked.id, '2026-02-28');
      expect(lockedThrough(db, locked.id)).to.equal('2026-02-28');
      expect(refusedPosting(db, () => postEntry(db, clock, TEST_ACTOR, lockedDraft('2026-02-01'))).rule).to.equal('period_locked');
    });

    it('a reversal of an entry in a now-locked period is dated after the lock', () => {
      const open = buildBusiness(db, clock, { tenantId: business.tenantId });
      const entry = postDeposit(db, clock, open.id, '2026-01-10', 300n);
      lockPeriod(db, clock, TEST_ACTOR, open.id, '2026-01-31');
      expect(refusedPosting(db, () => reverseEntry(db, clock, TEST_ACTOR, entry.id, '2026-01-31')).rule).to.equal('period_locked');
      expect(reverseEntry(db, clock, TEST_ACTOR, entry.id, '2026-02-01').reversesEntryId).to.equal(entry.id);
    });
  });

  describe('billing past due', () => {
    it('refuses any posting with read_only_billing_state (402) until billing is settled', () => {
      const account = buildTenant(db, clock);
      const pastDue = buildBusiness(db, clock, { tenantId: account.id });
      const pastDueDraft: JournalEntryDraft = {
        businessId: pastDue.id,
        date: '2026-03-10',
        sourceType: 'manual',
        lines: [
          { accountId: accountIdByRole(db, pastDue.id, 'bank'), direction: 'debit', amountCents: 700n },
          { accountId: accountIdByRole(db, pastDue.id, 'sales'), direction: 'credit', amountCents: 700n },
        ],
      };
      updateTenant(db, clock, TEST_ACTOR, account.id, { billingState: 'past_due' });
      const error = refusedPosting(db, () => postEntry(db, clock, TEST_ACTOR, pastDueDraft));
      expect(error.rule).to.equal('billing_past_due');

      // Other accounts' businesses are unaffected.
      expect(postEntry(db, clock, TEST_ACTOR, draft()).businessId).to.equal(business.id);

      updateTenant(db, clock, TEST_ACTOR, account.id, { billingState: 'active' });
      expect(postEntry(db, clock, TEST_ACTOR, pastDueDraft).lines).to.have.lengthOf(2);
    });
  });

  describe('accrual-only and cash-only lines', () => {
    it('viewTotals counts both-basis lines in each view and single-basis lines in their own', () => {
      const lines: Pick<JournalLineDraft, 'direction' | 'amountCents' | 'basis'>[] = [
        { direction: 'debit', amountCents: 100n },
        { direction: 'credit', amountCents: 40n, basis: 'accrual' },
        { direction: 'credit', amountCents: 60n, basis: 'cash' },
        { direction: 'debit', amountCents: 7n, basis: 'both' },
      ];
      expect(viewTotals(lines, 'accrual')).to.deep.equal({ debitCents: 107n, creditCents: 40n });
      expect(viewTotals(lines, 'cash')).to.deep.equal({ debitCents: 107n, creditCents: 60n });
      expect(viewTotals([], 'cash')).to.deep.equal({ debitCents: 0n, creditCents: 0n });
    });

    it('posts a cash-basis payment: bank against receivable (accrual) and revenue (cash)', () => {
      const posted = postEntry(
        db,
        clock,
        TEST_ACTOR,
        draft({
          sourceType: 'invoice_payment',
          lines: [
            { accountId: bank, direction: 'debit', amountCents: 1_000n, basis: 'both' },
            { accountId: receivable, direction: 'credit', amountCents: 1_000n, basis: 'accrual' },
            { accountId: sales, direction: 'credit', amountCents: 1_000n, basis: 'cash' },
          ],
        }),
      );
      expect(posted.lines.map((line) => line.basis)).to.deep.equal(['both', 'accrual', 'cash']);
    });

    it('posts an entry made only of accrual lines', () => {
      const posted = postEntry(
        db,
        clock,
        TEST_ACTOR,
        draft({
          lines: [
            { accountId: receivable, direction: 'debit', amountCents: 2_500n, basis: 'accrual' },
            { accountId: sales, direction: 'credit', amountCents: 2_500n, basis: 'accrual' },
          ],
        }),
      );
      expect(viewTotals(posted.lines, 'cash')).to.deep.equal({ debitCents: 0n, creditCents: 0n });
      expect(viewTotals(posted.lines, 'accrual')).to.deep.equal({ debitCents: 2_500n, creditCents: 2_500n });
    });

    it('refuses lines that balance overall but not in the cash view', () => {
      const error = refusedPosting(db, () =>
        postEntry(
          db,
          clock,
          TEST_ACTOR,
          draft({
            lines: [
              { accountId: receivable, direction: 'debit', amountCents: 1_000n, basis: 'accrual' },
              { accountId: sales, direction: 'credit', amountCents: 1_000n, basis: 'both' },
            ],
          }),
        ),
      );
      expect(error.rule).to.equal('unbalanced');
      expect(error.message).to.match(/cash view does not balance: debits 0 cents, credits 1000 cents/);
    });

    it('refuses an accrual debit against a cash credit (neither view balances)', () => {
      const error = refusedPosting(db, () =>
        postEntry(
          db,
          clock,
          TEST_ACTOR,
          draft({
            lines: [
              { accountId: receivable, direction: 'debit', amountCents: 1_000n, basis: 'accrual' },
              { accountId: sales, direction: 'credit', amountCents: 1_000n, basis: 'cash' },
            ],
          }),
        ),
      );
      expect(error.rule).to.equal('unbalanced');
      expect(error.message).to.match(/accrual view does not balance/);
    });

    it('assertDraftBalanced checks the shape alone, without a database', () => {
      expect(() =>
        assertDraftBalanced(
          draft({
            lines: [
              { accountId: 'a', direction: 'debit', amountCents: 5n, basis: 'cash' },
              { accountId: 'b', direction: 'credit', amountCents: 5n, basis: 'cash' },
            ],
          }),
        ),
      ).to.not.throw();
      expect(() =>
        assertDraftBalanced(
          draft({
            lines: [
              { accountId: 'a', direction: 'debit', amountCents: 5n, basis: 'cash' },
              { accountId: 'b', direction: 'credit', amountCents: 5n, basis: 'accrual' },
            ],
          }),
        ),
      )
        .to.throw(PostingError)
        .with.property('rule', 'unbalanced');
    });
  });

  describe('reverseEntry', () => {
    it('posts a mirror entry and the ledger nets to zero', () => {
      const own = buildBusiness(db, clock, { tenantId: business.tenantId });
      const ownBank = accountIdByRole(db, own.id, 'bank');
      const ownAr = accountIdByRole(db, own.id, 'accounts_receivable');
      const ownSales = accountIdByRole(db, own.id, 'sales');
      const ownTax = accountIdByRole(db, own.id, 'sales_tax_payable');
      const original = postEntry(db, clock, TEST_ACTOR, {
        businessId: own.id,
        date: '2026-03-01',
        sourceType: 'invoice',
        sourceId: 'inv-1',
        lines: [
          { accountId: ownAr, direction: 'debit', amountCents: 1_082n, basis: 'accrual' },
          { accountId: ownSales, direction: 'credit', amountCents: 1_000n, basis: 'accrual' },
          { accountId: ownTax, direction: 'credit', amountCents: 82n, basis: 'accrual' },
          { accountId: ownBank, direction: 'debit', amountCents: 5n },
          { accountId: ownSales, direction: 'credit', amountCents: 5n },
        ],
      });
      const before = rowCounts(db);
      const reversal = reverseEntry(db, clock, TEST_ACTOR, original.id, '2026-03-05');
      expect(rowCounts(db)).to.deep.equal({ entries: before.entries + 1n, lines: before.lines + 5n });
      expect(reversal).to.deep.include({
        businessId: own.id,
        date: '2026-03-05',
        sourceType: 'reversal',
        sourceId: 'inv-1',
        reversesEntryId: original.id,
        memo: `Reversal of entry ${original.id}`,
      });
      expect(reversal.lines).to.deep.equal(
        original.lines.map((line) => ({ ...line, direction: line.direction === 'debit' ? 'credit' : 'debit' })),
      );
      // The original stays as it was: a correction never edits posted rows.
      expect(getEntry(db, original.id)).to.deep.equal(original);

      const balances = db
        .prepare(
          `SELECT ledger_account_id, basis, sum(CASE WHEN direction = 'debit' THEN amount_cents ELSE -amount_cents END) AS net
           FROM journal_lines WHERE business_id = ? GROUP BY ledger_account_id, basis`,
        )
        .all(own.id) as { net: bigint }[];
      expect(balances).to.have.lengthOf(5);
      expect(balances.map((row) => row.net)).to.deep.equal([0n, 0n, 0n, 0n, 0n]);
      for (const view of ['accrual', 'cash'] as const) {
        expect(ledgerTotals(db, own.id, view, '2026-03-04')).to.deep.equal(
          view === 'accrual' ? { debitCents: 1_087n, creditCents: 1_087n } : { debitCents: 5n, creditCents: 5n },
        );
        expect(ledgerTotals(db, own.id, view)).to.deep.equal(
          view === 'accrual' ? { debitCents: 2_174n, creditCents: 2_174n } : { debitCents: 10n, creditCents: 10n },
        );
      }
    });

    it('refuses to reverse the same entry twice (409 conflict) and writes nothing', () => {
      const original = postEntry(db, clock, TEST_ACTOR, draft());
      reverseEntry(db, clock, TEST_ACTOR, original.id, '2026-03-11');
      const before = rowCounts(db);
      expect(() => reverseEntry(db, clock, TEST_ACTOR, original.id, '2026-03-12'))
        .to.throw(ApiError)
        .with.property('code', 'conflict');
      expect(rowCounts(db)).to.deep.equal(before);
    });

    it('takes a memo and refuses an unknown entry', () => {
      const original = postEntry(db, clock, TEST_ACTOR, draft());
      expect(reverseEntry(db, clock, TEST_ACTOR, original.id, '2026-03-11', 'Entered twice').memo).to.equal('Entered twice');
      expect(() => reverseEntry(db, clock, TEST_ACTOR, '00000000-0000-4000-8000-000000000002', '2026-03-11'))
        .to.throw(ApiError)
        .with.property('code', 'not_found');
    });
  });

  describe('PostingError and how a command reports it', () => {
    it('carries the broken rule, the problem and the journal line, and nothing of the API', () => {
      const error = new PostingError('account_archived', 'the account is archived', 2);
      expect(error).to.not.be.instanceOf(ApiError);
      expect(error).to.include({ name: 'PostingError', rule: 'account_archived', problem: 'the account is archived', lineIndex: 2 });
      expect(error.message).to.equal('posting refused (account_archived, line 2): the account is archived');
    });

    it('maps a rule the caller can break to the command\'s own field (422 naming it)', () => {
      const refusal = postingRefusal(new PostingError('account_archived', 'the account is archived', 0), { account_archived: 'accountId' });
      expect(refusal).to.be.instanceOf(ApiError).and.include({ code: 'validation_failed', message: 'accountId: the account is archived' });
    });

    it('maps a journal line to the request\'s line through the command\'s function', () => {
      const toInvoiceLine = (lineIndex: number | null) => `lines.${(lineIndex ?? 0) - 1}.accountId`;
      const refusal = postingRefusal(new PostingError('account_is_heading', 'a heading account cannot take postings', 3), { account_is_heading: toInvoiceLine });
      expect(refusal).to.include({ code: 'validation_failed', message: 'lines.2.accountId: a heading account cannot take postings' });
    });

    it('keeps period_locked (409) and read_only_billing_state (402) whatever the command maps', () => {
      const locked = postingRefusal(new PostingError('period_locked', '2026-01-31 falls in a closed period (locked through 2026-01-31)'), { period_locked: 'date' });
      expect(locked).to.include({ code: 'period_locked', status: 409, message: 'date: 2026-01-31 falls in a closed period (locked through 2026-01-31)' });
      const billing = postingRefusal(new PostingError('billing_past_due', 'billing is past due'), {});
      expect(billing).to.include({ code: 'read_only_billing_state', status: 402 });
    });

    it('turns a rule the command did not map into a plain Error (a bug: logged, answered as internal_error)', () => {
      const original = new PostingError('unbalanced', 'the accrual view does not balance: debits 1 cents, credits 2 cents');
      const refusal = postingRefusal(original, { account_archived: 'accountId' });
      expect(refusal).to.not.be.instanceOf(ApiError);
      expect(refusal.message).to.match(/should have prevented.*unbalanced/);
      expect(refusal.cause).to.equal(original);
    });

    it('withPostingFields passes other errors through untouched', () => {
      const other = new Error('disk full');
      expect(() => withPostingFields({}, () => { throw other; })).to.throw(other);
      expect(withPostingFields({}, () => 7)).to.equal(7);
    });
  });

  describe('properties', () => {
    interface Leg {
      debit: number;
      credit: number;
      amountCents: bigint;
      splitPerMille: number;
      basis: LineBasis;
      keys: [number, number, number];
    }

    const legArb = (maxCents: bigint) =>
      fc.record({
        debit: fc.nat(),
        credit: fc.nat(),
        amountCents: fc.oneof(fc.bigInt({ min: 1n, max: 1_000_000n }), fc.bigInt({ min: 1n, max: maxCents })),
        splitPerMille: fc.integer({ min: 0, max: 999 }),
        basis: fc.constantFrom<LineBasis>('both', 'both', 'accrual', 'cash'),
        keys: fc.tuple(fc.nat(), fc.nat(), fc.nat()),
      });

    const dateArb = fc.integer({ min: 0, max: 364 }).map((day) => new Date(Date.UTC(2026, 0, 1 + day)).toISOString().slice(0, 10));

    /** Each leg debits one account and credits another (sometimes split in two); lines are shuffled. */
    function linesOf(legs: Leg[], accounts: string[]): JournalLineDraft[] {
      const keyed: { key: number; line: JournalLineDraft }[] = [];
      const pick = (n: number) => accounts[n % accounts.length]!;
      for (const leg of legs) {
        keyed.push({ key: leg.keys[0], line: { accountId: pick(leg.debit), direction: 'debit', amountCents: leg.amountCents, basis: leg.basis } });
        const first = (leg.amountCents * BigInt(leg.splitPerMille)) / 1000n;
        if (first > 0n) {
          keyed.push({ key: leg.keys[1], line: { accountId: pick(leg.credit), direction: 'credit', amountCents: first, basis: leg.basis } });
          keyed.push({
            key: leg.keys[2],
            line: { accountId: pick(leg.credit + 1), direction: 'credit', amountCents: leg.amountCents - first, basis: leg.basis },
          });
        } else {
          keyed.push({ key: leg.keys[1], line: { accountId: pick(leg.credit), direction: 'credit', amountCents: leg.amountCents, basis: leg.basis } });
        }
      }
      return keyed.sort((a, b) => a.key - b.key).map((k) => k.line);
    }

    it('every posted entry balances, and so do the trial balance and the accounting equation', () => {
      const own = buildBusiness(db, clock, { tenantId: business.tenantId });
      const accounts = listPostableAccounts(db, own.id).map((account) => account.id);
      let posted = 0;
      fc.assert(
        fc.property(fc.array(legArb(AMOUNT_CEILING_CENTS - 1n), { minLength: 1, maxLength: 4 }), dateArb, (legs, date) => {
          const before = rowCounts(db);
          const lines = linesOf(legs, accounts);
          const entry = postEntry(db, clock, TEST_ACTOR, { businessId: own.id, date, sourceType: 'manual', lines });
          posted += 1;
          expect(rowCounts(db)).to.deep.equal({ entries: before.entries + 1n, lines: before.lines + BigInt(lines.length) });
          expect(entry.lines.map(({ accountId, direction, amountCents, basis }) => ({ accountId, direction, amountCents, basis }))).to.deep.equal(lines);
          for (const view of ['accrual', 'cash'] as const) {
            const totals = viewTotals(getEntry(db, entry.id).lines, view);
            expect(totals.debitCents).to.equal(totals.creditCents);
          }
          assertLedgerBalances(db, own.id);
          assertAccountingEquation(db, own.id);
        }),
        { numRuns: 75 },
      );
      const count = db.prepare('SELECT count(*) AS n FROM journal_entries WHERE business_id = ?').get(own.id) as { n: bigint };
      expect(count.n).to.equal(BigInt(posted));
      // Through any date, the books still balance.
      for (const asOf of ['2026-03-31', '2026-06-30', '2026-12-31']) {
        for (const view of ['accrual', 'cash'] as const) {
          const totals = ledgerTotals(db, own.id, view, asOf);
          expect(totals.debitCents).to.equal(totals.creditCents);
        }
      }
    });

    type Perturbation =
      | { kind: 'amount'; index: number; deltaCents: bigint; up: boolean }
      | { kind: 'direction'; index: number }
      | { kind: 'basis'; index: number; shift: 1 | 2 }
      | { kind: 'drop'; index: number };

    const perturbationArb: fc.Arbitrary<Perturbation> = fc.oneof(
      fc.record({ kind: fc.constant('amount' as const), index: fc.nat(), deltaCents: fc.bigInt({ min: 1n, max: 1_000_000n }), up: fc.boolean() }),
      fc.record({ kind: fc.constant('direction' as const), index: fc.nat() }),
      fc.record({ kind: fc.constant('basis' as const), index: fc.nat(), shift: fc.constantFrom<1 | 2>(1, 2) }),
      fc.record({ kind: fc.constant('drop' as const), index: fc.nat() }),
    );

    const BASES: LineBasis[] = ['both', 'accrual', 'cash'];

    function perturb(lines: JournalLineDraft[], change: Perturbation): JournalLineDraft[] {
      const out = lines.map((line) => ({ ...line }));
      const index = change.index % out.length;
      const line = out[index]!;
      switch (change.kind) {
        case 'amount':
          // Up, or down when the line can lose the delta and stay positive.
          line.amountCents = change.up || line.amountCents <= change.deltaCents ? line.amountCents + change.deltaCents : line.amountCents - change.deltaCents;
          return out;
        case 'direction':
          line.direction = line.direction === 'debit' ? 'credit' : 'debit';
          return out;
        case 'basis':
          line.basis = BASES[(BASES.indexOf(line.basis ?? 'both') + change.shift) % 3]!;
          return out;
        case 'drop':
          out.splice(index, 1);
          return out;
      }
    }

    it('an unbalanced draft is always refused and leaves the row counts unchanged', () => {
      const own = buildBusiness(db, clock, { tenantId: business.tenantId });
      const accounts = listPostableAccounts(db, own.id).map((account) => account.id);
      fc.assert(
        fc.property(fc.array(legArb(AMOUNT_CEILING_CENTS - 1_000_001n), { minLength: 1, maxLength: 4 }), perturbationArb, dateArb, (legs, change, date) => {
          const lines = perturb(linesOf(legs, accounts), change);
          const error = refusedPosting(db, () => postEntry(db, clock, TEST_ACTOR, { businessId: own.id, date, sourceType: 'manual', lines }));
          expect(error.rule).to.be.oneOf(lines.length < 2 ? ['too_few_lines'] : ['unbalanced']);
        }),
        { numRuns: 100 },
      );
      const count = db.prepare('SELECT count(*) AS n FROM journal_lines WHERE business_id = ?').get(own.id) as { n: bigint };
      expect(count.n).to.equal(0n);
    });
  });
});
