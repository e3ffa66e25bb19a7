import { expect } from 'chai';
import type { Business } from '../../src/books/businesses.js';
import { newId } from '../../src/ids.js';
import { nowIso } from '../../src/clock.js';
import { type BankImportResult, importBankStatement } from '../../src/books/import/bank-import.js';
import { parseStatement } from '../../src/books/import/statement.js';
import { ledgerTotals } from '../../src/books/ledger.js';
import type { ApiTenant } from './api.js';
import type { TestApp, TestResponse } from './app.js';
import { accountIdByName, TEST_ACTOR } from './factories.js';
import { addTransactionRow, withQuery } from './register.js';

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

/** An item of GET /review-queue, as the statement tests read it. */
export interface QueueItem {
  id: string;
  date: string;
  amount: { cents: string };
  vendor: string | null;
  description: string | null;
  proposedAccountId: string | null;
  proposedAccount: string | null;
  confidence: number | null;
  rationale: string | null;
}

export interface QueueBody {
  hasMore: boolean;
  highConfidence: QueueItem[];
  needsReview: QueueItem[];
}

const STATEMENT_HEADER = 'date,description,amount,vendor';

/**
 * A business's bank statement and its queue, for tests that import with the real parser and
 * importer (what `daybook import bank` runs) and read and accept over HTTP. `current` gives the
 * suite's app and tenant of the running test.
 */
export function statementQueue(current: () => { app: TestApp; tenant: ApiTenant }) {
  return {
    /** Imports rows of `date,description,amount,vendor` (no header). */
    importRows(...rows: string[]): BankImportResult {
      const { app, tenant } = current();
      return importBankStatement(app.db, app.clock, TEST_ACTOR, {
        businessId: tenant.business.id,
        fileName: 'statement.csv',
        rows: parseStatement(Buffer.from([STATEMENT_HEADER, ...rows].join('\n'))),
      });
    },
    async getQueue(): Promise<QueueBody> {
      const { app, tenant } = current();
      const res = await app.get(withQuery('/api/v1/review-queue', { limit: 100 }), tenant.key);
      expect(res.status, res.text).to.equal(200);
      return res.body as QueueBody;
    },
    everyItem(queue: QueueBody): QueueItem[] {
      return [...queue.highConfidence, ...queue.needsReview];
    },
    accept(itemId: string, body: Record<string, unknown> = {}): Promise<TestResponse> {
      const { app, tenant } = current();
      return app.post(`/api/v1/review-queue/${itemId}/accept`, tenant.key, body);
    },
    /** Debits and credits of both views are equal. */
    expectBooksBalance(): void {
      const { app, tenant } = current();
      for (const view of ['accrual', 'cash'] as const) {
        const totals = ledgerTotals(app.db, tenant.business.id, view);
        expect(totals.debitCents, `${view} view`).to.equal(totals.creditCents);
      }
    },
  };
}
