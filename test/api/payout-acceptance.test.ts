import { expect } from 'chai';
import { connectCardProcessor, disconnectCardProcessor, findCardProcessor } from '../../src/books/card-processors.js';
import { type BankImportResult, importBankStatement } from '../../src/books/import/bank-import.js';
import { parseStatement } from '../../src/books/import/statement.js';
import { ledgerTotals } from '../../src/books/ledger.js';
import { lockPeriod } from '../../src/books/periods.js';
import { inTransaction } from '../../src/db/connection.js';
import { type FakeStripe, startFakeStripe } from '../../src/testing/fake-stripe.js';
import { countRows, expectError, expectInvalid } from '../support/api.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { accountIdByName, accountIdByRole, TEST_ACTOR } from '../support/factories.js';
import { type Books, issueInvoice, newBooks } from '../support/invoicing.js';
import { withQuery } from '../support/register.js';
import type { QueueBody, QueueItem } from '../support/review.js';

/**
 * A card processor's payout, from the bank statement to the books: a card payment leaves the
 * gross less the fee in Card Payments Clearing; the payout that later lands in the bank is
 * imported (`daybook import bank`), waits in the review queue proposed to the clearing account,
 * and accepting it (POST /review-queue/{id}/accept) debits the bank and credits the clearing
 * account by the payout. The clearing account is the only account a payout may be booked to,
 * and money out still may not be booked there. Through the real app, the real importer, and the
 * loopback stand-in for the processor.
 */

const SECRET_KEY = 'sk_test_51PayoutAcceptanceTest000000';
const WEBHOOK_SECRET = 'whsec_payoutAcceptanceTestSecret0';
/** The card payment is taken on 2026-03-16 ... */
const PAID_AT = '2026-03-16T08:00:00.000Z';
/** ... and the statement holding its payout is imported four days later. */
const IMPORTED_AT = '2026-03-20T09:00:00.000Z';
const PAYOUT_ROW = '2026-03-18,STRIPE TRANSFER ST-Q4R7T2,970.70,';
const PAYOUT_RATIONALE = "'STRIPE TRANSFER ST-Q4R7T2' reads as a Stripe payout: it moves what card payments left in the clearing account to the bank.";

interface Line {
  account: string;
  direction: string;
  cents: bigint;
  basis: string;
}

describe('a card processor payout is accepted to Card Payments Clearing', () => {
  let fake: FakeStripe;
  let app: TestApp;
  before(async () => {
    fake = await startFakeStripe();
    fake.now = () => Date.parse(PAID_AT) / 1000;
    app = await startTestApp(PAID_AT, { config: { stripeApiUrl: fake.url, stripeCheckoutOrigin: fake.checkoutOrigin } });
  });
  after(async () => {
    await app.close();
    await fake.close();
  });
  beforeEach(() => {
    app.clock.set(IMPORTED_AT);
  });

  /** Books of a business connected to the processor. */
  function connected(): Books & { endpointId: string } {
    const books = newBooks(app);
    inTransaction(app.db, () => connectCardProcessor(app.db, app.clock, TEST_ACTOR, books.businessId, { secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET }));
    return { ...books, endpointId: findCardProcessor(app.db, books.businessId)!.endpointId };
  }

  /** A $1,000.00 invoice paid by card on 2026-03-16: Card Payments Clearing then holds $970.70 (the gross less the fee). */
  async function paidByCard(books: Books & { endpointId: string }): Promise<void> {
    app.clock.set(PAID_AT);
    const invoice = await issueInvoice(app, books);
    const checkout = await app.request('POST', `/pay/${invoice.token}/checkout`);
    expect(checkout.status).to.equal(303);
    const sessionId = new URL(checkout.headers.location as string).pathname.split('/').pop()!;
    const status = await fake.deliver({ url: `${app.url}/webhooks/stripe/${books.endpointId}`, secret: WEBHOOK_SECRET }, fake.pay(sessionId));
    expect(status).to.equal(200);
    for (const view of ['accrual', 'cash'] as const) expect(balance(books, 'card_clearing', view), view).to.equal(97_070n);
    app.clock.set(IMPORTED_AT);
  }

  /** Imports statement rows (`date,description,amount,vendor`, no header) with the real parser and importer. */
  const importRows = (books: Books, ...rows: string[]): BankImportResult =>
    importBankStatement(app.db, app.clock, TEST_ACTOR, {
      businessId: books.businessId,
      fileName: 'statement.csv',
      rows: parseStatement(Buffer.from(['date,description,amount,vendor', ...rows].join('\n'))),
    });

  const getQueue = async (books: Books): Promise<QueueBody> => {
    const res = await app.get(withQuery('/api/v1/review-queue', { entityId: books.businessId, limit: 100 }), books.key);
    expect(res.status, res.text).to.equal(200);
    return res.body as QueueBody;
  };
  const everyItem = (queue: QueueBody): QueueItem[] => [...queue.highConfidence, ...queue.needsReview];
  const queuedItem = async (books: Books, description: string): Promise<QueueItem> => {
    const found = everyItem(await getQueue(books)).filter((item) => item.description === description);
    expect(found, `queued items described ${description}`).to.have.length(1);
    return found[0]!;
  };

  const accept = (books: Books, itemId: string, body: Record<string, unknown> = {}): Promise<TestResponse> =>
    app.post(`/api/v1/review-queue/${itemId}/accept`, books.key, body);
  const expectAccepted = (res: TestResponse): void => {
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ ok: true });
  };

  const clearingId = (books: Books): string => accountIdByRole(app.db, books.businessId, 'card_clearing');

  /** Debits less credits of the account holding `role`, in one view of the books. */
  const balance = (books: Books, role: 'card_clearing' | 'bank', view: 'accrual' | 'cash' = 'accrual'): bigint =>
    BigInt(
      (
        app.db
          .prepare(
            `SELECT coalesce(sum(CASE WHEN direction = 'debit' THEN amount_cents ELSE -amount_cents END), 0) AS net
             FROM journal_lines WHERE ledger_account_id = ? AND basis IN ('both', ?)`,
          )
          .get(accountIdByRole(app.db, books.businessId, role), view) as { net: bigint }
      ).net,
    );

  const entriesOf = (itemId: string) =>
    app.db
      .prepare("SELECT id, entry_date, memo FROM journal_entries WHERE source_type = 'review_accept' AND source_id = ?")
      .all(itemId) as Array<{ id: string; entry_date: string; memo: string | null }>;
  const linesOf = (entryId: string): Line[] =>
    app.db
      .prepare(
        `SELECT a.name AS account, l.direction, l.amount_cents AS cents, l.basis FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
         WHERE l.entry_id = ? ORDER BY l.line_no`,
      )
      .all(entryId) as Line[];
  const transactionOf = (description: string, books: Books) =>
    app.db
      .prepare('SELECT id, direction, status, ledger_account_id, journal_entry_id, vendor_id, rationale FROM transactions WHERE business_id = ? AND description = ?')
      .get(books.businessId, description) as { id: string; direction: string; status: string; ledger_account_id: string | null; journal_entry_id: string | null; vendor_id: string | null; rationale: string | null };

  /** What an accept may write: entries, lines, audit rows, settled items and transactions. */
  const written = (books: Books) => ({
    entries: countRows(app.db, 'SELECT count(*) FROM journal_entries WHERE business_id = ?', books.businessId),
    lines: countRows(app.db, 'SELECT count(*) FROM journal_lines WHERE business_id = ?', books.businessId),
    audit: countRows(app.db, 'SELECT count(*) FROM audit_log WHERE business_id = ?', books.businessId),
    accepted: countRows(app.db, 'SELECT count(*) FROM review_queue_items WHERE business_id = ? AND accepted_at IS NOT NULL', books.businessId),
    pending: countRows(app.db, "SELECT count(*) FROM transactions WHERE business_id = ? AND status = 'pending'", books.businessId),
  });

  const expectBooksBalance = (books: Books): void => {
    for (const view of ['accrual', 'cash'] as const) {
      const totals = ledgerTotals(app.db, books.businessId, view);
      expect(totals.debitCents, `${view} view`).to.equal(totals.creditCents);
    }
  };

  describe('accepting', () => {
    it('queues the payout proposed to Card Payments Clearing; accepting it there debits the bank and credits the clearing account, which goes down by the payout', async () => {
      const books = connected();
      await paidByCard(books);
      const bankBefore = balance(books, 'bank');

      const result = importRows(books, PAYOUT_ROW, '2026-03-18,WIRE FROM NORTHWIND LLC,500.00,', '2026-03-19,STAPLES 0042 PORTLAND OR,-45.99,Staples');
      expect(result).to.include({ rows: 3, imported: 3, queued: 2, moneyIn: 1, duplicates: 0, alreadyRecorded: 0 });

      const queue = await getQueue(books);
      expect(queue.highConfidence.map((item) => item.description), 'a payout read from words alone waits for a look').to.not.include('STRIPE TRANSFER ST-Q4R7T2');
      const payout = await queuedItem(books, 'STRIPE TRANSFER ST-Q4R7T2');
      expect(queue.needsReview.map((item) => item.id)).to.include(payout.id);
      expect(payout).to.deep.include({
        date: '2026-03-18',
        vendor: null,
        proposedAccountId: clearingId(books),
        proposedAccount: 'Card Payments Clearing',
        confidence: 0.7,
        rationale: PAYOUT_RATIONALE,
      });
      expect(payout.amount.cents).to.equal('97070');
      const waiting = transactionOf('STRIPE TRANSFER ST-Q4R7T2', books);
      expect(waiting).to.deep.include({ direction: 'in', status: 'pending', ledger_account_id: null, journal_entry_id: null, vendor_id: null, rationale: PAYOUT_RATIONALE });
      expect(transactionOf('WIRE FROM NORTHWIND LLC', books)).to.deep.include({ direction: 'in', status: 'uncategorized' });

      expectAccepted(await accept(books, payout.id, { accountId: clearingId(books) }));

      const entries = entriesOf(payout.id);
      expect(entries).to.have.length(1);
      expect(entries[0]).to.deep.include({ entry_date: '2026-03-18', memo: 'STRIPE TRANSFER ST-Q4R7T2' });
      expect(linesOf(entries[0]!.id)).to.deep.equal([
        { account: 'Business Checking', direction: 'debit', cents: 97_070n, basis: 'both' },
        { account: 'Card Payments Clearing', direction: 'credit', cents: 97_070n, basis: 'both' },
      ]);
      for (const view of ['accrual', 'cash'] as const) expect(balance(books, 'card_clearing', view), `clearing, ${view} view`).to.equal(0n);
      expect(balance(books, 'bank') - bankBefore).to.equal(97_070n);
      expectBooksBalance(books);

      expect(transactionOf('STRIPE TRANSFER ST-Q4R7T2', books)).to.deep.include({ status: 'accepted', ledger_account_id: clearingId(books), journal_entry_id: entries[0]!.id });
      const audit = app.db
        .prepare("SELECT actor_type, detail_json FROM audit_log WHERE action = 'review.accept' AND subject_type = 'review_item' AND subject_id = ?")
        .all(payout.id) as Array<{ actor_type: string; detail_json: string }>;
      expect(audit).to.have.length(1);
      expect(audit[0]!.actor_type).to.equal('api_key');
      expect(JSON.parse(audit[0]!.detail_json)).to.deep.equal({ transactionId: waiting.id, accountId: clearingId(books), proposedAccountId: clearingId(books), status: 'accepted' });

      expect(everyItem(await getQueue(books)).map((item) => item.description)).to.deep.equal(['STAPLES 0042 PORTLAND OR']);
      const register = await app.get(withQuery('/api/v1/transactions', { entityId: books.businessId, dateFrom: '2026-03-18', dateTo: '2026-03-18' }), books.key);
      expect(register.status, register.text).to.equal(200);
      const shown = (register.body.transactions as Array<{ account: string | null; status: string; amount: { cents: string } }>).map((t) => [t.account, t.status, t.amount.cents]);
      expect(shown).to.have.deep.members([
        ['Card Payments Clearing', 'accepted', '97070'],
        [null, 'uncategorized', '50000'],
      ]);
    });

    it('books the payout as proposed when no accountId is sent; importing the statement again adds nothing', async () => {
      const books = connected();
      expect(importRows(books, PAYOUT_ROW)).to.include({ imported: 1, queued: 1, moneyIn: 0 });
      const payout = await queuedItem(books, 'STRIPE TRANSFER ST-Q4R7T2');
      expectAccepted(await accept(books, payout.id));
      expect(linesOf(entriesOf(payout.id)[0]!.id)).to.deep.equal([
        { account: 'Business Checking', direction: 'debit', cents: 97_070n, basis: 'both' },
        { account: 'Card Payments Clearing', direction: 'credit', cents: 97_070n, basis: 'both' },
      ]);
      expect(balance(books, 'card_clearing')).to.equal(-97_070n);
      expect(transactionOf('STRIPE TRANSFER ST-Q4R7T2', books).status).to.equal('accepted');

      expect(importRows(books, PAYOUT_ROW)).to.include({ imported: 0, duplicates: 1, queued: 0, moneyIn: 0 });
      expect(everyItem(await getQueue(books))).to.deep.equal([]);
    });
  });

  describe('refusals', () => {
    /** A connected business with the payout waiting in the queue. */
    const withPayout = async (): Promise<{ books: Books & { endpointId: string }; itemId: string }> => {
      const books = connected();
      importRows(books, PAYOUT_ROW);
      return { books, itemId: (await queuedItem(books, 'STRIPE TRANSFER ST-Q4R7T2')).id };
    };
    const expectStillWaiting = async (books: Books, itemId: string): Promise<void> => {
      expect(entriesOf(itemId)).to.deep.equal([]);
      expect(transactionOf('STRIPE TRANSFER ST-Q4R7T2', books)).to.deep.include({ status: 'pending', ledger_account_id: null, journal_entry_id: null });
      expect(everyItem(await getQueue(books)).map((item) => item.id)).to.include(itemId);
    };

    for (const name of [
      'Office Supplies',
      'Uncategorized Expense',
      'Payment Processing Fees',
      'Business Checking',
      'Business Savings',
      'Service Revenue',
      'Other Income',
      'Accounts Receivable',
      'Customer Deposits',
    ]) {
      it(`refuses to book a payout to ${name} (422 "accountId: is not Card Payments Clearing"), writing nothing`, async () => {
        const { books, itemId } = await withPayout();
        const before = written(books);
        const res = await accept(books, itemId, { accountId: accountIdByName(app.db, books.businessId, name) });
        expectInvalid(res, 'accountId');
        expect(res.body.error.message).to.equal(
          `accountId: is not Card Payments Clearing (${clearingId(books)}): this bank line is money in, a card processor's payout, and is booked only to that account`,
        );
        expect(written(books)).to.deep.equal(before);
        await expectStillWaiting(books, itemId);
      });
    }

    it('refuses another business\'s clearing account (404 not_found "accountId:"), writing nothing', async () => {
      const { books, itemId } = await withPayout();
      const other = newBooks(app);
      const before = written(books);
      expectError(await accept(books, itemId, { accountId: clearingId(other) }), 404, 'not_found', 'accountId:');
      expect(written(books)).to.deep.equal(before);
      await expectStillWaiting(books, itemId);
    });

    it('refuses a payout dated in a period closed after it was queued (409 period_locked); the item stays', async () => {
      const { books, itemId } = await withPayout();
      lockPeriod(app.db, app.clock, TEST_ACTOR, books.businessId, '2026-03-18');
      const before = written(books);
      expectError(await accept(books, itemId, { accountId: clearingId(books) }), 409, 'period_locked');
      expect(written(books)).to.deep.equal(before);
      await expectStillWaiting(books, itemId);
    });

    it('refuses a second accept (409 conflict); the first booking stands', async () => {
      const { books, itemId } = await withPayout();
      expectAccepted(await accept(books, itemId, { accountId: clearingId(books) }));
      const before = written(books);
      expectError(await accept(books, itemId, { accountId: clearingId(books) }), 409, 'conflict');
      expect(written(books)).to.deep.equal(before);
      expect(balance(books, 'card_clearing')).to.equal(-97_070n);
    });

    it('still refuses to book money out to Card Payments Clearing (422 "accountId:", an account Daybook keeps itself), as before', async () => {
      const books = connected();
      expect(importRows(books, '2026-03-18,STRIPE TRANSFER ST-N3G4T1,-120.00,')).to.include({ queued: 1, moneyIn: 0 });
      const item = await queuedItem(books, 'STRIPE TRANSFER ST-N3G4T1');
      expect(item.proposedAccountId).to.not.equal(clearingId(books));
      const before = written(books);
      const res = await accept(books, item.id, { accountId: clearingId(books) });
      expectInvalid(res, 'accountId');
      expect(res.body.error.message).to.equal('accountId: is an account Daybook keeps itself (card_clearing); choose an expense or asset account');
      expect(written(books)).to.deep.equal(before);
      expect(transactionOf('STRIPE TRANSFER ST-N3G4T1', books)).to.deep.include({ direction: 'out', status: 'pending', journal_entry_id: null });
    });

    it('leaves the payout alone when an expense of the same amount is recorded (POST /expenses matches only money out)', async () => {
      const { books, itemId } = await withPayout();
      const recorded = await app.post('/api/v1/expenses', books.key, {
        entityId: books.businessId,
        date: '2026-03-18',
        amountCents: '97070',
        vendorName: 'Stripe',
        accountId: accountIdByName(app.db, books.businessId, 'Office Supplies'),
      });
      expect(recorded.status, recorded.text).to.equal(201);
      const payout = await queuedItem(books, 'STRIPE TRANSFER ST-Q4R7T2');
      expect(payout).to.deep.include({ id: itemId, proposedAccountId: clearingId(books), confidence: 0.7, rationale: PAYOUT_RATIONALE });
      expect(countRows(app.db, 'SELECT count(*) FROM review_queue_items WHERE id = ? AND recorded_expense_id IS NOT NULL', itemId)).to.equal(0);
    });
  });

  describe('which money in is queued', () => {
    it('queues only lines that read as a Stripe payout; other money in is recorded uncategorised, as before', async () => {
      const books = connected();
      const result = importRows(
        books,
        '2026-03-17,Stripe payout,310.25,',
        '2026-03-17,ORIG CO NAME:STRIPE CO ENTRY DESCR:TRANSFER SEC:CCD,88.10,',
        '2026-03-17,Card sales payout,42.00,Stripe',
        '2026-03-17,WIRE TRANSFER FROM NORTHWIND LLC,500.00,',
        '2026-03-17,Transfer from savings,1500.00,',
        '2026-03-17,STRIPE REFUND OF FEES,3.00,',
      );
      expect(result).to.include({ rows: 6, imported: 6, queued: 3, moneyIn: 3 });
      expect(everyItem(await getQueue(books)).map((item) => [item.description, item.proposedAccount])).to.have.deep.members([
        ['Stripe payout', 'Card Payments Clearing'],
        ['ORIG CO NAME:STRIPE CO ENTRY DESCR:TRANSFER SEC:CCD', 'Card Payments Clearing'],
        ['Card sales payout', 'Card Payments Clearing'],
      ]);
      for (const description of ['WIRE TRANSFER FROM NORTHWIND LLC', 'Transfer from savings', 'STRIPE REFUND OF FEES']) {
        expect(transactionOf(description, books), description).to.deep.include({ direction: 'in', status: 'uncategorized', rationale: null });
      }
      expect(transactionOf('Card sales payout', books).vendor_id, 'a payout has no vendor').to.equal(null);
    });

    it('records a payout as money in, not queued, in a business that takes no card payments', async () => {
      const books = newBooks(app);
      expect(importRows(books, PAYOUT_ROW)).to.include({ imported: 1, queued: 0, moneyIn: 1 });
      expect(everyItem(await getQueue(books))).to.deep.equal([]);
      expect(transactionOf('STRIPE TRANSFER ST-Q4R7T2', books)).to.deep.include({ direction: 'in', status: 'uncategorized', journal_entry_id: null });
    });

    it('still queues the payout of a business disconnected since its card payments were posted: they are what it clears', async () => {
      const books = connected();
      await paidByCard(books);
      inTransaction(app.db, () => disconnectCardProcessor(app.db, app.clock, TEST_ACTOR, books.businessId));
      expect(importRows(books, PAYOUT_ROW)).to.include({ queued: 1, moneyIn: 0 });
      const payout = await queuedItem(books, 'STRIPE TRANSFER ST-Q4R7T2');
      expectAccepted(await accept(books, payout.id));
      expect(balance(books, 'card_clearing')).to.equal(0n);
    });

    it('records a payout dated in a closed period as money in without refusing the file: queued, it could never be accepted', async () => {
      const books = connected();
      lockPeriod(app.db, app.clock, TEST_ACTOR, books.businessId, '2026-03-18');
      expect(importRows(books, PAYOUT_ROW, '2026-03-19,Stripe payout,12.00,')).to.include({ imported: 2, queued: 1, moneyIn: 1 });
      expect(everyItem(await getQueue(books)).map((item) => item.description)).to.deep.equal(['Stripe payout']);
      expect(transactionOf('STRIPE TRANSFER ST-Q4R7T2', books)).to.deep.include({ direction: 'in', status: 'uncategorized' });
    });
  });
});
