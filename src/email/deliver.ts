import { findInvoice } from '../books/invoices.js';
import { claimEmail, emailsDue, markEmailFailed, markEmailSent, type OutboxEmail } from '../store/outbox.js';
import { payToken } from '../books/pay-links.js';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { Logger } from '../log.js';
import { invoicePdf } from '../pdf/invoice-attachment.js';
import type { MailAttachment, Mailer } from './mailer.js';

export interface DeliveryResult {
  /** Emails the server accepted. */
  sent: number;
  /** Emails marked 'failed' by this run: refused for good, or out of attempts (MAX_ATTEMPTS). */
  failed: number;
  /** Emails whose attempt failed for now and stay pending, due again after their backoff. */
  retrying: number;
}

/**
 * Sends the due outbox emails (all of them, up to DUE_BATCH_LIMIT, or only `ids`), one at a
 * time. An email the server accepted is marked sent. One it refused for good (isPermanentFailure)
 * is marked failed at once, which raises Today's email_failed signal; any other failure is
 * marked for a retry with backoff (markEmailFailed). Each failure is logged with the email's id
 * and error, never its body. A send failure never makes this throw; a database failure does.
 *
 * Each email is claimed in the books file (claimEmail) just before it is sent, and the claim
 * ends when the outcome is marked, so two deliveries never send one email: neither in one
 * process (a request's delivery after its commit and the job pool's) nor in two (the server and
 * `daybook jobs run outbox`).
 *
 * Residual window: a crash (or a database error) after the server accepted an email but before
 * markEmailSent leaves the row pending and claimed. Once the claim lapses (CLAIM_MS) the email
 * is due again and goes a second time. Delivery is at-least-once across a crash only: SMTP gives
 * no way to ask whether a message arrived. The second copy carries the same Message-ID (made
 * from the email's id), so mail systems that drop repeated messages show it once.
 */
export async function deliverEmails(db: Db, clock: Clock, mailer: Mailer, log: Logger, ids?: readonly string[]): Promise<DeliveryResult> {
  // Awaiting inside a transaction is never safe, and an email must not go out for a write
  // that could still roll back.
  if (db.inTransaction) throw new Error('deliverEmails: must not run inside a transaction');
  const result: DeliveryResult = { sent: 0, failed: 0, retrying: 0 };
  for (const email of emailsDue(db, clock, ids)) {
    // Another delivery may have claimed, sent or rescheduled it since the list was read.
    if (!claimEmail(db, clock, email.id)) continue;
    await deliverOne(db, clock, mailer, log, email, result);
  }
  return result;
}

async function deliverOne(db: Db, clock: Clock, mailer: Mailer, log: Logger, email: OutboxEmail, result: DeliveryResult): Promise<void> {
  try {
    const attachments = await attachmentsOrNone(db, log, email);
    await mailer.send({ id: email.id, to: email.to, subject: email.subject, text: email.text, html: email.html ?? '', attachments });
  } catch (error) {
    const reason = describeError(error);
    const permanent = isPermanentFailure(error);
    const outcome = markEmailFailed(db, clock, email.id, reason, { permanent });
    if (outcome === null) {
      log.warn({ emailId: email.id, error: reason }, 'email not delivered, but another delivery had already settled it');
      return;
    }
    if (outcome.status === 'failed') result.failed += 1;
    else result.retrying += 1;
    log.warn(
      { emailId: email.id, attempts: outcome.attempts, status: outcome.status, nextAttemptAt: outcome.nextAttemptAt, permanent, error: reason },
      permanent ? 'email refused by the mail server; no more attempts' : outcome.status === 'failed' ? 'email not delivered; no more attempts' : 'email not delivered; will retry',
    );
    return;
  }
  if (!markEmailSent(db, clock, email.id)) {
    log.warn({ emailId: email.id }, 'email sent, but another delivery had already settled it');
  }
  result.sent += 1;
}

/**
 * An invoice's email (the send's and each reminder's) carries the invoice as a PDF, made at
 * delivery from the invoice as the books hold it then, and linking where the email links.
 */
async function attachmentsFor(db: Db, email: OutboxEmail): Promise<MailAttachment[]> {
  if (email.invoiceId === null) return [];
  const invoice = findInvoice(db, email.invoiceId);
  if (!invoice) throw new Error(`the outbox email ${email.id} names invoice ${email.invoiceId}, which the books do not hold`);
  return [await invoicePdf(db, invoice, emailPayLink(email, payToken(db, invoice.id)))];
}

/**
 * The email goes even when its PDF cannot be made: the invoice's text and pay link are what
 * the customer needs, and a fault that recurs would otherwise hold the email back until its
 * retries ran out. The fault is logged with the email's id.
 */
async function attachmentsOrNone(db: Db, log: Logger, email: OutboxEmail): Promise<MailAttachment[]> {
  try {
    return await attachmentsFor(db, email);
  } catch (error) {
    log.error({ err: error, emailId: email.id, invoiceId: email.invoiceId }, 'invoice PDF not made; the email is sent without it');
    return [];
  }
}

/**
 * The pay link the email itself carries for this invoice (its token is known, so this finds
 * it, never guesses): the PDF then links exactly where the email does, even when the site
 * address changed between writing the email and a retry delivering it.
 */
function emailPayLink(email: OutboxEmail, token: string): string {
  const link = new RegExp(`https?://\\S+/pay/${token}(?![A-Za-z0-9_-])`).exec(email.text)?.[0];
  if (link === undefined) throw new Error(`the outbox email ${email.id} carries no pay link for its invoice`);
  return link;
}

/** The SMTP commands whose refusal is about this email (its recipient, its content), not about the server or our settings. */
const MESSAGE_COMMANDS: ReadonlySet<string> = new Set(['RCPT TO', 'DATA']);

/**
 * Whether a send failure is final for this email, judged by nodemailer's codes, never its text:
 * a 5xx reply to RCPT TO or DATA (the server will not take this recipient or this message,
 * RFC 5321 4.2.1), or an envelope nodemailer itself refused without asking the server
 * (EENVELOPE with no reply code: an address it cannot use). Everything else is retried: a 4xx
 * (greylisting, a full mailbox, a busy server, even on RCPT TO), a refused or dropped
 * connection, a timeout, and a 5xx to the greeting, the login or MAIL FROM, which refuse every
 * email alike (a settings problem: once fixed, the retries deliver).
 */
export function isPermanentFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, responseCode, command } = error as { code?: unknown; responseCode?: unknown; command?: unknown };
  if (typeof responseCode === 'number') {
    return responseCode >= 500 && responseCode <= 599 && typeof command === 'string' && MESSAGE_COMMANDS.has(command);
  }
  return code === 'EENVELOPE';
}

/** The error's code and message, for last_error and the log; never the message that failed. */
function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && code !== '' ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
