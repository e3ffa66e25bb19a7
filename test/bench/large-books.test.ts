import { expect } from 'chai';
import { generateLargeBooks, type LargeBooks, type LargeBooksPlan } from '../../bench/books-generator.js';
import { getBusiness } from '../../src/books/businesses.js';
import { systemAccountId } from '../../src/books/chart.js';
import { payablesAging, receivablesAging } from '../../src/books/reports/aging.js';
import { trialBalance } from '../../src/books/reports/statements.js';
import { verifyBalances } from '../../src/books/reports/verify.js';
import { addDays } from '../../src/dates.js';
import { all, one } from '../../src/db/statements.js';
import { freshDb, type TempDb } from '../support/db.js';

/**
 * The books the benchmarks measure (bench/large-books.ts writes them through
 * bench/books-generator.ts), made small, and held to Daybook's own checks: what `daybook verify`
 * and `daybook backup` check, and the reports bench/reports.ts checks on the large ones. A
 * schema change that the generator no longer fits fails here, not in the middle of a benchmark.
 */

const PLAN: LargeBooksPlan = { lines: 1000, openInvoices: 20, paidInvoices: 10, openBills: 12, seed: 7, endDate: '2026-03-15' };

describe('large books for the benchmarks (bench/books-generator.ts)', () => {
  let temp: TempDb;
  let books: LargeBooks;
  before(async () => {
    temp = await freshDb();
    books = generateLargeBooks(temp.db, PLAN);
  });
  after(() => temp?.close());

  const businessIds = () => all<{ id: string }>(temp.db, 'SELECT id FROM businesses ORDER BY id').map((row) => row.id);

  it('writes one business with exactly the journal lines asked for, dated over the three years to the end date', () => {
    expect(businessIds()).to.deep.equal([books.businessId]);
    const shape = one<{ lines: bigint; first: string; last: string }>(temp.db, 'SELECT count(*) AS lines, min(entry_date) AS first, max(entry_date) AS last FROM journal_lines')!;
    expect(shape).to.deep.equal({ lines: BigInt(PLAN.lines), first: addDays(PLAN.endDate, -3 * 365), last: PLAN.endDate });
    expect(books).to.deep.include({ lines: PLAN.lines, startDate: '2023-03-16', endDate: '2026-03-15', chartAccounts: 200 });
    const invoices = all<{ status: string; n: bigint }>(temp.db, 'SELECT status, count(*) AS n FROM invoices GROUP BY status ORDER BY status');
    expect(invoices.reduce((n, row) => n + Number(row.n), 0)).to.equal(PLAN.openInvoices + PLAN.paidInvoices);
    expect(invoices.find((row) => row.status === 'paid')?.n).to.equal(BigInt(PLAN.paidInvoices));
  });

  it("passes SQLite's integrity_check and foreign_key_check", () => {
    expect(temp.db.pragma('integrity_check')).to.deep.equal([{ integrity_check: 'ok' }]);
    expect(temp.db.pragma('foreign_key_check')).to.deep.equal([]);
  });

  it('keeps stored balances that agree with the journal lines in every business (daybook verify)', () => {
    for (const businessId of businessIds()) {
      const check = verifyBalances(temp.db, businessId);
      expect(check.mismatches, businessId).to.deep.equal([]);
      expect(check.mismatchCount).to.equal(0);
      expect(check.lines).to.equal(PLAN.lines);
      expect(check.storedRows).to.be.greaterThan(0);
    }
  });

  for (const view of ['accrual', 'cash'] as const) {
    it(`has a trial balance in the ${view} view whose debits equal its credits and the journal lines' own sums, in every business`, () => {
      for (const businessId of businessIds()) {
        const business = { ...getBusiness(temp.db, businessId), basis: view };
        const report = trialBalance(temp.db, business, PLAN.endDate);
        // Each account's balance worked out from the lines alone, not from the stored sums the report reads.
        const fromLines = all<{ account: string; net: bigint }>(
          temp.db,
          `SELECT ledger_account_id AS account, sum(CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END) AS net
           FROM journal_lines WHERE business_id = ? AND basis IN ('both', ?) AND entry_date <= ?
           GROUP BY ledger_account_id HAVING net != 0 ORDER BY ledger_account_id`,
          businessId,
          view,
          PLAN.endDate,
        );
        const debitCents = fromLines.reduce((sum, row) => sum + (row.net > 0n ? row.net : 0n), 0n);
        const creditCents = fromLines.reduce((sum, row) => sum + (row.net < 0n ? -row.net : 0n), 0n);
        expect(debitCents).to.equal(creditCents);
        expect(debitCents > 0n).to.equal(true);
        expect(report.totals).to.deep.equal({ debitCents, creditCents });
        const rows = report.rows.map((row) => ({ account: row.accountId, net: row.debitCents - row.creditCents }));
        expect(rows.sort((a, b) => (a.account < b.account ? -1 : 1))).to.deep.equal(fromLines);
      }
    });
  }

  it('ages exactly the receivable and payable balances: the history leaves nothing owed', () => {
    const balance = (accountId: string) =>
      one<{ net: bigint }>(
        temp.db,
        `SELECT sum(CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END) AS net
         FROM journal_lines WHERE ledger_account_id = ? AND basis IN ('both', 'accrual')`,
        accountId,
      )!.net;
    const receivable = receivablesAging(temp.db, books.businessId, PLAN.endDate);
    const payable = payablesAging(temp.db, books.businessId, PLAN.endDate);
    expect(receivable.grandTotalCents > 0n && payable.grandTotalCents > 0n).to.equal(true);
    expect(receivable.grandTotalCents).to.equal(balance(systemAccountId(temp.db, books.businessId, 'accounts_receivable')));
    expect(-payable.grandTotalCents).to.equal(balance(systemAccountId(temp.db, books.businessId, 'accounts_payable')));
  });
});
