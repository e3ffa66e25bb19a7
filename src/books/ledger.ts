import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { isIsoDate } from '../dates.js';
import type { Db } from '../db/connection.js';
import { inTransaction } from '../db/connection.js';
import { all, one, run } from '../db/statements.js';
import { ApiError, validationFailed } from '../errors.js';
import { AMOUNT_CEILING_CENTS } from '../money.js';
import type { Actor } from '../store/audit.js';
import { findLedgerAccount } from './chart.js';
import { newId } from '../ids.js';

/**
 * The posting engine. An entry is written only when it balances in USD cents in both the
 * accrual and the cash view, has at least two lines, every amount is positive, and every
 * line lands on a postable leaf of the entry's business; otherwise nothing is written.
 */

export type Direction = 'debit' | 'credit';
/** both: every report; accrual: receivables and payables; cash: revenue or expense as money moves. */
export type LineBasis = 'both' | 'accrual' | 'cash';
/** What an entry records; the journal_entries CHECK list holds the same names. */
export const SOURCE_TYPES = [
  'invoice',
  'invoice_payment',
  'expense',
  'review_accept',
  'bill',
  'bill_payment',
  'reversal',
  'opening_balance',
  'manual',
  'card_payment',
] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

export const MAX_LINES_PER_ENTRY = 1000;

export interface JournalLineDraft {
  accountId: string;
  direction: Direction;
  amountCents: bigint;
  basis?: LineBasis;
}

export interface JournalEntryDraft {
  businessId: string;
  date: string;
  memo?: string | null;
  sourceType: SourceType;
  sourceId?: string | null;
  reversesEntryId?: string | null;
  lines: JournalLineDraft[];
}

export interface JournalLine {
  lineNo: number;
  accountId: string;
  direction: Direction;
  amountCents: bigint;
  basis: LineBasis;
}

export interface JournalEntry {
  id: string;
  businessId: string;
  date: string;
  memo: string | null;
  sourceType: SourceType;
  sourceId: string | null;
  reversesEntryId: string | null;
  actor: string;
  createdAt: string;
  lines: JournalLine[];
}

/** Names the posting rule that was broken. */
export type PostingRule =
  | 'too_few_lines'
  | 'too_many_lines'
  | 'bad_date'
  | 'amount_not_positive'
  | 'amount_over_ceiling'
  | 'unbalanced'
  | 'unknown_business'
  | 'unknown_account'
  | 'account_other_business'
  | 'account_is_heading'
  | 'account_archived'
  | 'period_locked'
  | 'billing_past_due';

/**
 * A refused posting: the rule, the problem in words, and the index of the journal line at
 * fault where there is one. It says nothing about the API: the journal's lines are not the
 * request's (an invoice adds receivable and tax lines), so each command maps a rule its caller
 * can break to its own field and code (postingRefusal). A rule the command should have
 * prevented is a bug in our own code.
 */
export class PostingError extends Error {
  override name = 'PostingError';
  readonly rule: PostingRule;
  readonly problem: string;
  /** Index into the draft's lines, or null when the rule is about the whole entry. */
  readonly lineIndex: number | null;

  constructor(rule: PostingRule, problem: string, lineIndex: number | null = null) {
    super(lineIndex === null ? `posting refused (${rule}): ${problem}` : `posting refused (${rule}, line ${lineIndex}): ${problem}`);
    this.rule = rule;
    this.problem = problem;
    this.lineIndex = lineIndex;
  }
}

/**
 * How one command reports the posting rules its caller can break: the request field each
 * points at (a name, or a function of the journal line's index). period_locked and
 * billing_past_due keep their own codes; every other mapped rule is validation_failed.
 */
export type PostingFields = Partial<Record<PostingRule, string | ((lineIndex: number | null) => string)>>;

/** The API error a command answers for a refused posting. An unmapped rule is a bug: a plain Error, logged as internal_error. */
export function postingRefusal(error: PostingError, fields: PostingFields): Error {
  const mapped = fields[error.rule];
  const field = typeof mapped === 'function' ? mapped(error.lineIndex) : mapped;
  if (error.rule === 'billing_past_due') return new ApiError('read_only_billing_state', error.problem);
  if (error.rule === 'period_locked') return new ApiError('period_locked', field ? `${field}: ${error.problem}` : error.problem);
  if (field === undefined) return new Error(`a posting broke a rule its command should have prevented: ${error.message}`, { cause: error });
  return validationFailed(field, error.problem);
}

/** Runs `post`, turning a PostingError into the command's own API error (postingRefusal). */
export function withPostingFields<T>(fields: PostingFields, post: () => T): T {
  try {
    return post();
  } catch (error) {
    throw error instanceof PostingError ? postingRefusal(error, fields) : error;
  }
}

/**
 * Refuses a posting into a locked period or while the tenant's billing is past due.
 * Writes call this before any other work so they fail fast with the right code.
 */
export function assertPostingAllowed(db: Db, businessId: string, date: string): void {
  // One statement for the three facts: a posting asks twice (its command first, to fail fast,
  // then postEntry), and under load each statement is a turn through SQLite's locks. Scalar
  // subqueries, not a join: the same answer in 1 µs instead of 12 (docs/performance.md).
  const state = one<{ billing_state: string | null; through: string | null }>(
    db,
    `SELECT (SELECT t.billing_state FROM tenants t WHERE t.id = b.tenant_id) AS billing_state,
       (SELECT l.locked_through FROM period_locks l WHERE l.business_id = b.id ORDER BY l.locked_through DESC LIMIT 1) AS through
     FROM businesses b WHERE b.id = ?`,
    businessId,
  );
  if (!state) throw new PostingError('unknown_business', `business ${businessId} does not exist`);
  if (state.billing_state === 'past_due') {
    throw new PostingError('billing_past_due', 'billing is past due; the books are read only until it is settled');
  }
  if (state.through !== null && date <= state.through) {
    throw new PostingError('period_locked', `${date} falls in a closed period (locked through ${state.through})`);
  }
}

function assertEntryDate(date: string): void {
  if (!isIsoDate(date)) throw new PostingError('bad_date', `${date} is not a date YYYY-MM-DD`);
}

/** Checks the shape of a draft: line count, amounts, dates and balance in both views. */
export function assertDraftBalanced(draft: JournalEntryDraft): void {
  assertEntryDate(draft.date);
  if (draft.lines.length < 2) throw new PostingError('too_few_lines', 'an entry needs at least two lines');
  if (draft.lines.length > MAX_LINES_PER_ENTRY) {
    throw new PostingError('too_many_lines', `an entry may have at most ${MAX_LINES_PER_ENTRY} lines`);
  }
  draft.lines.forEach((line, index) => {
    if (typeof line.amountCents !== 'bigint' || line.amountCents <= 0n) {
      throw new PostingError('amount_not_positive', 'must be a positive whole number of cents', index);
    }
    if (line.amountCents >= AMOUNT_CEILING_CENTS) {
      throw new PostingError('amount_over_ceiling', 'must be under ten trillion dollars', index);
    }
  });
  for (const view of ['accrual', 'cash'] as const) {
    const { debitCents, creditCents } = viewTotals(draft.lines, view);
    if (debitCents !== creditCents) {
      throw new PostingError('unbalanced', `the ${view} view does not balance: debits ${debitCents} cents, credits ${creditCents} cents`);
    }
  }
}

/** Debit and credit totals of the lines a report on `view` basis reads. */
export function viewTotals(lines: readonly Pick<JournalLineDraft, 'direction' | 'amountCents' | 'basis'>[], view: 'accrual' | 'cash') {
  let debitCents = 0n;
  let creditCents = 0n;
  for (const line of lines) {
    const basis = line.basis ?? 'both';
    if (basis !== 'both' && basis !== view) continue;
    if (line.direction === 'debit') debitCents += line.amountCents;
    else creditCents += line.amountCents;
  }
  return { debitCents, creditCents };
}

function assertAccountsPostable(db: Db, draft: JournalEntryDraft): void {
  draft.lines.forEach((line, index) => {
    const account = findLedgerAccount(db, line.accountId);
    if (!account) throw new PostingError('unknown_account', 'no such account', index);
    if (account.businessId !== draft.businessId) throw new PostingError('account_other_business', 'the account belongs to another business', index);
    if (account.isHeading) throw new PostingError('account_is_heading', 'a heading account cannot take postings', index);
    if (account.archived) throw new PostingError('account_archived', 'the account is archived', index);
  });
}

/**
 * Posts a balanced entry, all lines or none. Joins the caller's transaction when there is
 * one (a savepoint), so a command can post, audit and store its result in one commit.
 */
export function postEntry(db: Db, clock: Clock, actor: Actor, draft: JournalEntryDraft): JournalEntry {
  assertEntryDate(draft.date);
  return inTransaction(db, () => {
    // Billing and period locks first: they are what a caller can act on.
    assertPostingAllowed(db, draft.businessId, draft.date);
    assertDraftBalanced(draft);
    assertAccountsPostable(db, draft);
    const id = newId();
    run(
      db,
      `INSERT INTO journal_entries (id, business_id, entry_date, memo, source_type, source_id, reverses_entry_id, line_count, actor, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      draft.businessId,
      draft.date,
      draft.memo ?? null,
      draft.sourceType,
      draft.sourceId ?? null,
      draft.reversesEntryId ?? null,
      draft.lines.length,
      actorLabel(actor),
      nowIso(clock),
    );
    draft.lines.forEach((line, index) => {
      run(
        db,
        `INSERT INTO journal_lines (entry_id, line_no, business_id, ledger_account_id, entry_date, direction, amount_cents, basis)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        id,
        index + 1,
        draft.businessId,
        line.accountId,
        draft.date,
        line.direction,
        line.amountCents,
        line.basis ?? 'both',
      );
    });
    const posted = getEntry(db, id);
    // Read back what was written and check it again: a mismatch is a bug, and it rolls back.
    assertDraftBalanced({ ...draft, lines: posted.lines });
    if (posted.lines.length !== draft.lines.length) throw new Error(`postEntry: wrote ${posted.lines.length} of ${draft.lines.length} lines`);
    return posted;
  });
}

/** A correction: a new entry with every line's direction swapped, dated `date`. */
export function reverseEntry(db: Db, clock: Clock, actor: Actor, entryId: string, date: string, memo?: string): JournalEntry {
  return inTransaction(db, () => {
    const original = getEntry(db, entryId);
    const earlier = one<{ id: string }>(db, 'SELECT id FROM journal_entries WHERE reverses_entry_id = ?', entryId);
    if (earlier) throw new ApiError('conflict', `entry ${entryId} was already reversed by entry ${earlier.id}`);
    return postEntry(db, clock, actor, {
      businessId: original.businessId,
      date,
      memo: memo ?? `Reversal of entry ${original.id}`,
      sourceType: 'reversal',
      sourceId: original.sourceId,
      reversesEntryId: original.id,
      lines: original.lines.map((line) => ({
        accountId: line.accountId,
        direction: line.direction === 'debit' ? 'credit' : 'debit',
        amountCents: line.amountCents,
        basis: line.basis,
      })),
    });
  });
}

interface EntryRow {
  id: string;
  business_id: string;
  entry_date: string;
  memo: string | null;
  source_type: SourceType;
  source_id: string | null;
  reverses_entry_id: string | null;
  actor: string;
  created_at: string;
}

interface LineRow {
  line_no: bigint;
  ledger_account_id: string;
  direction: Direction;
  amount_cents: bigint;
  basis: LineBasis;
}

export function getEntry(db: Db, id: string): JournalEntry {
  const row = one<EntryRow>(db, 'SELECT * FROM journal_entries WHERE id = ?', id);
  if (!row) throw new ApiError('not_found', 'No such journal entry.');
  const lines = all<LineRow>(
    db,
    'SELECT line_no, ledger_account_id, direction, amount_cents, basis FROM journal_lines WHERE entry_id = ? ORDER BY line_no',
    id,
  );
  return {
    id: row.id,
    businessId: row.business_id,
    date: row.entry_date,
    memo: row.memo,
    sourceType: row.source_type,
    sourceId: row.source_id,
    reversesEntryId: row.reverses_entry_id,
    actor: row.actor,
    createdAt: row.created_at,
    lines: lines.map((line) => ({
      lineNo: Number(line.line_no),
      accountId: line.ledger_account_id,
      direction: line.direction,
      amountCents: line.amount_cents,
      basis: line.basis,
    })),
  };
}

function actorLabel(actor: Actor): string {
  return actor.id ? `${actor.type}:${actor.id}` : actor.type;
}

/** Sum of debits and credits over every line of a business in one basis view, through asOf. */
export function ledgerTotals(db: Db, businessId: string, view: 'accrual' | 'cash', asOf?: string): { debitCents: bigint; creditCents: bigint } {
  const row = one<{ debit: bigint | null; credit: bigint | null }>(
    db,
    `SELECT sum(CASE WHEN direction = 'debit' THEN amount_cents END) AS debit,
            sum(CASE WHEN direction = 'credit' THEN amount_cents END) AS credit
     FROM journal_lines WHERE business_id = ? AND basis IN ('both', ?) AND entry_date <= ?`,
    businessId,
    view,
    asOf ?? '9999-12-31',
  );
  return { debitCents: row?.debit ?? 0n, creditCents: row?.credit ?? 0n };
}
