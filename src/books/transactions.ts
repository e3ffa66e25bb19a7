import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { all, one, run } from '../db/statements.js';
import { AMOUNT_CEILING_CENTS } from '../money.js';
import type { Basis } from './businesses.js';
import type { Direction } from './ledger.js';
import { containsPattern, type ListScope, type Page, type PageRequest, pageOf, pageStart, searchKey } from '../store/paging.js';

/**
 * Bank and card transactions: what comes in to be categorised. The lists below are the
 * transactions table's CHECK lists; test/db/closed-lists.test.ts keeps the two in step.
 */

/** Where a transaction stands in review (the spec's closed list). */
export const TRANSACTION_STATUSES = ['pending', 'accepted', 'edited', 'uncategorized'] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

/** How a transaction reached the books. */
export const TRANSACTION_SOURCES = ['manual', 'csv', 'email', 'ios', 'reconciliation', 'financial_connections'] as const;
export type TransactionSource = (typeof TRANSACTION_SOURCES)[number];

/** Money out of the business (an expense) or into it; the summary's amount carries no sign. */
export const TRANSACTION_DIRECTIONS = ['out', 'in'] as const;
export type TransactionDirection = (typeof TRANSACTION_DIRECTIONS)[number];

/** A transaction as the register lists it; amounts are USD cents. */
export interface TransactionSummary {
  id: string;
  date: string;
  amountCents: bigint;
  vendor: string | null;
  account: string | null;
  status: TransactionStatus;
  source: TransactionSource;
}

/** One journal line of how a transaction was recorded, in the business's own basis. */
export interface RecordedLine {
  account: string;
  direction: Direction;
  amountCents: bigint;
}

export interface TransactionDetail extends TransactionSummary {
  businessId: string;
  description: string | null;
  rationale: string | null;
  lines: RecordedLine[];
}

/** The register's filters; every range is inclusive at both ends. */
export interface TransactionFilters {
  dateFrom?: string;
  dateTo?: string;
  vendorId?: string;
  accountId?: string;
  /** Matched anywhere in the vendor's canonical name, case-insensitively; `%` and `_` are wildcards. */
  text?: string;
  status?: TransactionStatus;
  minCents?: bigint;
  maxCents?: bigint;
}

interface SummaryRow {
  id: string;
  txn_date: string;
  created_at: string;
  amount_cents: bigint;
  vendor: string | null;
  account: string | null;
  status: TransactionStatus;
  source: TransactionSource;
}

const SUMMARY_COLUMNS = `t.id, t.txn_date, t.created_at, t.amount_cents, v.name AS vendor, a.name AS account, t.status, t.source`;
const SUMMARY_FROM = `transactions t
  LEFT JOIN vendors v ON v.id = t.vendor_id
  LEFT JOIN ledger_accounts a ON a.id = t.ledger_account_id`;

/** A query and its parameters, built from the filters actually given. */
export interface BuiltQuery {
  sql: string;
  params: unknown[];
}

/**
 * The register's query: newest first, by date, then creation, then id. Each filter adds its
 * own condition (so the planner picks the index that fits: by vendor, account or status, each
 * in register order), and a page starts strictly after the cursor's position. Fetches one row
 * more than the page, to tell whether another page follows.
 */
export function registerQuery(businessId: string, filters: TransactionFilters, after: readonly string[] | null, limit: number): BuiltQuery {
  const where = ['t.business_id = ?'];
  const params: unknown[] = [businessId];
  const add = (condition: string, ...values: unknown[]) => {
    where.push(condition);
    params.push(...values);
  };
  if (filters.dateFrom !== undefined) add('t.txn_date >= ?', filters.dateFrom);
  if (filters.dateTo !== undefined) add('t.txn_date <= ?', filters.dateTo);
  if (filters.vendorId !== undefined) add('t.vendor_id = ?', filters.vendorId);
  if (filters.accountId !== undefined) add('t.ledger_account_id = ?', filters.accountId);
  if (filters.status !== undefined) add('t.status = ?', filters.status);
  if (filters.minCents !== undefined) add('t.amount_cents >= ?', withinCeiling(filters.minCents));
  if (filters.maxCents !== undefined) add('t.amount_cents <= ?', withinCeiling(filters.maxCents));
  if (filters.text !== undefined) add('v.name_key LIKE ?', containsPattern(filters.text));
  if (after) add('(t.txn_date, t.created_at, t.id) < (?, ?, ?)', ...after);
  return {
    sql: `SELECT ${SUMMARY_COLUMNS} FROM ${SUMMARY_FROM}
     WHERE ${where.join(' AND ')}
     ORDER BY t.txn_date DESC, t.created_at DESC, t.id DESC LIMIT ?`,
    params: [...params, limit + 1],
  };
}

/** A page of a business's register (registerQuery), bound to its filters by the cursor. */
export function listTransactions(db: Db, businessId: string, filters: TransactionFilters, request: PageRequest): Page<TransactionSummary> {
  const scope: ListScope = {
    list: 'transactions',
    filters: { businessId, ...filters, text: searchKey(filters.text), minCents: filters.minCents?.toString(), maxCents: filters.maxCents?.toString() },
  };
  const query = registerQuery(businessId, filters, pageStart(db, scope, request), request.limit);
  const rows = all<SummaryRow>(db, query.sql, ...query.params);
  const page = pageOf(db, scope, request, rows, (row) => [row.txn_date, row.created_at, row.id]);
  return { rows: page.rows.map(toSummary), nextCursor: page.nextCursor };
}

/**
 * Every amount is under the ceiling, so a bound past it selects the same rows as the ceiling
 * itself; and SQLite could not even hold a bound past 64 bits.
 */
function withinCeiling(cents: bigint): bigint {
  return cents > AMOUNT_CEILING_CENTS ? AMOUNT_CEILING_CENTS : cents;
}

function toSummary(row: SummaryRow): TransactionSummary {
  return {
    id: row.id,
    date: row.txn_date,
    amountCents: row.amount_cents,
    vendor: row.vendor,
    account: row.account,
    status: row.status,
    source: row.source,
  };
}

/**
 * One transaction with how it was recorded: the journal lines of its entry that the
 * business's own basis reads (none while it waits in review), or undefined when there is no
 * such transaction.
 */
export function findTransaction(db: Db, id: string): TransactionDetail | undefined {
  const row = one<SummaryRow & { business_id: string; description: string | null; rationale: string | null; journal_entry_id: string | null; basis: Basis }>(
    db,
    `SELECT ${SUMMARY_COLUMNS}, t.business_id, t.description, t.rationale, t.journal_entry_id, b.basis
     FROM ${SUMMARY_FROM} JOIN businesses b ON b.id = t.business_id
     WHERE t.id = ?`,
    id,
  );
  if (!row) return undefined;
  const lines =
    row.journal_entry_id === null
      ? []
      : all<{ account: string; direction: Direction; amount_cents: bigint }>(
          db,
          `SELECT a.name AS account, l.direction, l.amount_cents FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
           WHERE l.entry_id = ? AND l.basis IN ('both', ?) ORDER BY l.line_no`,
          row.journal_entry_id,
          row.basis,
        ).map((line) => ({ account: line.account, direction: line.direction, amountCents: line.amount_cents }));
  return { ...toSummary(row), businessId: row.business_id, description: row.description, rationale: row.rationale, lines };
}

export interface NewTransaction {
  id: string;
  businessId: string;
  date: string;
  amountCents: bigint;
  direction: TransactionDirection;
  vendorId: string | null;
  accountId: string | null;
  status: TransactionStatus;
  source: TransactionSource;
  description: string | null;
  journalEntryId: string | null;
}

/** Writes a transaction row; the caller holds the transaction and has posted its entry, if any. */
export function insertTransaction(db: Db, clock: Clock, input: NewTransaction): void {
  assertInTransaction(db, 'insertTransaction');
  run(
    db,
    `INSERT INTO transactions (id, business_id, txn_date, amount_cents, direction, vendor_id, ledger_account_id, status, source, description, journal_entry_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    input.id,
    input.businessId,
    input.date,
    input.amountCents,
    input.direction,
    input.vendorId,
    input.accountId,
    input.status,
    input.source,
    input.description,
    input.journalEntryId,
    nowIso(clock),
  );
}
