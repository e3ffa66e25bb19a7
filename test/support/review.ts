import { expect } from 'chai';
import type { Business } from '../../src/books/businesses.js';
import { newId } from '../../src/books/ids.js';
import { nowIso } from '../../src/clock.js';
import type { TestApp } from './app.js';
import { accountIdByName } from './factories.js';
import { addTransactionRow } from './register.js';

/**
 * Puts items in the review queue as a bank import leaves them, with the proposal the test
 * chooses (test/api/review-import.test.ts runs the real importer end to end): a transactions row (source csv, status pending, direction out, no account or entry,
 * the proposal's rationale) and a review_queue_items row holding the categoriser's proposal,
 * both recorded at the app clock's now.
 */

export interface QueuedItemInput {
  date: string;
  amountCents: bigint;
  vendorId?: string | null;
  description?: string | null;
  /** The proposed account by name (default Office Supplies); null for no proposal. */
  proposedAccount?: string | null;
  /** Default 0.95; null when the categoriser never scored the item. */
  confidence?: number | null;
  rationale?: string | null;
}

export interface QueuedItem {
  itemId: string;
  transactionId: string;
  proposedAccountId: string | null;
}

export function queueReviewItem(app: TestApp, business: Business, input: QueuedItemInput): QueuedItem {
  const rationale = input.rationale === undefined ? 'Matches earlier bookings for this vendor.' : input.rationale;
  const transactionId = addTransactionRow(app, business, {
    date: input.date,
    amountCents: input.amountCents,
    status: 'pending',
    source: 'csv',
    vendorId: input.vendorId ?? null,
    description: input.description === undefined ? null : input.description,
    // The import keeps the proposal's rationale on the transaction too.
    rationale,
  });
  const proposal = input.proposedAccount === undefined ? 'Office Supplies' : input.proposedAccount;
  const proposedAccountId = proposal === null ? null : accountIdByName(app.db, business.id, proposal);
  const itemId = newId();
  app.db
    .prepare(
      `INSERT INTO review_queue_items (id, business_id, transaction_id, proposed_account_id, confidence, rationale, accepted_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL, ?)`,
    )
    .run(
      itemId,
      business.id,
      transactionId,
      proposedAccountId,
      input.confidence === undefined ? 0.95 : input.confidence,
      rationale,
      nowIso(app.clock),
    );
  const direction = (app.db.prepare('SELECT direction FROM transactions WHERE id = ?').get(transactionId) as { direction: string }).direction;
  expect(direction, 'a queued bank row is money going out').to.equal('out');
  return { itemId, transactionId, proposedAccountId };
}

/** When the item was accepted (null while it waits). */
export function acceptedAt(app: TestApp, itemId: string): string | null {
  const row = app.db.prepare('SELECT accepted_at FROM review_queue_items WHERE id = ?').get(itemId) as { accepted_at: string | null } | undefined;
  expect(row, `review item ${itemId}`).to.not.equal(undefined);
  return row!.accepted_at;
}
