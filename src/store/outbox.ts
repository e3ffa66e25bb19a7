import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { assertInTransaction, type Db, inTransaction } from '../db/connection.js';
import { all, int, one, run } from '../db/statements.js';
import { newId } from '../ids.js';

/**
 * The email outbox. An email is written here inside the transaction of the write that causes
 * it (an invoice sent, a reminder), so it exists exactly when that write committed; delivery
 * (src/email/deliver.ts) reads due rows afterwards and records each outcome here. This file
 * knows nothing of SMTP.
 *
 * A delivery claims a row (claimed_until) before it sends and clears the claim when it records
 * the outcome. The claim lives in the books file, so no two deliveries send one email, whether
 * they share a process (a request's delivery after its commit and the job pool's) or not (the
 * server and `daybook jobs run outbox`); a claim left by a crash lapses after CLAIM_MS and the
 * email is tried again.
 */

/** The schema's CHECK lists for email_outbox.kind and email_outbox.status. */
export const EMAIL_KINDS = ['invoice', 'reminder'] as const;
export type EmailKind = (typeof EMAIL_KINDS)[number];

export const EMAIL_STATUSES = ['pending', 'sent', 'failed'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

/**
 * Retry schedule. After the nth failed attempt the next one is due
 * min(RETRY_BASE_MS * 2^(n-1), RETRY_CAP_MS) later: 1, 2, 4, 8, 16, 32, 64, 128 and 256
 * minutes. The 10th failure (MAX_ATTEMPTS) ends the retries with status 'failed', about 8.5
 * hours (511 minutes) after the first failure; the 6-hour cap only matters if MAX_ATTEMPTS grows.
 * A permanent refusal (markEmailFailed with `permanent`) ends them at its first attempt.
 */
export const RETRY_BASE_MS = 60_000;
export const RETRY_CAP_MS = 6 * 60 * 60_000;
export const MAX_ATTEMPTS = 10;

/**
 * How long a claim holds an email for the delivery that took it: far beyond one SMTP attempt
 * (src/email/mailer.ts gives up on a silent server within seconds), so a live delivery never
 * loses its claim, and short enough that an email claimed by a delivery that crashed goes out
 * soon after.
 */
export const CLAIM_MS = 10 * 60_000;

/** last_error keeps at most this many characters of the failure. */
export const MAX_ERROR_CHARS = 2000;

/** Limits on what a caller may enqueue; the schema caps the address at 320. */
export const MAX_ADDRESS_CHARS = 320;
export const MAX_SUBJECT_CHARS = 500;
export const MAX_BODY_CHARS = 200_000;

/** emailsDue returns at most this many rows; the rest wait for the next run. */
export const DUE_BATCH_LIMIT = 100;

export interface NewEmail {
  tenantId: string;
  businessId: string | null;
  kind: EmailKind;
  invoiceId: string | null;
  /** One bare address (name@host): never a list, never a display name. */
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface OutboxEmail {
  id: string;
  tenantId: string;
  businessId: string | null;
  kind: EmailKind;
  invoiceId: string | null;
  to: string;
  subject: string;
  text: string;
  /** Null only for rows written before the outbox kept an HTML body. */
  html: string | null;
  status: EmailStatus;
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  createdAt: string;
  sentAt: string | null;
  /** Until when a delivery holds the email; null, or a time past, when none does. */
  claimedUntil: string | null;
}

interface OutboxRow {
  id: string;
  tenant_id: string;
  business_id: string | null;
  kind: EmailKind;
  invoice_id: string | null;
  to_address: string;
  subject: string;
  body_text: string;
  body_html: string | null;
  status: EmailStatus;
  attempts: bigint | number;
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
  claimed_until: string | null;
}

function toOutboxEmail(row: OutboxRow): OutboxEmail {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    businessId: row.business_id,
    kind: row.kind,
    invoiceId: row.invoice_id,
    to: row.to_address,
    subject: row.subject,
    text: row.body_text,
    html: row.body_html,
    status: row.status,
    attempts: int(row.attempts)!,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    createdAt: row.created_at,
    sentAt: row.sent_at,
    claimedUntil: row.claimed_until,
  };
}

/** A single address: no display name, no list separators, no white space or line breaks. */
const BARE_ADDRESS = /^[^\s@<>,;:"()[\]\\]+@[^\s@<>,;:"()[\]\\]+$/;
const LINE_BREAK = /[\r\n]/;

function assertNewEmail(message: NewEmail): void {
  if (!(EMAIL_KINDS as readonly string[]).includes(message.kind)) throw new Error(`enqueueEmail: unknown kind ${String(message.kind)}`);
  if (message.to.length > MAX_ADDRESS_CHARS || !BARE_ADDRESS.test(message.to)) {
    throw new Error('enqueueEmail: to must be one bare email address');
  }
  if (message.subject.trim() === '' || message.subject.length > MAX_SUBJECT_CHARS || LINE_BREAK.test(message.subject)) {
    throw new Error(`enqueueEmail: subject must be one non-blank line of at most ${MAX_SUBJECT_CHARS} characters`);
  }
  if (message.text.trim() === '' || message.text.length > MAX_BODY_CHARS) throw new Error('enqueueEmail: text must be a non-blank body within the limit');
  if (message.html.trim() === '' || message.html.length > MAX_BODY_CHARS) throw new Error('enqueueEmail: html must be a non-blank body within the limit');
}

/**
 * Writes one pending email, due now. The caller holds the transaction of the write the email
 * belongs to, so the email commits with it or not at all. Returns the email's id.
 */
export function enqueueEmail(db: Db, clock: Clock, message: NewEmail): string {
  assertInTransaction(db, 'enqueueEmail');
  assertNewEmail(message);
  const id = newId();
  const now = nowIso(clock);
  run(
    db,
    `INSERT INTO email_outbox (id, tenant_id, business_id, kind, invoice_id, to_address, subject, body_text, body_html,
       status, attempts, next_attempt_at, last_error, created_at, sent_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, NULL, ?, NULL)`,
    id,
    message.tenantId,
    message.businessId,
    message.kind,
    message.invoiceId,
    message.to,
    message.subject,
    message.text,
    message.html,
    now,
    now,
  );
  return id;
}

export function findEmail(db: Db, id: string): OutboxEmail | undefined {
  const row = one<OutboxRow>(db, 'SELECT * FROM email_outbox WHERE id = ?', id);
  return row && toOutboxEmail(row);
}

/**
 * Pending emails whose next attempt is due (next_attempt_at <= now) and that no delivery holds
 * (no claim, or a lapsed one), oldest due first, at most DUE_BATCH_LIMIT of them; with `ids`,
 * only those among them. A delivery must still claimEmail each one before sending it.
 */
export function emailsDue(db: Db, clock: Clock, ids?: readonly string[]): OutboxEmail[] {
  const now = nowIso(clock);
  if (ids === undefined) {
    const rows = all<OutboxRow>(
      db,
      `SELECT * FROM email_outbox WHERE status = 'pending' AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?)
       ORDER BY next_attempt_at, created_at, id LIMIT ?`,
      now,
      now,
      DUE_BATCH_LIMIT,
    );
    return rows.map(toOutboxEmail);
  }
  if (ids.length > DUE_BATCH_LIMIT) throw new Error(`emailsDue: at most ${DUE_BATCH_LIMIT} ids at a time`);
  if (ids.length === 0) return [];
  const rows = all<OutboxRow>(
    db,
    `SELECT * FROM email_outbox WHERE status = 'pending' AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?)
       AND id IN (SELECT value FROM json_each(?))
     ORDER BY next_attempt_at, created_at, id`,
    now,
    now,
    JSON.stringify(ids),
  );
  return rows.map(toOutboxEmail);
}

/**
 * Claims a due pending email for one delivery, until now + CLAIM_MS, in one conditional UPDATE:
 * true when this call took it; false, changing nothing, when another delivery holds a live
 * claim or the email is no longer pending or due (another delivery settled or rescheduled it
 * since it was listed). A lapsed claim is taken over. The claim ends with markEmailSent or
 * markEmailFailed.
 */
export function claimEmail(db: Db, clock: Clock, id: string): boolean {
  const now = clock.now();
  const nowText = now.toISOString();
  const { changes } = run(
    db,
    `UPDATE email_outbox SET claimed_until = ?
     WHERE id = ? AND status = 'pending' AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?)`,
    new Date(now.getTime() + CLAIM_MS).toISOString(),
    id,
    nowText,
    nowText,
  );
  if (changes > 1) throw new Error(`claimEmail: claimed ${changes} rows for email ${id}`);
  return changes === 1;
}

/** The wait before the next attempt once `attempts` attempts have failed (see RETRY_BASE_MS). */
export function retryDelayMs(attempts: number): number {
  if (!Number.isSafeInteger(attempts) || attempts < 1) throw new Error(`retryDelayMs: attempts must be a positive integer, got ${attempts}`);
  // 2^(attempts-1) grows past the cap long before it could overflow: stop doubling there.
  const exponent = Math.min(attempts - 1, 30);
  return Math.min(RETRY_BASE_MS * 2 ** exponent, RETRY_CAP_MS);
}

/** The row a mark function found, for the assertions both share. */
function existingEmail(db: Db, id: string, who: string): OutboxEmail {
  const email = findEmail(db, id);
  if (!email) throw new Error(`${who}: no email ${id} in the outbox`);
  return email;
}

/**
 * Records that the server accepted the email and ends its claim. Returns false, changing
 * nothing, when the row was no longer pending (another delivery got there first); an unknown
 * id is a bug and throws.
 */
export function markEmailSent(db: Db, clock: Clock, id: string): boolean {
  return inTransaction(db, () => {
    const email = existingEmail(db, id, 'markEmailSent');
    if (email.status !== 'pending') return false;
    const { changes } = run(
      db,
      `UPDATE email_outbox SET status = 'sent', attempts = attempts + 1, sent_at = ?, claimed_until = NULL WHERE id = ? AND status = 'pending'`,
      nowIso(clock),
      id,
    );
    if (changes !== 1) throw new Error(`markEmailSent: expected to update email ${id}`);
    return true;
  });
}

export interface EmailFailure {
  attempts: number;
  status: EmailStatus;
  nextAttemptAt: string;
}

export interface FailureOptions {
  /**
   * The server refused this email for good (a 5xx to its recipient or its content, an address
   * that cannot be used): no more attempts, whatever the count.
   */
  permanent?: boolean;
}

/**
 * Records a failed attempt and ends its claim: attempts + 1, the error (first MAX_ERROR_CHARS
 * characters), and the next attempt due after retryDelayMs(attempts). A permanent failure, or
 * the MAX_ATTEMPTS-th, sets status 'failed' instead, and next_attempt_at then records when that
 * last attempt failed. Returns the new state, or null, changing nothing, when the row was no
 * longer pending.
 */
export function markEmailFailed(db: Db, clock: Clock, id: string, error: string, options: FailureOptions = {}): EmailFailure | null {
  return inTransaction(db, () => {
    const email = existingEmail(db, id, 'markEmailFailed');
    if (email.status !== 'pending') return null;
    const attempts = email.attempts + 1;
    const now = clock.now();
    const status: EmailStatus = options.permanent === true || attempts >= MAX_ATTEMPTS ? 'failed' : 'pending';
    const nextAttemptAt = status === 'failed' ? now.toISOString() : new Date(now.getTime() + retryDelayMs(attempts)).toISOString();
    const { changes } = run(
      db,
      `UPDATE email_outbox SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?, claimed_until = NULL WHERE id = ? AND status = 'pending'`,
      status,
      attempts,
      nextAttemptAt,
      truncateChars(error, MAX_ERROR_CHARS),
      id,
    );
    if (changes !== 1) throw new Error(`markEmailFailed: expected to update email ${id}`);
    return { attempts, status, nextAttemptAt };
  });
}

/** The first `max` characters (code points, as SQLite counts them), never half a surrogate pair. */
function truncateChars(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('');
}

/** The ids of an invoice's emails still waiting to go out (the ones a send or a reminder just wrote among them). */
export function pendingEmailIds(db: Db, invoiceId: string): string[] {
  return all<{ id: string }>(db, "SELECT id FROM email_outbox WHERE invoice_id = ? AND status = 'pending' ORDER BY created_at, id LIMIT ?", invoiceId, DUE_BATCH_LIMIT).map(
    (row) => row.id,
  );
}
