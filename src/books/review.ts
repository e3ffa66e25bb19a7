import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { all, one, run } from '../db/statements.js';
import { ApiError, conflict, validationFailed } from '../errors.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { type Business, getBusiness } from './businesses.js';
import { findLedgerAccount, systemAccountId } from './chart.js';
import { assertExpenseAccount } from './expenses.js';
import { assertPostingAllowed, postEntry, withPostingFields } from './ledger.js';
import type { TransactionDirection } from './transactions.js';

/**
 * The review queue: bank rows waiting for someone to confirm how they are booked, each with the
 * categoriser's proposal. Accepting one posts it (the account against the bank) and settles it;
 * a line since recorded as an expense (POST /expenses) is linked to that expense instead, posting
 * nothing, so the queue never books it twice. Most rows are money out; the only money in queued
 * is a card processor's payout (src/books/import/bank-import.ts), booked to Card Payments
 * Clearing and nowhere else.
 */

/** A waiting item as the queue shows it; amounts are USD cents. */
export interface ReviewItem {
  id: string;
  businessId: string;
  transactionId: string;
  date: string;
  amountCents: bigint;
  vendor: string | null;
  description: string | null;
  /** The proposal while its account can still take the booking; null once it is archived or made a heading. */
  proposedAccountId: string | null;
  proposedAccount: string | null;
  confidence: number | null;
  rationale: string | null;
  createdAt: string;
}

interface ItemRow {
  id: string;
  business_id: string;
  transaction_id: string;
  txn_date: string;
  amount_cents: bigint;
  vendor: string | null;
  description: string | null;
  proposed_account_id: string | null;
  proposed_account: string | null;
  stored_proposal_id: string | null;
  confidence: number | null;
  rationale: string | null;
  created_at: string;
  accepted_at: string | null;
  recorded_expense_id: string | null;
  direction: TransactionDirection;
}

const ITEM_SELECT = `SELECT q.id, q.business_id, q.transaction_id, t.txn_date, t.amount_cents, v.name AS vendor, t.description,
    CASE WHEN a.archived = 0 AND a.is_heading = 0 THEN a.id END AS proposed_account_id,
    CASE WHEN a.archived = 0 AND a.is_heading = 0 THEN a.name END AS proposed_account,
    q.proposed_account_id AS stored_proposal_id, q.confidence, q.rationale, q.created_at, q.accepted_at, q.recorded_expense_id, t.direction
  FROM review_queue_items q
  JOIN transactions t ON t.id = q.transaction_id
  LEFT JOIN vendors v ON v.id = t.vendor_id
  LEFT JOIN ledger_accounts a ON a.id = q.proposed_account_id`;

function toItem(row: ItemRow): ReviewItem {
  return {
    id: row.id,
    businessId: row.business_id,
    transactionId: row.transaction_id,
    date: row.txn_date,
    amountCents: row.amount_cents,
    vendor: row.vendor,
    description: row.description,
    proposedAccountId: row.proposed_account_id,
    proposedAccount: row.proposed_account,
    // The books read REAL as a JS number; a confidence is a score, not money.
    confidence: row.confidence === null ? null : Number(row.confidence),
    rationale: row.rationale,
    createdAt: row.created_at,
  };
}

export interface ReviewQueue {
  hasMore: boolean;
  highConfidence: ReviewItem[];
  needsReview: ReviewItem[];
}

/** Whether an item may be accepted as proposed in a batch: a proposal scored at or above the threshold. */
export function isHighConfidence(item: Pick<ReviewItem, 'proposedAccountId' | 'confidence'>, threshold: number): boolean {
  return item.proposedAccountId !== null && item.confidence !== null && item.confidence >= threshold;
}

/**
 * The oldest waiting items of these businesses (by the transaction's date, then when the item
 * was queued), at most `limit` in both lists together; `hasMore` says whether more wait behind
 * them (spec read rule 3: limited, not paged).
 */
export function listReviewQueue(db: Db, businessIds: readonly string[], limit: number, threshold: number): ReviewQueue {
  if (businessIds.length === 0) return { hasMore: false, highConfidence: [], needsReview: [] };
  const rows = all<ItemRow>(
    db,
    `${ITEM_SELECT}
     WHERE q.accepted_at IS NULL AND q.business_id IN (${businessIds.map(() => '?').join(', ')})
     ORDER BY t.txn_date, q.created_at, q.id LIMIT ?`,
    ...businessIds,
    limit + 1,
  );
  const served = rows.slice(0, limit).map(toItem);
  return {
    hasMore: rows.length > limit,
    highConfidence: served.filter((item) => isHighConfidence(item, threshold)),
    needsReview: served.filter((item) => !isHighConfidence(item, threshold)),
  };
}

/** The review item with this id (waiting or settled), or undefined. */
export function findReviewItem(
  db: Db,
  id: string,
):
  | (ReviewItem & { acceptedAt: string | null; storedProposalId: string | null; recordedExpenseId: string | null; direction: TransactionDirection })
  | undefined {
  const row = one<ItemRow>(db, `${ITEM_SELECT} WHERE q.id = ?`, id);
  return (
    row && { ...toItem(row), acceptedAt: row.accepted_at, storedProposalId: row.stored_proposal_id, recordedExpenseId: row.recorded_expense_id, direction: row.direction }
  );
}

export interface Acceptance {
  itemId: string;
  /** The account to book to; default: the item's proposal. */
  accountId?: string;
}

/**
 * Accepts a waiting item: the expense is posted on the transaction's date (the account debited,
 * the bank credited), the transaction becomes `accepted`, or `edited` when the account differs
 * from the proposal, and the item leaves the queue. The account follows the rules of POST
 * /expenses. A payout (money in) is posted the other way, the bank debited and the account
 * credited, and only Card Payments Clearing may take it (assertPayoutAccount). From then on
 * the booking is history the categoriser learns from (money out only). The caller
 * holds the transaction, so a refusal writes nothing. An item whose bank line is an expense
 * recorded after it was queued is linked to that expense instead and posts nothing (see
 * linkRecordedExpense).
 */
export function acceptReviewItem(db: Db, clock: Clock, actor: Actor, input: Acceptance): { transactionId: string; status: 'accepted' | 'edited' } {
  assertInTransaction(db, 'acceptReviewItem');
  const item = findReviewItem(db, input.itemId);
  if (!item) throw new ApiError('not_found', 'No such review item.');
  if (item.acceptedAt !== null) throw conflict(`the review item was accepted at ${item.acceptedAt}; it has left the queue`);
  const business = getBusiness(db, item.businessId);
  // Billing and period locks first, as for POST /expenses: they are what the caller can act on.
  withPostingFields({}, () => assertPostingAllowed(db, business.id, item.date));
  if (item.recordedExpenseId !== null) return linkRecordedExpense(db, clock, actor, business.tenantId, { ...item, recordedExpenseId: item.recordedExpenseId }, input.accountId);
  const accountId = input.accountId ?? item.proposedAccountId;
  if (accountId === null) {
    const why = item.storedProposalId === null ? 'this item has no proposed account' : 'the proposed account can no longer take postings (archived or made a heading)';
    throw validationFailed('accountId', `is required: ${why}`);
  }
  const moneyIn = item.direction === 'in';
  if (moneyIn) assertPayoutAccount(db, business, accountId);
  else assertExpenseAccount(db, business, accountId);
  const bankId = systemAccountId(db, business.id, 'bank');
  const entry = withPostingFields({}, () =>
    postEntry(db, clock, actor, {
      businessId: business.id,
      date: item.date,
      memo: item.description ?? item.vendor,
      sourceType: 'review_accept',
      sourceId: item.id,
      lines: [
        { accountId: moneyIn ? bankId : accountId, direction: 'debit', amountCents: item.amountCents },
        { accountId: moneyIn ? accountId : bankId, direction: 'credit', amountCents: item.amountCents },
      ],
    }),
  );
  // Booked elsewhere than the categoriser proposed (even a proposal since archived) is an edit.
  const status = item.storedProposalId === null || accountId === item.storedProposalId ? 'accepted' : 'edited';
  run(db, 'UPDATE transactions SET status = ?, ledger_account_id = ?, journal_entry_id = ? WHERE id = ?', status, accountId, entry.id, item.transactionId);
  run(db, 'UPDATE review_queue_items SET accepted_at = ? WHERE id = ? AND accepted_at IS NULL', nowIso(clock), item.id);
  recordAudit(db, clock, actor, {
    tenantId: business.tenantId,
    businessId: business.id,
    action: 'review.accept',
    subjectType: 'review_item',
    subjectId: item.id,
    detail: { transactionId: item.transactionId, accountId, proposedAccountId: item.storedProposalId, status },
  });
  return { transactionId: item.transactionId, status };
}

/**
 * The account a payout (a money-in bank line) may be booked to: the business's Card Payments
 * Clearing, which the payout clears. Every other account is refused: an expense account would
 * book a receipt as negative spending, and income or an invoice's receivable would count again
 * what the card payments in the clearing account already settled. One the business does not
 * have is not_found, as for an expense.
 */
function assertPayoutAccount(db: Db, business: Business, accountId: string): void {
  const account = findLedgerAccount(db, accountId);
  if (!account || account.businessId !== business.id) throw new ApiError('not_found', 'accountId: no such account in this business.');
  if (account.systemRole !== 'card_clearing') {
    const clearingId = systemAccountId(db, business.id, 'card_clearing');
    throw validationFailed('accountId', `is not Card Payments Clearing (${clearingId}): this bank line is money in, a card processor's payout, and is booked only to that account`);
  }
}

/**
 * Accepts an item whose bank line is an expense recorded after it was queued (its proposal says
 * "already recorded as expense X"): the line is linked to that expense (its account and journal
 * entry) and nothing is posted, since the expense already was. Another account is refused: the
 * expense is booked where it was recorded, and booking the line elsewhere would book it twice.
 */
function linkRecordedExpense(
  db: Db,
  clock: Clock,
  actor: Actor,
  tenantId: string,
  item: ReviewItem & { recordedExpenseId: string },
  accountId: string | undefined,
): { transactionId: string; status: 'accepted' } {
  const expense = one<{ id: string; ledger_account_id: string; account_name: string; journal_entry_id: string; amount_cents: bigint; business_id: string }>(
    db,
    `SELECT e.id, e.ledger_account_id, a.name AS account_name, e.journal_entry_id, e.amount_cents, e.business_id
     FROM expenses e JOIN ledger_accounts a ON a.id = e.ledger_account_id WHERE e.id = ?`,
    item.recordedExpenseId,
  );
  if (!expense || expense.business_id !== item.businessId || expense.amount_cents !== item.amountCents) {
    throw new Error(`acceptReviewItem: item ${item.id} names recorded expense ${item.recordedExpenseId}, which is not an expense of its amount in its business`);
  }
  if (accountId !== undefined && accountId !== expense.ledger_account_id) {
    throw conflict(
      `accountId: this bank line is already recorded as expense ${expense.id}, booked to ${expense.account_name} (${expense.ledger_account_id}); ` +
        'booking it to another account would book it twice. Accept without accountId to link the line to that expense',
    );
  }
  const linked = run(
    db,
    "UPDATE transactions SET status = 'accepted', ledger_account_id = ?, journal_entry_id = ? WHERE id = ? AND journal_entry_id IS NULL",
    expense.ledger_account_id,
    expense.journal_entry_id,
    item.transactionId,
  );
  const settled = run(db, 'UPDATE review_queue_items SET accepted_at = ? WHERE id = ? AND accepted_at IS NULL', nowIso(clock), item.id);
  if (linked.changes !== 1 || settled.changes !== 1) throw new Error(`acceptReviewItem: item ${item.id} was not waiting with an unposted bank line`);
  recordAudit(db, clock, actor, {
    tenantId,
    businessId: item.businessId,
    action: 'review.accept',
    subjectType: 'review_item',
    subjectId: item.id,
    detail: { transactionId: item.transactionId, accountId: expense.ledger_account_id, linkedExpenseId: expense.id, status: 'accepted' },
  });
  return { transactionId: item.transactionId, status: 'accepted' };
}
