import { emailsDue, markEmailFailed, markEmailSent, type OutboxEmail } from '../books/outbox.js';
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
 * Each email is claimed before it is sent: a request's delivery after its commit and the job
 * pool's retries run in the same process (one server per books file, src/db/server-lock.ts),
 * so a claim held in memory is enough for no two deliveries to send one email.
 *
 * Residual window: a crash (or a database error) after the server accepted an email but before
 * markEmailSent leaves the row pending, so the next start sends that email again. At-least-once
 * across a crash is accepted: SMTP gives no way to ask whether a message arrived.
 */
export async function deliverEmails(db: Db, clock: Clock, mailer: Mailer, log: Logger, ids?: readonly string[]): Promise<DeliveryResult> {
  // Awaiting inside a transaction is never safe, and an email must not go out for a write
  // that could still roll back.
  if (db.inTransaction) throw new Error('deliverEmails: must not run inside a transaction');
  const result: DeliveryResult = { sent: 0, failed: 0 };
  for (const email of emailsDue(db, clock, ids)) {
    const release = claim(db, email.id);
    if (!release) continue;
    try {
      await deliverOne(db, clock, mailer, log, email, result);
    } finally {
      release();
    }
  }
  return result;
}

/** Emails being sent right now, per books connection. */
const claimed = new WeakMap<Db, Set<string>>();

/** Claims an email for one delivery; null when another delivery holds it. Returns the release. */
function claim(db: Db, id: string): (() => void) | null {
  let ids = claimed.get(db);
  if (!ids) {
    ids = new Set();
    claimed.set(db, ids);
  }
  if (ids.has(id)) return null;
  ids.add(id);
  const held = ids;
  return () => held.delete(id);
}

async function deliverOne(db: Db, clock: Clock, mailer: Mailer, log: Logger, email: OutboxEmail, result: DeliveryResult): Promise<void> {
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
    return;
  }
  if (!markEmailSent(db, clock, email.id)) {
    log.warn({ emailId: email.id }, 'email sent, but another delivery had already settled it');
  }
  result.sent += 1;
}

/** The error's code and message, for last_error and the log; never the message that failed. */
function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && code !== '' ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
