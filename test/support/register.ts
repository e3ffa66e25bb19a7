import { expect } from 'chai';
import type { Business } from '../../src/books/businesses.js';
import { findOrCreateCustomer, type NewCustomer } from '../../src/books/customers.js';
import { recordExpense } from '../../src/books/expenses.js';
import { newId } from '../../src/ids.js';
import type { TransactionSource, TransactionStatus } from '../../src/books/transactions.js';
import { findOrCreateVendor } from '../../src/books/vendors.js';
import { nowIso } from '../../src/clock.js';
import { inTransaction } from '../../src/db/connection.js';
import type { TestApp, TestResponse } from './app.js';
import { accountIdByName, TEST_ACTOR } from './factories.js';

/** Small builders shared by the list tests (customers, vendors) and the register tests (transactions). */

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A path with its query string, every value percent-encoded (`%` and `_` reach the server as sent). */
export function withQuery(path: string, query: Record<string, string | number | boolean | undefined> = {}): string {
  const pairs = Object.entries(query)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`);
  return pairs.length === 0 ? path : `${path}?${pairs.join('&')}`;
}

/** Creates a customer of the tenant through the books (the same function POST /customers runs); returns its id. */
export function addCustomer(app: TestApp, tenantId: string, input: NewCustomer): string {
  const result = inTransaction(app.db, () => findOrCreateCustomer(app.db, app.clock, TEST_ACTOR, tenantId, input));
  expect(result.created, `customer ${input.name} is new`).to.equal(true);
  return result.id;
}

/** Creates a vendor of the tenant by exact canonical name; returns its id. */
export function addVendor(app: TestApp, tenantId: string, name: string, options: { is1099Eligible?: boolean } = {}): string {
  const { vendor, created } = inTransaction(app.db, () => findOrCreateVendor(app.db, app.clock, TEST_ACTOR, tenantId, name));
  expect(created, `vendor ${name} is new`).to.equal(true);
  if (options.is1099Eligible) app.db.prepare('UPDATE vendors SET is_1099_eligible = 1 WHERE id = ?').run(vendor.id);
  return vendor.id;
}

/** Archives a customer or vendor directly in the books (no endpoint archives anything). */
export function archive(app: TestApp, table: 'customers' | 'vendors', id: string): void {
  const changed = app.db.prepare(`UPDATE ${table} SET archived = 1 WHERE id = ?`).run(id).changes;
  expect(changed).to.equal(1);
}

export interface TestExpense {
  date: string;
  amountCents: bigint;
  /** A vendor by canonical name (created when new) or by id. */
  vendor: { name: string } | { id: string };
  /** An account of the business by name; default Office Supplies. */
  account?: string;
  memo?: string;
}

/** Records and posts an expense as POST /expenses does (status accepted, source manual); returns the transaction id. */
export function addExpense(app: TestApp, business: Business, expense: TestExpense): string {
  const accountId = accountIdByName(app.db, business.id, expense.account ?? 'Office Supplies');
  const recorded = inTransaction(app.db, () =>
    recordExpense(app.db, app.clock, TEST_ACTOR, {
      business,
      date: expense.date,
      amountCents: expense.amountCents,
      vendor: expense.vendor,
      accountId,
      ...(expense.memo !== undefined ? { memo: expense.memo } : {}),
    }),
  );
  return recorded.transactionId;
}

export interface TestTransactionRow {
  date: string;
  amountCents: bigint;
  status?: TransactionStatus;
  source?: TransactionSource;
  vendorId?: string | null;
  accountId?: string | null;
  description?: string | null;
  rationale?: string | null;
  journalEntryId?: string | null;
}

/**
 * Writes a transactions row directly, as an import would (default: source csv, status pending,
 * no vendor, account or journal entry), recorded at the app clock's now; returns its id.
 */
export function addTransactionRow(app: TestApp, business: Business, row: TestTransactionRow): string {
  const id = newId();
  app.db
    .prepare(
      `INSERT INTO transactions (id, business_id, txn_date, amount_cents, direction, vendor_id, ledger_account_id, status, source,
         description, rationale, journal_entry_id, created_at)
       VALUES (?, ?, ?, ?, 'out', ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      id,
      business.id,
      row.date,
      row.amountCents,
      row.vendorId ?? null,
      row.accountId ?? null,
      row.status ?? 'pending',
      row.source ?? 'csv',
      row.description ?? null,
      row.rationale ?? null,
      row.journalEntryId ?? null,
      nowIso(app.clock),
    );
  return id;
}

/** The money object the API writes for `cents` US dollars. */
export function usdMoney(cents: string, formatted: string): { cents: string; formatted: string; currency: 'USD' } {
  return { cents, formatted, currency: 'USD' };
}

export interface Walk<T> {
  pages: T[][];
  rows: T[];
  responses: TestResponse[];
}

/**
 * Follows nextCursor from the first page to the last, each page with `query` (the same
 * filters every time), and returns every page served. `between` runs after each page but
 * the last one (to change the books between requests). Stops with a failure after 100 pages.
 */
export async function walkPages<T = any>(
  app: TestApp,
  key: string,
  path: string,
  listField: string,
  query: Record<string, string | number | boolean | undefined> = {},
  between?: (pageIndex: number) => void,
): Promise<Walk<T>> {
  const walk: Walk<T> = { pages: [], rows: [], responses: [] };
  let cursor: string | undefined;
  for (let pageIndex = 0; pageIndex < 100; pageIndex++) {
    const res = await app.get(withQuery(path, { ...query, cursor }), key);
    expect(res.status, `page ${pageIndex + 1}: ${res.text.slice(0, 300)}`).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal([listField, 'nextCursor'].sort());
    const rows = res.body[listField] as T[];
    walk.pages.push(rows);
    walk.rows.push(...rows);
    walk.responses.push(res);
    if (res.body.nextCursor === null) return walk;
    expect(res.body.nextCursor, 'nextCursor').to.be.a('string').and.not.equal('');
    expect(rows.length, 'a page with a nextCursor is never empty').to.be.greaterThan(0);
    between?.(pageIndex);
    cursor = res.body.nextCursor as string;
  }
  throw new Error(`walkPages: ${path} did not end within 100 pages`);
}
