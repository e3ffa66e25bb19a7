import { emailsDue, markEmailFailed, markEmailSent } from '../books/outbox.js';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { Logger } from '../log.js';
import type { Mailer } from './mailer.js';

export interface DeliveryResult {
  sent: number;
  failed: number;
}

/**
 * Sends the due outbox emails (all of them, up to DUE_BATCH_LIMIT, or only `ids`), one at a
 * time. An email the server accepted is marked sent; one whose send threw is marked failed, to
 * be retried with backoff (markEmailFailed), and the failure is logged with the email's id and
 * error, never its body. A send failure never makes this throw; a database failure does.
 *
 * Residual window: a crash (or a database error) after the server accepted an email but before
 * markEmailSent leaves the row pending, so the next delivery sends that email again. The same
 * holds for two deliveries racing over one row. Closing it needs rows claimed before sending,
 * which the job pool's retry will add; at-least-once is accepted until then.
 */
export async function deliverEmails(db: Db, clock: Clock, mailer: Mailer, log: Logger, ids?: readonly string[]): Promise<DeliveryResult> {
  // Awaiting inside a transaction is never safe, and an email must not go out for a write
  // that could still roll back.
  if (db.inTransaction) throw new Error('deliverEmails: must not run inside a transaction');
  const result: DeliveryResult = { sent: 0, failed: 0 };
  for (const email of emailsDue(db, clock, ids)) {
    try {
      await mailer.send({ to: email.to, subject: email.subject, text: email.text, html: email.html ?? '' });
    } catch (error) {
      const reason = describeError(error);
      const outcome = markEmailFailed(db, clock, email.id, reason);
      result.failed += 1;
      log.warn(
        { emailId: email.id, attempts: outcome?.attempts, status: outcome?.status, nextAttemptAt: outcome?.nextAttemptAt, error: reason },
        outcome?.status === 'failed' ? 'email not delivered; no more attempts' : 'email not delivered; will retry',
      );
      continue;
    }
    if (!markEmailSent(db, clock, email.id)) {
      log.warn({ emailId: email.id }, 'email sent, but another delivery had already settled it');
    }
    result.sent += 1;
  }
  return result;
}

/** The error's code and message, for last_error and the log; never the message that failed. */
function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && code !== '' ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
