import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { one, run } from '../db/statements.js';
import { ApiError, validationFailed } from '../errors.js';
import { AMOUNT_CEILING_CENTS } from '../money.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { dayWithinYears, RECORDED_MATCH_DAYS } from './import/bank-import.js';
import type { Business } from './businesses.js';
import { findLedgerAccount, systemAccountId, takesExpenses } from './chart.js';
import { newId } from '../ids.js';
import { assertPostingAllowed, postEntry, withPostingFields, type PostingFields } from './ledger.js';
import { recordedMatchConfidence } from './recorded-match.js';
import { insertTransaction } from './transactions.js';
import { findOrCreateVendor, findVendor, type Vendor } from './vendors.js';

/**
 * An expense the client already knows how to record: paid from the business's bank account
 * and posted at once to the account it names, with no categorising and no review queue.
 */

export interface NewExpense {
  business: Business;
  date: string;
  amountCents: bigint;
  /** The vendor by exact (case-sensitive) canonical name, created when new; or by id. */
  vendor: { name: string } | { id: string };
  accountId: string;
  memo?: string;
}

export interface RecordedExpense {
  expenseId: string;
  transactionId: string;
}

/** How this command reports the posting rules its caller can break. */
const EXPENSE_FIELDS: PostingFields = {
  period_locked: 'date',
  account_is_heading: 'accountId',
  account_archived: 'accountId',
  amount_over_ceiling: 'amountCents',
};

/**
 * Records and posts an expense: the account debited, the bank credited, on the expense's
 * date; a transaction (source manual, status accepted) holds the memo as its description.
 * Billing and period locks are checked before anything else, and a refusal leaves nothing
 * behind (no vendor, no entry, no audit row): the caller holds the transaction.
 */
export function recordExpense(db: Db, clock: Clock, actor: Actor, input: NewExpense): RecordedExpense {
  assertInTransaction(db, 'recordExpense');
  const { business } = input;
  withPostingFields(EXPENSE_FIELDS, () => assertPostingAllowed(db, business.id, input.date));
  assertExpenseAmount(input.amountCents);
  assertExpenseAccount(db, business, input.accountId);
  const bankId = systemAccountId(db, business.id, 'bank');
  const vendor = expenseVendor(db, clock, actor, business.tenantId, input.vendor);
  const expenseId = newId();
  const transactionId = newId();
  const entry = withPostingFields(EXPENSE_FIELDS, () =>
    postEntry(db, clock, actor, {
      businessId: business.id,
      date: input.date,
      memo: input.memo ?? vendor.name,
      sourceType: 'expense',
      sourceId: expenseId,
      lines: [
        { accountId: input.accountId, direction: 'debit', amountCents: input.amountCents },
        { accountId: bankId, direction: 'credit', amountCents: input.amountCents },
      ],
    }),
  );
  insertTransaction(db, clock, {
    id: transactionId,
    businessId: business.id,
    date: input.date,
    amountCents: input.amountCents,
    direction: 'out',
    vendorId: vendor.id,
    accountId: input.accountId,
    status: 'accepted',
    source: 'manual',
    description: input.memo ?? null,
    journalEntryId: entry.id,
  });
  run(
    db,
    `INSERT INTO expenses (id, business_id, vendor_id, ledger_account_id, expense_date, amount_cents, memo, transaction_id, journal_entry_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    expenseId,
    business.id,
    vendor.id,
    input.accountId,
    input.date,
    input.amountCents,
    input.memo ?? null,
    transactionId,
    entry.id,
    nowIso(clock),
  );
  const reviewItemId = matchWaitingBankLine(db, { expenseId, businessId: business.id, date: input.date, amountCents: input.amountCents, vendor, accountId: input.accountId });
  recordAudit(db, clock, actor, {
    tenantId: business.tenantId,
    businessId: business.id,
    action: 'expense.create',
    subjectType: 'expense',
    subjectId: expenseId,
    detail: {
      date: input.date,
      amountCents: input.amountCents.toString(),
      vendorId: vendor.id,
      accountId: input.accountId,
      transactionId,
      ...(reviewItemId !== undefined ? { matchedReviewItemId: reviewItemId } : {}),
    },
  });
  return { expenseId, transactionId };
}

/**
 * Whether any bank line of the business waits in the queue unmatched: one probe of an index,
 * where the match itself (a join, a sort) costs ten times as much even with nothing to find.
 */
function linesWaiting(db: Db, businessId: string): boolean {
  return (
    one(db, 'SELECT 1 FROM review_queue_items WHERE business_id = ? AND accepted_at IS NULL AND recorded_expense_id IS NULL LIMIT 1', businessId) !==
    undefined
  );
}

interface ExpenseToMatch {
  expenseId: string;
  businessId: string;
  date: string;
  amountCents: bigint;
  vendor: Vendor;
  accountId: string;
}

/**
 * The other direction of the import's match (src/books/import/bank-import.ts): a bank line already
 * waiting in the review queue that this new expense is. The same amount, dated within
 * RECORDED_MATCH_DAYS, the same vendor (by name key) when the line names one, and not matched
 * to another expense; the nearest in date, then the first queued. Its proposal becomes "already
 * recorded as expense X", so accepting it links the line to the expense and posts nothing
 * (src/books/review.ts). Returns the item's id, or undefined when no line matches.
 */
function matchWaitingBankLine(db: Db, expense: ExpenseToMatch): string | undefined {
  if (!linesWaiting(db, expense.businessId)) return undefined;
  const item = one<{ id: string; txn_date: string; vendor_named: number; candidates: bigint }>(
    db,
    `SELECT q.id, t.txn_date, t.vendor_id IS NOT NULL AS vendor_named, count(*) OVER () AS candidates
     FROM review_queue_items q
     JOIN transactions t ON t.id = q.transaction_id
     LEFT JOIN vendors v ON v.id = t.vendor_id
     WHERE q.business_id = ? AND q.accepted_at IS NULL AND q.recorded_expense_id IS NULL
       AND t.direction = 'out' AND t.journal_entry_id IS NULL AND t.amount_cents = ?
       AND t.txn_date BETWEEN ? AND ?
       AND (t.vendor_id IS NULL OR v.name_key = (SELECT name_key FROM vendors WHERE id = ?))
     ORDER BY abs(julianday(t.txn_date) - julianday(?)), q.created_at, q.id
     LIMIT 1`,
    expense.businessId,
    expense.amountCents,
    dayWithinYears(expense.date, -RECORDED_MATCH_DAYS),
    dayWithinYears(expense.date, RECORDED_MATCH_DAYS),
    expense.vendor.id,
    expense.date,
  );
  if (!item) return undefined;
  const candidates = Number(item.candidates);
  const confidence = recordedMatchConfidence(db, expense.businessId, Number(item.vendor_named) === 1, candidates);
  const rationale =
    `Already recorded as expense ${expense.expenseId} (${expense.date}, ${expense.vendor.name}): ` +
    `the same amount${Number(item.vendor_named) === 1 ? ' and vendor' : ''}, ` +
    `dated ${item.txn_date === expense.date ? 'the same day' : `within ${RECORDED_MATCH_DAYS} days`}` +
    `${candidates > 1 ? `, the nearest in date of ${candidates} waiting bank lines that fit` : ''}. ` +
    'Accepting links this bank line to that expense and posts nothing new.';
  run(
    db,
    'UPDATE review_queue_items SET recorded_expense_id = ?, proposed_account_id = ?, confidence = ?, rationale = ? WHERE id = ? AND accepted_at IS NULL',
    expense.expenseId,
    expense.accountId,
    confidence,
    rationale,
    item.id,
  );
  return item.id;
}

function assertExpenseAmount(amountCents: bigint): void {
  if (amountCents <= 0n) throw validationFailed('amountCents', 'must be greater than zero');
  if (amountCents >= AMOUNT_CEILING_CENTS) throw validationFailed('amountCents', 'must be under ten trillion dollars (1000000000000000 cents)');
}

/**
 * The account must be a postable, non-archived leaf of this business, and not one Daybook
 * keeps itself: the bank account the expense is paid from, receivables and payables (their
 * balances are the invoices' and bills'), sales tax, sales, equity and realised FX. Uncategorized
 * Expense and Payment Processing Fees are the roles an expense may name (EXPENSE_SYSTEM_ROLES). One the business does not have is not_found,
 * like any record the key cannot reach.
 */
export function assertExpenseAccount(db: Db, business: Business, accountId: string): void {
  const account = findLedgerAccount(db, accountId);
  if (!account || account.businessId !== business.id) throw new ApiError('not_found', 'accountId: no such account in this business.');
  if (account.isHeading) throw validationFailed('accountId', 'is a heading; choose one of the accounts GET /accounts lists');
  if (account.archived) throw validationFailed('accountId', 'is archived; choose one of the accounts GET /accounts lists');
  if (account.systemRole === 'bank') throw validationFailed('accountId', 'is the bank account the expense is paid from');
  if (!takesExpenses(account.systemRole)) {
    throw validationFailed('accountId', `is an account Daybook keeps itself (${account.systemRole}); choose an expense or asset account`);
  }
}

function expenseVendor(db: Db, clock: Clock, actor: Actor, tenantId: string, vendor: NewExpense['vendor']): Vendor {
  if ('id' in vendor) {
    const found = findVendor(db, tenantId, vendor.id);
    if (!found) throw new ApiError('not_found', 'vendorId: no such vendor.');
    return found;
  }
  return findOrCreateVendor(db, clock, actor, tenantId, vendor.name).vendor;
}
