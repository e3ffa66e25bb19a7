import { expect } from 'chai';
import fc from 'fast-check';
import { join } from 'node:path';
import type { Business } from '../../src/books/businesses.js';
import { listPostableAccounts } from '../../src/books/chart.js';
import { type JournalLineDraft, type LineBasis, postEntry } from '../../src/books/ledger.js';
import { accountActivity, type Activity, planCost, readPlan, spanRuns } from '../../src/books/reports/balances.js';
import { verifyBalances } from '../../src/books/reports/verify.js';
import { addDays, monthEnd, yearEnd } from '../../src/dates.js';
import { type Db, inTransaction, openDb } from '../../src/db/connection.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { freshDb, migrateThrough, type TempDb, letOlderBooksTakeTodaysAuditRows, letOlderBooksTakeTodaysChart } from '../support/db.js';
import { buildBusiness, TEST_ACTOR, testClock } from '../support/factories.js';

/**
 * The stored balances behind the reports (ledger_balances, migration 0007): how a date range is
 * cut into runs of years, months and days, that the trigger keeps the sums equal to the lines
 * whatever is posted, and that `verifyBalances` notices when they are not.
 */

/** Every day from `from` to `to`, inclusive. */
function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) days.push(day);
  return days;
}

/** The days a run covers: each day, or each whole month or year starting within it. */
function daysOfRun(run: { span: string; from: string; to: string }): string[] {
  if (run.span === 'day') return daysOf(run.from, run.to);
  if (run.span === 'month') return daysOf(run.from, monthEnd(run.to));
  return daysOf(run.from, yearEnd(run.to));
}

const dateIn = (first: string, days: number) => fc.integer({ min: 0, max: days }).map((offset) => addDays(first, offset));

describe('stored balances (src/books/reports/balances.ts, verify.ts)', () => {
  describe('spanRuns', () => {
    it('covers every day of a range exactly once, in at most five aligned runs', () => {
      const range = fc.tuple(dateIn('1999-06-01', 3000), fc.integer({ min: 0, max: 1500 })).map(([from, length]) => [from, addDays(from, length)] as const);
      fc.assert(
        fc.property(range, ([from, to]) => {
          const runs = spanRuns(from, to);
          expect(runs.length).to.be.at.most(5);
          for (const run of runs) {
            if (run.span === 'year') expect([run.from.slice(5), run.to.slice(5)]).to.deep.equal(['01-01', '01-01']);
            if (run.span === 'month') expect([run.from.slice(8), run.to.slice(8)]).to.deep.equal(['01', '01']);
          }
          expect(runs.flatMap(daysOfRun)).to.deep.equal(daysOf(from, to));
        }),
        { numRuns: 300 },
      );
    });

    it('cuts 2024-02-15 .. 2026-03-03 into days, months, a year, months, days', () => {
      expect(spanRuns('2024-02-15', '2026-03-03')).to.deep.equal([
        { span: 'day', from: '2024-02-15', to: '2024-02-29' },
        { span: 'month', from: '2024-03-01', to: '2024-12-01' },
        { span: 'year', from: '2025-01-01', to: '2025-01-01' },
        { span: 'month', from: '2026-01-01', to: '2026-02-01' },
        { span: 'day', from: '2026-03-01', to: '2026-03-03' },
      ]);
    });

    it('reads everything up to a date from the first day the books can hold, and reaches the last one', () => {
      expect(spanRuns('0000-01-01', '2026-11-23')).to.deep.equal([
        { span: 'year', from: '0000-01-01', to: '2025-01-01' },
        { span: 'month', from: '2026-01-01', to: '2026-10-01' },
        { span: 'day', from: '2026-11-01', to: '2026-11-23' },
      ]);
      expect(spanRuns('9999-12-30', '9999-12-31')).to.deep.equal([{ span: 'day', from: '9999-12-30', to: '9999-12-31' }]);
      expect(spanRuns('0000-01-01', '9999-12-31')).to.deep.equal([{ span: 'year', from: '0000-01-01', to: '9999-01-01' }]);
      expect(spanRuns('2026-05-07', '2026-05-07')).to.deep.equal([{ span: 'day', from: '2026-05-07', to: '2026-05-07' }]);
    });

    it('refuses a range that ends before it starts, or is not made of dates', () => {
      expect(() => spanRuns('2026-05-08', '2026-05-07')).to.throw(/after/);
      expect(() => spanRuns('2026-02-30', '2026-03-07')).to.throw(/not dates/);
    });
  });

  describe('readPlan', () => {
    /** How many times each day is counted: +1 for each run that adds it, -1 for each that takes it away. */
    function netDays(plan: ReturnType<typeof readPlan>): Map<string, number> {
      const net = new Map<string, number>();
      for (const day of plan.add.flatMap(daysOfRun)) net.set(day, (net.get(day) ?? 0) + 1);
      for (const day of plan.subtract.flatMap(daysOfRun)) net.set(day, (net.get(day) ?? 0) - 1);
      return net;
    }

    it('counts every day of the range once and every day outside it not at all, at no more cost than the plain runs', () => {
      const range = fc.tuple(dateIn('1999-06-01', 3000), fc.integer({ min: 0, max: 1500 })).map(([from, length]) => [from, addDays(from, length)] as const);
      fc.assert(
        fc.property(range, ([from, to]) => {
          const plan = readPlan(from, to);
          const counted = [...netDays(plan)].filter(([, times]) => times !== 0);
          expect(counted.every(([, times]) => times === 1)).to.equal(true);
          expect(counted.map(([day]) => day).sort()).to.deep.equal(daysOf(from, to));
          for (const run of plan.subtract) expect(daysOfRun(run).every((day) => day < from || day > to)).to.equal(true);
          expect(planCost(plan)).to.be.at.most(planCost({ add: spanRuns(from, to), subtract: [] }));
        }),
        { numRuns: 300 },
      );
    });

    it('reads the whole month less its first days when a range starts late in a month, and the whole year less a few days and a month up to late November', () => {
      expect(readPlan('2026-03-28', '2026-03-31')).to.deep.equal({ add: [{ span: 'day', from: '2026-03-28', to: '2026-03-31' }], subtract: [] });
      expect(readPlan('2026-03-04', '2026-03-31')).to.deep.equal({
        add: [{ span: 'month', from: '2026-03-01', to: '2026-03-01' }],
        subtract: [{ span: 'day', from: '2026-03-01', to: '2026-03-03' }],
      });
      expect(readPlan('0000-01-01', '2026-11-23')).to.deep.equal({
        add: [{ span: 'year', from: '0000-01-01', to: '2026-01-01' }],
        subtract: [
          { span: 'day', from: '2026-11-24', to: '2026-11-30' },
          { span: 'month', from: '2026-12-01', to: '2026-12-01' },
        ],
      });
    });
  });

  describe('kept by the journal', () => {
    const clock = testClock();
    let temp: TempDb;
    before(async () => {
      temp = await freshDb();
    });
    after(() => temp.close());

    /** One generated entry: two or three accounts (by index into the postable list), an amount, a date, a basis shape. */
    const entryArb = fc.record({
      day: fc.integer({ min: 0, max: 1200 }),
      accounts: fc.uniqueArray(fc.nat({ max: 40 }), { minLength: 3, maxLength: 3 }),
      amountCents: fc.bigInt({ min: 1n, max: 10_000_000n }),
      shape: fc.constantFrom<LineBasis | 'split'>('both', 'accrual', 'cash', 'split'),
    });

    function post(db: Db, business: Business, entries: Array<{ day: number; accounts: number[]; amountCents: bigint; shape: LineBasis | 'split' }>): void {
      const postable = listPostableAccounts(db, business.id);
      inTransaction(db, () => {
        for (const entry of entries) {
          const [a, b, c] = entry.accounts.map((index) => postable[index % postable.length]!.id);
          const lines: JournalLineDraft[] =
            entry.shape === 'split'
              ? [
                  // Debit in both views, credited to one account in each view: balanced in both.
                  { accountId: a!, direction: 'debit', amountCents: entry.amountCents, basis: 'both' },
                  { accountId: b!, direction: 'credit', amountCents: entry.amountCents, basis: 'accrual' },
                  { accountId: c!, direction: 'credit', amountCents: entry.amountCents, basis: 'cash' },
                ]
              : [
                  { accountId: a!, direction: 'debit', amountCents: entry.amountCents, basis: entry.shape },
                  { accountId: b!, direction: 'credit', amountCents: entry.amountCents, basis: entry.shape },
                ];
          postEntry(db, clock, TEST_ACTOR, { businessId: business.id, date: addDays('2024-01-01', entry.day), sourceType: 'manual', lines });
        }
      });
    }

    /** Debits and credits by account straight from the lines: the figures the stored sums must give. */
    function fromLines(db: Db, businessId: string, view: 'accrual' | 'cash', from: string, to: string): Map<string, Activity> {
      const rows = db
        .prepare(
          `SELECT ledger_account_id AS id, sum(CASE direction WHEN 'debit' THEN amount_cents ELSE 0 END) AS debit,
             sum(CASE direction WHEN 'credit' THEN amount_cents ELSE 0 END) AS credit
           FROM journal_lines WHERE business_id = ? AND basis IN ('both', ?) AND entry_date BETWEEN ? AND ? GROUP BY ledger_account_id`,
        )
        .all(businessId, view, from, to) as Array<{ id: string; debit: bigint; credit: bigint }>;
      return new Map(rows.map((row) => [row.id, { debitCents: BigInt(row.debit), creditCents: BigInt(row.credit) }]));
    }

    it('gives, for any postings and any range, the same debits and credits per account as the lines in both views, and verify finds nothing', () => {
      fc.assert(
        fc.property(
          fc.array(entryArb, { minLength: 1, maxLength: 40 }),
          fc.array(fc.tuple(fc.integer({ min: -30, max: 1250 }), fc.integer({ min: 0, max: 800 })), { minLength: 3, maxLength: 3 }),
          (entries, ranges) => {
            const business = buildBusiness(temp.db, clock);
            post(temp.db, business, entries);
            for (const [start, length] of ranges) {
              const from = addDays('2024-01-01', start);
              const to = addDays(from, length);
              for (const view of ['accrual', 'cash'] as const) {
                expect(accountActivity(temp.db, business.id, view, from, to), `${view} ${from}..${to}`).to.deep.equal(fromLines(temp.db, business.id, view, from, to));
              }
            }
            const check = verifyBalances(temp.db, business.id);
            expect(check.mismatchCount).to.equal(0);
            expect(check.lines).to.equal(entries.reduce((n, entry) => n + (entry.shape === 'split' ? 3 : 2), 0));
          },
        ),
        { numRuns: 40 },
      );
    });

    it('verify names a stored sum that is wrong, and one with no lines behind it', () => {
      const business = buildBusiness(temp.db, clock);
      post(temp.db, business, [{ day: 10, accounts: [1, 2, 3], amountCents: 500n, shape: 'both' }]);
      const [debited, credited] = listPostableAccounts(temp.db, business.id).slice(1, 3).map((account) => account.id);
      temp.db.prepare("UPDATE ledger_balances SET debit_cents = 499 WHERE business_id = ? AND span = 'month' AND ledger_account_id = ?").run(business.id, debited);
      temp.db
        .prepare("INSERT INTO ledger_balances (business_id, span, period_start, ledger_account_id, basis, debit_cents, credit_cents) VALUES (?, 'day', '2024-02-02', ?, 'cash', 7, 0)")
        .run(business.id, credited);
      const check = verifyBalances(temp.db, business.id);
      expect(check.mismatchCount).to.equal(2);
      expect(check.mismatches).to.deep.equal([
        { span: 'month', periodStart: '2024-01-01', accountId: debited, basis: 'both', stored: { debitCents: 499n, creditCents: 0n }, fromLines: { debitCents: 500n, creditCents: 0n } },
        { span: 'day', periodStart: '2024-02-02', accountId: credited, basis: 'cash', stored: { debitCents: 7n, creditCents: 0n }, fromLines: null },
      ]);
    });

    it('refuses to delete a stored sum', () => {
      const business = buildBusiness(temp.db, clock);
      post(temp.db, business, [{ day: 3, accounts: [4, 5, 6], amountCents: 100n, shape: 'cash' }]);
      expect(() => temp.db.prepare('DELETE FROM ledger_balances WHERE business_id = ?').run(business.id)).to.throw(/never deleted/);
    });
  });

  it('migration 0007 sums the lines books already hold', async () => {
    const temp = await freshDb();
    const path = join(temp.dir, 'older.sqlite');
    try {
      await migrateThrough(path, '20261123_0006_review_queue');
      const older = openDb(path);
      letOlderBooksTakeTodaysAuditRows(older);
      letOlderBooksTakeTodaysChart(older);
      const clock = testClock();
      const business = buildBusiness(older, clock);
      const postable = listPostableAccounts(older, business.id);
      inTransaction(older, () => {
        for (let day = 0; day < 70; day += 1) {
          postEntry(older, clock, TEST_ACTOR, {
            businessId: business.id,
            date: addDays('2025-12-01', day * 3),
            sourceType: 'manual',
            lines: [
              { accountId: postable[day % 7]!.id, direction: 'debit', amountCents: BigInt(100 + day), basis: day % 3 === 0 ? 'cash' : 'both' },
              { accountId: postable[7 + (day % 5)]!.id, direction: 'credit', amountCents: BigInt(100 + day), basis: day % 3 === 0 ? 'cash' : 'both' },
            ],
          });
        }
      });
      older.close();
      expect((await migrateLatest(path)).applied).to.include('20261123_0007_reports');
      const migrated = openDb(path);
      try {
        const check = verifyBalances(migrated, business.id);
        expect([check.lines, check.mismatchCount]).to.deep.equal([140, 0]);
        expect(check.storedRows).to.be.above(140);
      } finally {
        migrated.close();
      }
    } finally {
      temp.close();
    }
  });
});
