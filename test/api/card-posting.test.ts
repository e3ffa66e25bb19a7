import { expect } from 'chai';
import { connectCardProcessor, findCardProcessor } from '../../src/books/card-processors.js';
import { setRate } from '../../src/books/fx.js';
import { lockPeriod } from '../../src/books/periods.js';
import { inTransaction } from '../../src/db/connection.js';
import { CLI_ACTOR } from '../../src/store/audit.js';
import { type FakeStripe, startFakeStripe } from '../../src/testing/fake-stripe.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { TEST_ACTOR } from '../support/factories.js';
import { addBilledCustomer, type Books, createInvoice, getInvoice, invoiceBody, invoiceLine, type IssuedInvoice, issueInvoice, newBooks, payInvoice, sendInvoice } from '../support/invoicing.js';
import { disconnectCardProcessor } from '../../src/books/card-processors.js';
import { setTenant } from '../support/api.js';

/**
 * Card payments reach the books (issue: card payments through Stripe Checkout): a paid
 * Checkout Session, however Daybook learns of it (the webhook, the return page, the
 * card-payments job), is posted once as a payment of method `stripe`: the clearing account
 * receives the US dollars the processor credited, the fee is an expense against it, the
 * receivable is relieved with any difference realised FX, and what the invoice no longer owed
 * goes to Customer Deposits. What cannot be posted yet stays received, on Today, and the job
 * posts it when the blocker clears. Against the loopback fake of the processor, with the
 * official SDK.
 */

const SECRET_KEY = 'sk_test_51CardPostingTest00000000000';
const WEBHOOK_SECRET = 'whsec_cardPostingTestSecret000000';
const NOW = '2026-03-16T08:00:00.000Z';
const NOW_SECONDS = Date.parse(NOW) / 1000;

interface Connected extends Books {
  endpointId: string;
}

interface Line {
  account: string;
  direction: string;
  cents: bigint;
  basis: string;
}

describe('card payments are posted once, as the money really is', () => {
  let fake: FakeStripe;
  let app: TestApp;
  before(async () => {
    fake = await startFakeStripe();
    fake.now = () => NOW_SECONDS;
    app = await startTestApp(NOW, { config: { stripeApiUrl: fake.url, stripeCheckoutOrigin: fake.checkoutOrigin } });
  });
  after(async () => {
    await app.close();
    await fake.close();
  });

  function connected(): Connected {
    const books = newBooks(app);
    inTransaction(app.db, () => connectCardProcessor(app.db, app.clock, TEST_ACTOR, books.businessId, { secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET }));
    return { ...books, endpointId: findCardProcessor(app.db, books.businessId)!.endpointId };
  }

  /** Presses "Pay by card": the session the processor made. */
  async function startCheckout(invoice: IssuedInvoice): Promise<string> {
    const res = await app.request('POST', `/pay/${invoice.token}/checkout`);
    expect(res.status).to.equal(303);
    return new URL(res.headers.location as string).pathname.split('/').pop()!;
  }

  const webhook = (books: Connected) => ({ url: `${app.url}/webhooks/stripe/${books.endpointId}`, secret: WEBHOOK_SECRET });

  const cardPayment = (sessionId: string) =>
    app.db
      .prepare(
        'SELECT state, received_via, gross_usd_cents, fee_usd_cents, applied_cents, deposit_usd_cents, settlement_currency, payment_id, journal_entry_id FROM card_payments WHERE session_id = ?',
      )
      .get(sessionId) as Record<string, unknown>;

  const linesOf = (entryId: unknown): Line[] =>
    app.db
      .prepare(
        `SELECT a.name AS account, l.direction, l.amount_cents AS cents, l.basis FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
         WHERE l.entry_id = ? ORDER BY l.line_no`,
      )
      .all(entryId) as Line[];

  /** Debits minus credits of one account, in one view of the books. */
  const balance = (businessId: string, account: string, view: 'accrual' | 'cash') =>
    (
      app.db
        .prepare(
          `SELECT coalesce(sum(CASE WHEN l.direction = 'debit' THEN l.amount_cents ELSE -l.amount_cents END), 0) AS net
           FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
           WHERE l.business_id = ? AND a.name = ? AND l.basis IN ('both', ?)`,
        )
        .get(businessId, account, view) as { net: bigint }
    ).net;

  const signals = async (books: Books) => {
    const res = await app.get(`/api/v1/today?entityId=${books.businessId}`, books.key);
    expect(res.status).to.equal(200);
    return (res.body as { signals: { severity: string; sentence: string; action: string }[] }).signals;
  };
  const WAITING = /is received but not in the books/;

  it('posts a USD invoice paid in full by webhook: gross to clearing, the fee an expense against it, the receivable relieved', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const sessionId = await startCheckout(invoice);
    const status = await fake.deliver(webhook(books), fake.pay(sessionId));
    expect(status).to.equal(200);

    const posted = cardPayment(sessionId);
    expect(posted).to.include({ state: 'posted', received_via: 'webhook', gross_usd_cents: 100_000n, fee_usd_cents: 2_930n, applied_cents: 100_000n, deposit_usd_cents: 0n, settlement_currency: 'USD' });
    expect(linesOf(posted.journal_entry_id)).to.deep.equal([
      { account: 'Card Payments Clearing', direction: 'debit', cents: 100_000n, basis: 'both' },
      { account: 'Accounts Receivable', direction: 'credit', cents: 100_000n, basis: 'accrual' },
      { account: 'Service Revenue', direction: 'credit', cents: 100_000n, basis: 'cash' },
      { account: 'Payment Processing Fees', direction: 'debit', cents: 2_930n, basis: 'both' },
      { account: 'Card Payments Clearing', direction: 'credit', cents: 2_930n, basis: 'both' },
    ]);
    const detail = await getInvoice(app, books.key, invoice.id);
    expect(detail.status).to.equal('paid');
    expect(detail.payments.map((payment) => ({ method: payment.method, amount: payment.amount.cents, paidAt: payment.paidAt }))).to.deep.equal([
      { method: 'stripe', amount: '100000', paidAt: '2026-03-16' },
    ]);
    // What the processor will pay out: the gross less its fee.
    expect(balance(books.businessId, 'Card Payments Clearing', 'accrual')).to.equal(97_070n);
    expect(balance(books.businessId, 'Accounts Receivable', 'accrual')).to.equal(0n);
    const audit = app.db.prepare("SELECT actor_type, actor_name FROM audit_log WHERE action = 'card_payment.post' AND subject_id = ?").all(invoice.id);
    expect(audit).to.deep.equal([{ actor_type: 'webhook', actor_name: 'stripe' }]);
  });

  it('posts a EUR invoice at what the processor credited in USD: the difference to the receivable is realised FX, in both bases', async () => {
    setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-15', usdPerUnit: '1.08' });
    const books = connected();
    const invoice = await issueInvoice(app, books, { currency: 'EUR' });
    const sessionId = await startCheckout(invoice);
    // €1,000.00 credited as $1,100.00 (the processor's rate 1.1), fee $32.20.
    await fake.deliver(webhook(books), fake.pay(sessionId, { exchangeRate: 1.1, feeCents: 3_220 }));
    const posted = cardPayment(sessionId);
    expect(posted).to.include({ state: 'posted', gross_usd_cents: 110_000n, fee_usd_cents: 3_220n, applied_cents: 100_000n });
    expect(linesOf(posted.journal_entry_id)).to.deep.equal([
      { account: 'Card Payments Clearing', direction: 'debit', cents: 110_000n, basis: 'both' },
      { account: 'Accounts Receivable', direction: 'credit', cents: 108_000n, basis: 'accrual' },
      { account: 'Realized FX Gain or Loss', direction: 'credit', cents: 2_000n, basis: 'accrual' },
      { account: 'Service Revenue', direction: 'credit', cents: 110_000n, basis: 'cash' },
      { account: 'Payment Processing Fees', direction: 'debit', cents: 3_220n, basis: 'both' },
      { account: 'Card Payments Clearing', direction: 'credit', cents: 3_220n, basis: 'both' },
    ]);
    const payment = app.db.prepare('SELECT usd_per_unit, usd_cents, receivable_usd_cents FROM invoice_payments WHERE id = ?').get(posted.payment_id);
    expect(payment).to.deep.equal({ usd_per_unit: '1.1', usd_cents: 110_000n, receivable_usd_cents: 108_000n });
    for (const view of ['accrual', 'cash'] as const) expect(balance(books.businessId, 'Card Payments Clearing', view), view).to.equal(106_780n);
  });

  it('records a payment once however it arrives: the same event twice, racing the return page and the job', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const sessionId = await startCheckout(invoice);
    const completed = fake.pay(sessionId);
    const [first, second, page] = await Promise.all([
      fake.deliver(webhook(books), completed),
      fake.deliver(webhook(books), completed),
      app.get(`${invoice.payPath}/return?session_id=${sessionId}`),
    ]);
    expect([first, second, page.status]).to.deep.equal([200, 200, 200]);
    await app.runJob('card-payments');
    expect(app.db.prepare('SELECT count(*) AS n FROM invoice_payments WHERE invoice_id = ?').get(invoice.id)).to.deep.equal({ n: 1n });
    expect(app.db.prepare('SELECT count(*) AS n FROM card_payments WHERE invoice_id = ?').get(invoice.id)).to.deep.equal({ n: 1n });
    expect((await getInvoice(app, books.key, invoice.id)).status).to.equal('paid');
    expect(balance(books.businessId, 'Card Payments Clearing', 'accrual')).to.equal(97_070n);
  });

  it('records a payment the webhook never brought when the customer returns, and shows the paid page', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const sessionId = await startCheckout(invoice);
    fake.pay(sessionId);
    const page = await app.get(`${invoice.payPath}/return?session_id=${sessionId}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.match(/Paid/);
    expect(page.text).to.not.match(/by card<\/button>/);
    expect(cardPayment(sessionId)).to.include({ state: 'posted', received_via: 'return' });
    const audit = app.db.prepare("SELECT action, actor_type FROM audit_log WHERE action LIKE 'card_payment.%' AND subject_id = ? ORDER BY id").all(invoice.id);
    expect(audit).to.deep.equal([
      { action: 'card_payment.receive', actor_type: 'pay_page' },
      { action: 'card_payment.post', actor_type: 'pay_page' },
    ]);
  });

  it('trusts nothing in the return address: an unpaid session, or a session of another invoice, records nothing', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const other = await issueInvoice(app, books);
    const unpaid = await startCheckout(invoice);
    const othersSession = await startCheckout(other);
    fake.pay(othersSession);
    for (const sessionId of [unpaid, othersSession, 'cs_test_unknown', '../../v1/balance']) {
      const page = await app.get(`${invoice.payPath}/return?session_id=${encodeURIComponent(sessionId)}`);
      expect(page.status, sessionId).to.equal(200);
    }
    expect(app.db.prepare('SELECT count(*) AS n FROM card_payments WHERE invoice_id = ?').get(invoice.id)).to.deep.equal({ n: 0n });
    expect((await getInvoice(app, books.key, invoice.id)).status).to.equal('sent');
  });

  it('has the job record a paid session whose webhook and return never came', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const sessionId = await startCheckout(invoice);
    fake.pay(sessionId);
    await app.runJob('card-payments');
    expect(cardPayment(sessionId)).to.include({ state: 'posted', received_via: 'job' });
    expect((await getInvoice(app, books.key, invoice.id)).status).to.equal('paid');
    const run = app.db.prepare("SELECT last_outcome FROM job_runs WHERE name = 'card-payments'").get();
    expect(run).to.deep.equal({ last_outcome: 'ok' });
  });

  it('keeps a payment received while the processor has not booked it, raises it on Today, and posts it once it is booked', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const sessionId = await startCheckout(invoice);
    expect(await fake.deliver(webhook(books), fake.pay(sessionId, { pendingBalance: true }))).to.equal(200);
    expect(cardPayment(sessionId)).to.include({ state: 'received', journal_entry_id: null });
    const waiting = (await signals(books)).filter((signal) => WAITING.test(signal.sentence));
    expect(waiting).to.have.lengthOf(1);
    expect(waiting[0]).to.include({ severity: 'blocking' });
    expect(waiting[0]!.sentence).to.equal(`A card payment of $1,000.00 for ${invoice.number}, taken on 2026-03-16, is received but not in the books: Daybook has not yet learned from the processor what it settled as (the charge not yet booked to its balance, the processor unreachable, or a key it refuses), or no exchange rate is stored for the day.`);
    const page = await app.get(invoice.payPath);
    expect(page.text).to.match(/being recorded/);

    fake.settle(sessionId);
    await app.runJob('card-payments');
    expect(cardPayment(sessionId)).to.include({ state: 'posted' });
    expect((await signals(books)).filter((signal) => WAITING.test(signal.sentence))).to.deep.equal([]);
  });

  it('never drops a payment taken in a closed period: it is posted on the first day after the lock, waiting on Today until that day', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const sessionId = await startCheckout(invoice);
    // Closed through today: the first open day is tomorrow.
    inTransaction(app.db, () => lockPeriod(app.db, app.clock, CLI_ACTOR, books.businessId, '2026-03-16'));
    expect(await fake.deliver(webhook(books), fake.pay(sessionId))).to.equal(200);
    await app.runJob('card-payments');
    expect(cardPayment(sessionId)).to.include({ state: 'received' });
    const [waiting] = (await signals(books)).filter((signal) => WAITING.test(signal.sentence));
    expect(waiting!.sentence).to.match(/it is posted on 2026-03-17 \(taken in a closed period\), which has not come yet\.$/);
    expect(waiting!.action).to.equal('Nothing: the card-payments job posts it on 2026-03-17.');

    app.clock.set('2026-03-17T08:00:00.000Z');
    try {
      await app.runJob('card-payments');
    } finally {
      app.clock.set(NOW);
    }
    const posted = cardPayment(sessionId);
    expect(posted).to.include({ state: 'posted' });
    expect(app.db.prepare('SELECT entry_date FROM journal_entries WHERE id = ?').get(posted.journal_entry_id)).to.deep.equal({ entry_date: '2026-03-17' });
    expect(app.db.prepare('SELECT paid_at, memo FROM invoice_payments WHERE id = ?').get(posted.payment_id)).to.deep.equal({
      paid_at: '2026-03-17',
      memo: `Card payment ${sessionId}, taken on 2026-03-16 in a closed period`,
    });
  });

  it('books what the invoice no longer owed to Customer Deposits, with a Today signal to refund or apply it', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const sessionId = await startCheckout(invoice);
    // A cheque for $400.00 is recorded while the customer is on the checkout page.
    await payInvoice(app, books.key, invoice.id, '40000', '2026-03-16');
    await fake.deliver(webhook(books), fake.pay(sessionId));
    const posted = cardPayment(sessionId);
    expect(posted).to.include({ state: 'posted', applied_cents: 60_000n, deposit_usd_cents: 40_000n, gross_usd_cents: 100_000n });
    expect(linesOf(posted.journal_entry_id)).to.deep.equal([
      { account: 'Card Payments Clearing', direction: 'debit', cents: 60_000n, basis: 'both' },
      { account: 'Accounts Receivable', direction: 'credit', cents: 60_000n, basis: 'accrual' },
      { account: 'Service Revenue', direction: 'credit', cents: 60_000n, basis: 'cash' },
      { account: 'Card Payments Clearing', direction: 'debit', cents: 40_000n, basis: 'both' },
      { account: 'Customer Deposits', direction: 'credit', cents: 40_000n, basis: 'both' },
      { account: 'Payment Processing Fees', direction: 'debit', cents: 2_930n, basis: 'both' },
      { account: 'Card Payments Clearing', direction: 'credit', cents: 2_930n, basis: 'both' },
    ]);
    expect((await getInvoice(app, books.key, invoice.id)).status).to.equal('paid');
    expect(balance(books.businessId, 'Customer Deposits', 'accrual')).to.equal(-40_000n);
    const [deposit] = (await signals(books)).filter((signal) => /Customer Deposits/.test(signal.sentence));
    expect(deposit!.sentence).to.equal(`A card payment on ${invoice.number} (2026-03-16) was more than the invoice still owed: $400.00 is held in Customer Deposits.`);
  });

  it('holds the whole payment as a deposit when the invoice was paid in full meanwhile', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const sessionId = await startCheckout(invoice);
    await payInvoice(app, books.key, invoice.id, '100000', '2026-03-16');
    await fake.deliver(webhook(books), fake.pay(sessionId));
    const posted = cardPayment(sessionId);
    expect(posted).to.include({ state: 'posted', applied_cents: 0n, deposit_usd_cents: 100_000n, payment_id: null });
    expect(linesOf(posted.journal_entry_id)).to.deep.equal([
      { account: 'Card Payments Clearing', direction: 'debit', cents: 100_000n, basis: 'both' },
      { account: 'Customer Deposits', direction: 'credit', cents: 100_000n, basis: 'both' },
      { account: 'Payment Processing Fees', direction: 'debit', cents: 2_930n, basis: 'both' },
      { account: 'Card Payments Clearing', direction: 'credit', cents: 2_930n, basis: 'both' },
    ]);
    const entry = app.db.prepare('SELECT source_type, source_id FROM journal_entries WHERE id = ?').get(posted.journal_entry_id);
    expect(entry).to.deep.equal({ source_type: 'card_payment', source_id: sessionId });
    expect(app.db.prepare('SELECT count(*) AS n FROM invoice_payments WHERE invoice_id = ?').get(invoice.id)).to.deep.equal({ n: 1n });
  });

  it('converts an account settling in pounds at the day’s stored rate; without one it waits, and posts once the rate is stored', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const sessionId = await startCheckout(invoice);
    // $1,000.00 settled into a pound account as £900.00, fee £26.40; no GBP rate for 2026-03-16 yet (the provider is unreachable here).
    await fake.deliver(webhook(books), fake.pay(sessionId, { currency: 'gbp', exchangeRate: 0.9, feeCents: 2_640 }));
    expect(cardPayment(sessionId)).to.include({ state: 'received' });

    setRate(app.db, app.clock, CLI_ACTOR, { currency: 'GBP', date: '2026-03-16', usdPerUnit: '1.1' });
    await app.runJob('card-payments');
    expect(cardPayment(sessionId)).to.include({ state: 'posted', settlement_currency: 'GBP', gross_usd_cents: 99_000n, fee_usd_cents: 2_904n, applied_cents: 100_000n });
    // A USD invoice relieved at $1,000.00 by $990.00 of cash: a realised loss of $10.00.
    expect(balance(books.businessId, 'Realized FX Gain or Loss', 'accrual')).to.equal(1_000n);
  });

  it('keeps refunds and disputes the processor reports for Today, once each, and posts nothing for them', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const sessionId = await startCheckout(invoice);
    await fake.deliver(webhook(books), fake.pay(sessionId));
    const lines = app.db.prepare('SELECT count(*) AS n FROM journal_lines WHERE business_id = ?').get(books.businessId);
    const refund = fake.chargeEvent(sessionId, 'charge.refunded', 25_000);
    const dispute = fake.chargeEvent(sessionId, 'charge.dispute.created');
    for (const event of [refund, refund, dispute]) expect(await fake.deliver(webhook(books), event)).to.equal(200);
    expect(app.db.prepare('SELECT kind, amount_cents, currency FROM card_notices WHERE invoice_id = ? ORDER BY kind').all(invoice.id)).to.deep.equal([
      { kind: 'dispute', amount_cents: 100_000n, currency: 'USD' },
      { kind: 'refund', amount_cents: 25_000n, currency: 'USD' },
    ]);
    expect(app.db.prepare('SELECT count(*) AS n FROM journal_lines WHERE business_id = ?').get(books.businessId)).to.deep.equal(lines);
    const found = (await signals(books)).filter((signal) => /disputed|refunded/.test(signal.sentence));
    expect(found.map((signal) => [signal.sentence.split(' ').slice(0, 4).join(' '), signal.severity])).to.deep.equal([
      ['The customer disputed the', 'urgent'],
      ['The card processor refunded', 'attention'],
    ]);
    expect(found[1]!.sentence).to.equal(`The card processor refunded $250.00 of the payment on ${invoice.number}, reported on 2026-03-16. Daybook has not posted the refund.`);
  });
  it('posts a payment made before its invoice’s issue date on the issue date, waiting on Today until then', async () => {
    const books = connected();
    // Issued 2026-03-18, sent ahead on 2026-03-16, paid by card the same day.
    const customerId = addBilledCustomer(app, books.tenantId);
    const created = await createInvoice(app, books.key, invoiceBody(app, books.businessId, customerId, { issueDate: '2026-03-18', paymentTermsDays: 30, lines: [invoiceLine(app, books.businessId, { description: 'Consulting', quantity: '2', unitPriceCents: '50000' })] }));
    await sendInvoice(app, books.key, created.invoiceId);
    const payPath = new URL(created.webUrl).pathname;
    const sessionId = await startCheckout({ id: created.invoiceId, number: created.invoiceNumber, payPath, token: payPath.slice('/pay/'.length) });
    await fake.deliver(webhook(books), fake.pay(sessionId));
    expect(cardPayment(sessionId)).to.include({ state: 'received' });
    const [waiting] = (await signals(books)).filter((signal) => WAITING.test(signal.sentence));
    expect(waiting!.sentence).to.match(/it is posted on 2026-03-18 \(taken before the invoice's issue date\), which has not come yet\.$/);

    app.clock.set('2026-03-18T08:00:00.000Z');
    try {
      await app.runJob('card-payments');
    } finally {
      app.clock.set(NOW);
    }
    const posted = cardPayment(sessionId);
    expect(posted).to.include({ state: 'posted' });
    expect(app.db.prepare('SELECT entry_date FROM journal_entries WHERE id = ?').get(posted.journal_entry_id)).to.deep.equal({ entry_date: '2026-03-18' });
  });

  it('keeps each refund as what it adds, though the processor reports the running total with each', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const sessionId = await startCheckout(invoice);
    await fake.deliver(webhook(books), fake.pay(sessionId));
    const first = fake.chargeEvent(sessionId, 'charge.refunded', 10_000);
    const second = fake.chargeEvent(sessionId, 'charge.refunded', 30_000);
    for (const event of [first, second, first]) expect(await fake.deliver(webhook(books), event)).to.equal(200);
    expect(app.db.prepare("SELECT amount_cents FROM card_notices WHERE invoice_id = ? AND kind = 'refund' ORDER BY received_at, amount_cents").all(invoice.id)).to.deep.equal([
      { amount_cents: 10_000n },
      { amount_cents: 20_000n },
    ]);
  });

  it('names why a payment waits: the business disconnected, or billing past due', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const sessionId = await startCheckout(invoice);
    await fake.deliver(webhook(books), fake.pay(sessionId, { pendingBalance: true }));
    inTransaction(app.db, () => disconnectCardProcessor(app.db, app.clock, TEST_ACTOR, books.businessId));
    const [disconnected] = (await signals(books)).filter((signal) => WAITING.test(signal.sentence));
    expect(disconnected!.sentence).to.match(/the business is no longer connected to its card processor/);
    setTenant(app, books.tenantId, { billingState: 'past_due' });
    const [pastDue] = (await signals(books)).filter((signal) => WAITING.test(signal.sentence));
    expect(pastDue!.sentence).to.match(/billing is past due, so nothing is posted\.$/);
  });

  it('still finds the paid sessions of one business when the processor refuses another’s key', async () => {
    const refused = connected();
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const sessionId = await startCheckout(invoice);
    fake.pay(sessionId);
    // The first business connected asks first: its list is refused.
    fake.failNext(401, 'Invalid API Key provided: sk_test_****0000');
    void refused;
    await app.runJob('card-payments');
    expect(cardPayment(sessionId)).to.include({ state: 'posted', received_via: 'job' });
  });
});
