import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateLargeBooks, type LargeBooks, type LargeBooksPlan } from '../../bench/books-generator.js';
import { systemAccountId } from '../../src/books/chart.js';
import { receivablesAging } from '../../src/books/reports/aging.js';
import { fixedClock } from '../../src/clock.js';
import { addDays } from '../../src/dates.js';
import { type Db, openDb } from '../../src/db/connection.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { all, one } from '../../src/db/statements.js';
import { ensureServerSecrets } from '../../src/store/secrets.js';
import { freshDb, migrateThrough } from '../support/db.js';

/**
 * What each invoice's payments relieved, kept on the invoice (migration 0019) so the AR aging
 * reads one index: the sums always equal the payments', for books upgraded with payments
 * already in them as for new ones, and the aging of any date, before or after payments, owes
 * what the invoices owed that day by the definition (and, on the last day, the receivable
 * account's accrual balance).
 */

const PLAN: LargeBooksPlan = { lines: 1500, openInvoices: 40, paidInvoices: 25, openBills: 5, seed: 11, endDate: '2026-03-15' };

interface InvoiceSums {
  id: string;
  stored: bigint;
  last: string | null;
  payments: bigint;
  lastPayment: string | null;
}

function invoiceSums(db: Db): InvoiceSums[] {
  return all<InvoiceSums>(
    db,
    `SELECT i.id, i.paid_receivable_usd_cents AS stored, i.last_paid_at AS last,
            coalesce((SELECT sum(p.receivable_usd_cents) FROM invoice_payments p WHERE p.invoice_id = i.id), 0) AS payments,
            (SELECT max(p.paid_at) FROM invoice_payments p WHERE p.invoice_id = i.id) AS lastPayment
     FROM invoices i ORDER BY i.id`,
  );
}

/** The receivable account's accrual balance at the end of `asOf`, from the journal lines alone. */
function receivableOn(db: Db, businessId: string, asOf: string): bigint {
  const accountId = systemAccountId(db, businessId, 'accounts_receivable');
  return (
    one<{ net: bigint | null }>(
      db,
      `SELECT sum(CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END) AS net
       FROM journal_lines WHERE ledger_account_id = ? AND basis IN ('both', 'accrual') AND entry_date <= ?`,
      accountId,
      asOf,
    )!.net ?? 0n
  );
}

/**
 * What the open invoices owed at the end of `asOf`, by the definition and without the stored
 * sums: each posted invoice issued by then and not closed before, its USD total less every
 * payment dated on or before the day.
 */
function owedOn(db: Db, businessId: string, asOf: string): bigint {
  return (
    one<{ owed: bigint | null }>(
      db,
      `SELECT sum(balance) AS owed FROM (
         SELECT coalesce(i.subtotal_usd_cents, 0) + coalesce(i.tax_usd_cents, 0)
           - coalesce((SELECT sum(p.receivable_usd_cents) FROM invoice_payments p WHERE p.invoice_id = i.id AND p.paid_at <= @asOf), 0) AS balance
         FROM invoices i
         WHERE i.business_id = @business AND i.journal_entry_id IS NOT NULL AND i.issue_date <= @asOf AND (i.closed_on IS NULL OR i.closed_on > @asOf))
       WHERE balance > 0`,
      { business: businessId, asOf },
    )!.owed ?? 0n
  );
}

/** Every 45th day of the books' three years, and the last day: most fall between an invoice's payments. */
function agingDates(books: LargeBooks): string[] {
  const dates: string[] = [];
  for (let day = books.startDate; day < books.endDate; day = addDays(day, 45)) dates.push(day);
  return [...dates, books.endDate];
}

function expectSumsAgree(db: Db): void {
  const sums = invoiceSums(db);
  expect(sums.filter((row) => row.payments > 0n).length, 'invoices with payments').to.be.above(20);
  for (const row of sums) {
    expect(row.stored, `invoice ${row.id}`).to.equal(row.payments);
    expect(row.last, `invoice ${row.id}`).to.equal(row.lastPayment);
  }
}

/** The aging of every date owes what the invoices owed that day; on the last day, that is the receivable account's balance. */
function expectAgingIsOwed(db: Db, large: LargeBooks): void {
  const totals = agingDates(large).map((asOf) => [asOf, receivablesAging(db, large.businessId, asOf).grandTotalCents] as const);
  for (const [asOf, total] of totals) expect(total, `as of ${asOf}`).to.equal(owedOn(db, large.businessId, asOf));
  expect(totals.filter(([, total]) => total > 0n).length, 'dates with something owed').to.be.above(10);
  expect(totals.at(-1)![1]).to.equal(receivableOn(db, large.businessId, large.endDate));
}

describe('Invoice paid sums (migration 0019) and the AR aging that reads them', () => {
  it('keeps each invoice\'s sums equal to its payments\' as payments are recorded, and ages every date to the receivable', async () => {
    const books = await freshDb();
    try {
      const large = generateLargeBooks(books.db, PLAN);
      expectSumsAgree(books.db);
      expectAgingIsOwed(books.db, large);
    } finally {
      books.close();
    }
  });

  it('fills the sums of books upgraded with payments in them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'daybook-migration-'));
    const path = join(dir, 'books.sqlite');
    try {
      await migrateThrough(path, '20261127_0018_access_version');
      const older = openDb(path, { synchronous: 'normal' });
      ensureServerSecrets(older, fixedClock(`${PLAN.endDate}T12:00:00.000Z`));
      const large = generateLargeBooks(older, PLAN);
      older.close();
      await migrateLatest(path);
      const upgraded = openDb(path, { synchronous: 'normal' });
      try {
        expectSumsAgree(upgraded);
        expectAgingIsOwed(upgraded, large);
      } finally {
        upgraded.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses sums that are not the payments\'', async () => {
    const books = await freshDb();
    try {
      generateLargeBooks(books.db, PLAN);
      const paid = invoiceSums(books.db).find((row) => row.payments > 0n)!;
      expect(() => books.db.prepare('UPDATE invoices SET paid_receivable_usd_cents = paid_receivable_usd_cents + 1 WHERE id = ?').run(paid.id)).to.throw(
        "an invoice's paid sums are those of its recorded payments",
      );
      expect(() => books.db.prepare("UPDATE invoices SET last_paid_at = '2020-01-01' WHERE id = ?").run(paid.id)).to.throw(
        "an invoice's paid sums are those of its recorded payments",
      );
    } finally {
      books.close();
    }
  });
});
