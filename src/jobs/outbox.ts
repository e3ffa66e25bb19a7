import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { deliverEmails, type DeliveryResult } from '../email/deliver.js';
import type { Mailer } from '../email/mailer.js';
import type { Logger } from '../log.js';

export interface OutboxContext {
  db: Db;
  clock: Clock;
  mailer: Mailer;
  log: Logger;
}

/**
 * Delivers the outbox's due emails: the ones a request could not deliver after its commit
 * (the mail server was down), each retried on its backoff schedule until it goes or fails.
 * The result, { sent, failed, retrying }, is what `daybook jobs list` shows as the last
 * result: failed counts the emails given up on in this run (refused for good, or out of
 * attempts), retrying the ones that stay pending for a later run. Each email is claimed in
 * the books before it is sent, so this job, the server's own run of it and a request's
 * delivery never send one email twice.
 */
export function runOutboxDelivery(context: OutboxContext): Promise<DeliveryResult> {
  return deliverEmails(context.db, context.clock, context.mailer, context.log);
}
