import { createHash } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { nowIso } from '../../clock.js';
import { addDays, daysBetween, isIsoDate } from '../../dates.js';
import { type Db, inTransaction } from '../../db/connection.js';
import { all, one, run } from '../../db/statements.js';
import { foldName, nameKey } from '../../names.js';
import { type Actor, recordAudit } from '../../store/audit.js';
import { getBusiness } from '../businesses.js';
import { findCardProcessor } from '../card-processors.js';
import { type Categoriser, categoriserFor, type Proposal } from '../categorise/index.js';
import { isProcessorPayout, payoutProposal } from '../categorise/payouts.js';
import { newId } from '../../ids.js';
import { lockedThrough } from '../periods.js';
import type { TransactionDirection, TransactionSource, TransactionStatus } from '../transactions.js';
import { findOrCreateVendor } from '../vendors.js';
import { isCheckedStatementRow, type StatementProblem, StatementRefused, type StatementRow, withinDescriptionLimit } from './statement.js';

/**
 * Bank statement import: a CSV file becomes transactions, all rows or none. Money out waits in
 * the review queue with the categoriser's proposal; so does a card processor's payout, proposed
 * to Card Payments Clearing, in a business that takes card payments. Other money in is
 * recorded, uncategorised, for reconciliation. Nothing is posted: a row is booked only when its
 * review item is accepted.
 */

/** A bank line may clear this many days before or after the date an expense was recorded with. */
export const RECORDED_MATCH_DAYS = 5;

/**
 * A row's identity across imports: SHA-256 (hex) of the business, date, signed amount,
 * description (case-folded, runs of white space as one space) and the row's position among
 * the file's rows with that same date, amount and description (1 for the first). Two
 * identical coffees on one day are two rows; the same statement imported again, or one that
 * overlaps it, gives the same fingerprints, even when the bank's export changed the
 * description's case or spacing.
 */
export function importFingerprint(businessId: string, row: Pick<StatementRow, 'date' | 'amountCents' | 'description'>, position: number): string {
  return fingerprintOf(businessId, row, descriptionKey(row.description), position);
}

/** importFingerprint with the description's key already made (`described`, descriptionKey). */
function fingerprintOf(businessId: string, row: Pick<StatementRow, 'date' | 'amountCents'>, described: string, position: number): string {
  if (!Number.isSafeInteger(position) || position < 1) throw new Error(`importFingerprint: bad position ${position}`);
  return createHash('sha256')
    .update(JSON.stringify([businessId, row.date, row.amountCents.toString(), described, position]))
    .digest('hex');
}

/** The description as rows are told apart: case-folded, white space collapsed. */
function descriptionKey(description: string): string {
  return foldName(description.replace(/\s+/gu, ' ').trim());
}

export interface BankImportInput {
  businessId: string;
  /** For the audit row: the file's name as given, without its folder. */
  fileName: string;
  rows: readonly StatementRow[];
}

export interface BankImportOptions {
  /** Called after every `progressEvery` rows (not after the last): rows done, rows in all. */
  onProgress?: (done: number, total: number) => void;
  progressEvery?: number;
  /** Where proposals come from; the categoriser of src/books/categorise unless a test says otherwise. */
  categoriserFor?: (db: Db, businessId: string) => Categoriser;
}

export interface BankImportResult {
  businessId: string;
  businessName: string;
  /** Data rows in the file. */
  rows: number;
  /** New transactions: queued + moneyIn. */
  imported: number;
  /** Rows whose fingerprint was already in the books. */
  duplicates: number;
  /**
   * Money-out rows matching an expense already recorded (POST /expenses): same amount, dated
   * within RECORDED_MATCH_DAYS, same vendor when the file names one. Not queued (accepting
   * would book the expense twice); the expense takes the row's fingerprint, so it is matched
   * once and a later import of the row is a duplicate.
   */
  alreadyRecorded: number;
  /** New rows now waiting in the review queue: money out, and payouts of the card processor. */
  queued: number;
  /** New money-in rows recorded uncategorised (no review item): every one but the payouts queued. */
  moneyIn: number;
}

export const DEFAULT_PROGRESS_EVERY = 5000;
/** Rows decided, then written, together: enough to keep the two apart, few enough to hold in memory. */
const IMPORT_CHUNK_ROWS = 5000;

const SOURCE: TransactionSource = 'csv';
/** A new row's direction and status: money out waiting for review, money in recorded, a payout waiting for review. */
type ImportedKind = { direction: TransactionDirection; status: TransactionStatus };
const OUT: ImportedKind = { direction: 'out', status: 'pending' };
const IN: ImportedKind = { direction: 'in', status: 'uncategorized' };
const PAYOUT: ImportedKind = { direction: 'in', status: 'pending' };

/**
 * Imports checked statement rows into a business, in one transaction: every row whose
 * fingerprint the business does not have yet is taken. Money out (negative) that matches an
 * expense already recorded is that expense (it takes the fingerprint; see alreadyRecorded);
 * any other money out becomes a `pending` transaction (source csv) with a review item holding
 * the categoriser's proposal, the proposal's rationale also on the transaction, and its vendor
 * found or created by exact name. Money in is `uncategorized`, with no review item and no
 * vendor (a payer is not a vendor), except a payout of the card processor in a business that
 * takes card payments (isProcessorPayout, payoutAccount): that is `pending`, again with no
 * vendor, and its review item proposes Card Payments Clearing, the account accepting it credits. Nothing is posted and the categoriser is not taught: these rows are not booked
 * yet. A new money-out row dated in a closed period could never be accepted, so such rows
 * refuse the whole file (StatementRefused naming each); a payout dated there is recorded as
 * other money in is, since queued it could never leave the queue. One audit row (bank.import)
 * records the counts.
 */
export function importBankStatement(db: Db, clock: Clock, actor: Actor, input: BankImportInput, options: BankImportOptions = {}): BankImportResult {
  const every = options.progressEvery ?? DEFAULT_PROGRESS_EVERY;
  if (!Number.isSafeInteger(every) || every < 1) throw new Error(`importBankStatement: bad progressEvery ${every}`);
  if (input.rows.length === 0) throw new Error('importBankStatement: no rows (parseStatement refuses such a file)');
  return inTransaction(db, () => {
    const business = getBusiness(db, input.businessId);
    const categoriser = (options.categoriserFor ?? categoriserFor)(db, business.id);
    const businessAccounts = new Set(all<{ id: string }>(db, 'SELECT id FROM ledger_accounts WHERE business_id = ?', business.id).map((account) => account.id));
    const closedThrough = lockedThrough(db, business.id);
    const window = matchWindow(input.rows);
    const recordedExpenses = recordedExpenseMatcher(db, business.id, window);
    const alreadyImported = importedFingerprints(db, business.id, window, input.rows.length);
    const clearingAccountId = payoutAccount(db, business.id);
    const vendorIds = new Map<string, string>();
    const seen = new Map<string, number>();
    const createdAt = nowIso(clock);
    const problems: StatementProblem[] = [];
    // The rows of a chunk are decided first (fingerprint looked up, proposal made), then the new
    // ones are written in one run of inserts: the categoriser's work and SQLite's each keep the
    // processor's caches to themselves. The fingerprints looked up are the books' as they were
    // before the file, which changes nothing: no two of the file's rows share a fingerprint
    // (each has its position).
    const newRows: ImportedRow[] = [];
    let duplicates = 0;
    let alreadyRecorded = 0;
    let queued = 0;
    let moneyIn = 0;

    const vendorFor = (row: StatementRow): string | null => {
      if (row.vendorName === null) return null;
      const vendorId = vendorIds.get(row.vendorName) ?? findOrCreateVendor(db, clock, actor, business.tenantId, row.vendorName).vendor.id;
      vendorIds.set(row.vendorName, vendorId);
      return vendorId;
    };

    const newTransaction = (row: StatementRow, amountCents: bigint, vendorId: string | null, kind: ImportedKind, rationale: string | null, fingerprint: string): ImportedTransaction => ({
      id: newId(),
      businessId: business.id,
      row,
      amountCents,
      vendorId,
      ...kind,
      rationale,
      fingerprint,
      createdAt,
    });

    const queueRow = (row: StatementRow, amountCents: bigint, fingerprint: string): void => {
      const vendorId = vendorFor(row);
      const proposal = categoriser.propose({ description: row.description, vendorName: row.vendorName, amountCents });
      assertQueueableProposal(proposal, businessAccounts);
      newRows.push({ transaction: newTransaction(row, amountCents, vendorId, OUT, proposal.rationale, fingerprint), proposal });
    };

    // A payout has no vendor, like all money in: the processor is not a supplier.
    const queuePayout = (row: StatementRow, clearing: string, fingerprint: string): void => {
      const proposal = payoutProposal(row.description, clearing);
      assertQueueableProposal(proposal, businessAccounts);
      newRows.push({ transaction: newTransaction(row, row.amountCents, null, PAYOUT, proposal.rationale, fingerprint), proposal });
    };

    const decide = (row: StatementRow): void => {
      assertRow(row);
      const described = descriptionKey(row.description);
      const sameKey = JSON.stringify([row.date, row.amountCents.toString(), described]);
      const position = (seen.get(sameKey) ?? 0) + 1;
      seen.set(sameKey, position);
      const fingerprint = fingerprintOf(business.id, row, described, position);
      if (alreadyImported.has(fingerprint)) {
        duplicates += 1;
      } else if (row.amountCents < 0n) {
        const amountCents = -row.amountCents;
        const recorded = recordedExpenses.take(row, amountCents);
        if (recorded !== undefined) {
          run(db, 'UPDATE transactions SET import_fingerprint = ? WHERE id = ? AND import_fingerprint IS NULL', fingerprint, recorded);
          alreadyRecorded += 1;
        } else if (closedThrough !== null && row.date <= closedThrough) {
          problems.push({ row: row.row, message: `date ${row.date} falls in a closed period (locked through ${closedThrough}): it could never be booked` });
        } else {
          queueRow(row, amountCents, fingerprint);
          queued += 1;
        }
      } else if (clearingAccountId !== null && isProcessorPayout(row.description, row.vendorName) && (closedThrough === null || row.date > closedThrough)) {
        queuePayout(row, clearingAccountId, fingerprint);
        queued += 1;
      } else {
        newRows.push({ transaction: newTransaction(row, row.amountCents, null, IN, null, fingerprint), proposal: null });
        moneyIn += 1;
      }
    };

    const total = input.rows.length;
    for (let start = 0; start < total; start += IMPORT_CHUNK_ROWS) {
      const end = Math.min(start + IMPORT_CHUNK_ROWS, total);
      for (let index = start; index < end; index += 1) decide(input.rows[index]!);
      for (const { transaction, proposal } of newRows) {
        insertImported(db, transaction);
        if (proposal !== null) insertReviewItem(db, transaction, proposal);
      }
      newRows.length = 0;
      if (options.onProgress) for (let done = (Math.floor(start / every) + 1) * every; done <= end && done < total; done += every) options.onProgress(done, total);
    }
    // Throwing rolls back every row written above: all rows or none.
    if (problems.length > 0) throw new StatementRefused(problems);

    const imported = queued + moneyIn;
    if (imported + duplicates + alreadyRecorded !== input.rows.length) throw new Error('importBankStatement: every row is imported, a duplicate or already recorded');
    recordAudit(db, clock, actor, {
      tenantId: business.tenantId,
      businessId: business.id,
      action: 'bank.import',
      subjectType: 'business',
      subjectId: business.id,
      detail: { file: input.fileName, rows: input.rows.length, imported, duplicates, alreadyRecorded, queued },
    });
    return { businessId: business.id, businessName: business.name, rows: input.rows.length, imported, duplicates, alreadyRecorded, queued, moneyIn };
  });
}

/**
 * The account a payout is proposed to: the business's Card Payments Clearing, when the business
 * takes card payments (connected to the processor now, or card payments were posted to the
 * clearing account before); else null, and its money in is all recorded uncategorised as
 * before, since a payout of a processor the books never saw has nothing there to clear.
 */
function payoutAccount(db: Db, businessId: string): string | null {
  const clearing = one<{ id: string }>(db, "SELECT id FROM ledger_accounts WHERE business_id = ? AND system_role = 'card_clearing'", businessId);
  if (!clearing) return null;
  const used = one(db, 'SELECT 1 AS found FROM journal_lines WHERE ledger_account_id = ? LIMIT 1', clearing.id) !== undefined;
  return used || findCardProcessor(db, businessId) !== undefined ? clearing.id : null;
}

/** At most this many of the books' rows are read ahead for their fingerprints... */
const MAX_FINGERPRINTS_READ = 200_000;
/** ... and at most this many for each row of the file: past either, each row is looked up on its own. */
const ROWS_READ_PER_FILE_ROW = 2;

/**
 * Whether a row's fingerprint is in the books already, read once instead of looked up per row:
 * the fingerprints of the business's rows dated from the file's first date to its last, widened
 * by RECORDED_MATCH_DAYS each way. A fingerprint holds its bank row's date; an imported row has
 * that date, and an expense that took a row's fingerprint (alreadyRecorded) is dated within
 * RECORDED_MATCH_DAYS of it, so no row outside the range can match. Reading is worth it only
 * while the books hold few rows in those dates against the file's (they are counted first, in
 * the index alone); else, or past `maxRead`, each row is looked up in the fingerprint index.
 */
export function importedFingerprints(db: Db, businessId: string, { from, to }: MatchWindow, fileRows: number, maxRead = MAX_FINGERPRINTS_READ): { has(fingerprint: string): boolean } {
  const inDates = Number(one<{ n: bigint }>(db, ROWS_IN_DATES_SQL, businessId, from, to)!.n);
  if (inDates <= Math.min(maxRead, ROWS_READ_PER_FILE_ROW * fileRows)) {
    return new Set(all<{ import_fingerprint: string }>(db, IMPORTED_IN_DATES_SQL, businessId, from, to).map((row) => row.import_fingerprint));
  }
  return { has: (fingerprint) => one(db, 'SELECT 1 AS found FROM transactions WHERE business_id = ? AND import_fingerprint = ?', businessId, fingerprint) !== undefined };
}

/** How many of a business's rows are dated within a range: the register index alone. */
export const ROWS_IN_DATES_SQL = 'SELECT count(*) AS n FROM transactions WHERE business_id = ? AND txn_date BETWEEN ? AND ?';

/** The fingerprints of a business's imported rows dated within a range, down the register index. */
export const IMPORTED_IN_DATES_SQL = `SELECT import_fingerprint FROM transactions
  WHERE business_id = ? AND txn_date BETWEEN ? AND ? AND import_fingerprint IS NOT NULL`;

/** The dates a file's rows can meet in the books: its first date less RECORDED_MATCH_DAYS to its last plus as many. */
export interface MatchWindow {
  from: string;
  to: string;
}

/** The file's MatchWindow, from one pass over its (non-empty) rows. */
export function matchWindow(rows: readonly StatementRow[]): MatchWindow {
  let first = rows[0]!.date;
  let last = first;
  for (const { date } of rows) {
    if (date < first) first = date;
    if (date > last) last = date;
  }
  return { from: dayWithinYears(first, -RECORDED_MATCH_DAYS), to: dayWithinYears(last, RECORDED_MATCH_DAYS) };
}

/** `date` moved by `days`, kept within the years 0000 to 9999 that dates are written in. */
export function dayWithinYears(date: string, days: number): string {
  const moved = addDays(date, days);
  if (isIsoDate(moved)) return moved;
  return days < 0 ? '0000-01-01' : '9999-12-31';
}

/** A posted expense not yet matched to a bank line, as the matcher holds it. */
interface RecordedExpense {
  id: string;
  date: string;
  vendorKey: string | null;
  createdAt: string;
}

/**
 * The bank's record of an expense already posted: the expenses of the business (not from an
 * import, not yet matched to a bank line, imported or queued) dated within RECORDED_MATCH_DAYS of the file's rows, held by amount.
 * `take` finds the one a money-out row is: the same amount, dated within RECORDED_MATCH_DAYS,
 * the same vendor (by name_key) when the row names one; the nearest in date, then the first
 * recorded. A taken expense is not offered again.
 */
function recordedExpenseMatcher(db: Db, businessId: string, { from, to }: MatchWindow) {
  const byAmount = new Map<bigint, RecordedExpense[]>();
  const candidates = all<{ id: string; txn_date: string; amount_cents: bigint; vendor_key: string | null; created_at: string }>(
    db,
    `SELECT t.id, t.txn_date, t.amount_cents, v.name_key AS vendor_key, t.created_at
     FROM transactions t LEFT JOIN vendors v ON v.id = t.vendor_id
     WHERE t.business_id = ? AND t.txn_date BETWEEN ? AND ? AND t.direction = 'out'
       AND t.import_fingerprint IS NULL AND t.journal_entry_id IS NOT NULL
       -- An expense already matched to a queued bank line (src/books/expenses.ts) is that line's.
       AND NOT EXISTS (SELECT 1 FROM expenses e JOIN review_queue_items q ON q.recorded_expense_id = e.id WHERE e.transaction_id = t.id)
     ORDER BY t.created_at, t.id`,
    businessId,
    from,
    to,
  );
  for (const row of candidates) {
    const list = byAmount.get(row.amount_cents) ?? [];
    list.push({ id: row.id, date: row.txn_date, vendorKey: row.vendor_key, createdAt: row.created_at });
    byAmount.set(row.amount_cents, list);
  }
  return {
    take(row: StatementRow, amountCents: bigint): string | undefined {
      const list = byAmount.get(amountCents);
      if (!list) return undefined;
      const vendorKey = row.vendorName === null ? null : nameKey(row.vendorName);
      let best = -1;
      let bestDistance = Infinity;
      list.forEach((expense, index) => {
        if (vendorKey !== null && expense.vendorKey !== vendorKey) return;
        const distance = Math.abs(daysBetween(expense.date, row.date));
        // The list is in recording order, so the first at the least distance wins ties.
        if (distance <= RECORDED_MATCH_DAYS && distance < bestDistance) {
          best = index;
          bestDistance = distance;
        }
      });
      if (best < 0) return undefined;
      return list.splice(best, 1)[0]!.id;
    },
  };
}

interface ImportedTransaction {
  id: string;
  businessId: string;
  row: StatementRow;
  amountCents: bigint;
  vendorId: string | null;
  direction: TransactionDirection;
  status: TransactionStatus;
  rationale: string | null;
  fingerprint: string;
  createdAt: string;
}

/** A new row as decided, before it is written: its transaction and, when it waits for review, the proposal its item holds. */
interface ImportedRow {
  transaction: ImportedTransaction;
  proposal: Proposal | null;
}

/** The review item of a queued row, holding the proposal. */
function insertReviewItem(db: Db, t: ImportedTransaction, proposal: Proposal): void {
  run(
    db,
    `INSERT INTO review_queue_items (id, business_id, transaction_id, proposed_account_id, confidence, rationale, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    newId(),
    t.businessId,
    t.id,
    proposal.accountId,
    proposal.confidence,
    proposal.rationale,
    t.createdAt,
  );
}

/** insertTransaction's row plus what only an import has: the fingerprint (and the proposal's rationale). */
function insertImported(db: Db, t: ImportedTransaction): void {
  run(
    db,
    `INSERT INTO transactions (id, business_id, txn_date, amount_cents, direction, vendor_id, ledger_account_id, status, source,
       description, rationale, journal_entry_id, created_at, import_fingerprint)
     VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, NULL, ?, ?)`,
    t.id,
    t.businessId,
    t.row.date,
    t.amountCents,
    t.direction,
    t.vendorId,
    t.status,
    SOURCE,
    t.row.description,
    t.rationale,
    t.createdAt,
    t.fingerprint,
  );
}

/** A row that breaks what parseStatement guarantees is a caller's bug. */
function assertRow(row: StatementRow): void {
  if (!isCheckedStatementRow(row)) throw new Error(`importBankStatement: row ${row.row} was not checked by parseStatement`);
}

/** A proposal the review queue can hold: an account of this business (or none), a confidence in [0, 1], a bounded rationale. */
function assertQueueableProposal(proposal: ReturnType<Categoriser['propose']>, businessAccounts: ReadonlySet<string>): void {
  const { accountId, confidence, rationale } = proposal;
  if (accountId !== null && !businessAccounts.has(accountId)) throw new Error(`categoriser proposed ${accountId}, not an account of this business`);
  if (confidence !== null && !(typeof confidence === 'number' && confidence >= 0 && confidence <= 1)) throw new Error(`categoriser gave confidence ${String(confidence)}`);
  if (typeof rationale !== 'string' || !withinDescriptionLimit(rationale)) throw new Error('categoriser gave a rationale that is not text of at most 2000 characters');
}
