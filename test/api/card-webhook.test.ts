import { expect } from 'chai';
import { connectCardProcessor, findCardProcessor } from '../../src/books/card-processors.js';
import { stripeClient } from '../../src/cards/stripe-client.js';
import { inTransaction } from '../../src/db/connection.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { TEST_ACTOR } from '../support/factories.js';
import { type Books, issueInvoice, newBooks } from '../support/invoicing.js';

/**
 * POST /webhooks/stripe/{endpointId} (issue: card payments through Stripe Checkout): the
 * processor's signed delivery of a paid Checkout Session is stored once as a card payment
 * `received`, audited under the processor; a bad or missing signature is 400 and writes
 * nothing; an unknown address is 404; an event Daybook does not act on, or a session naming an
 * invoice of another business, is 200 and records nothing. Signed as the processor signs, with
 * its official SDK.
 */

const SECRET_KEY = 'sk_test_51CardWebhookTest0000000000000';
const WEBHOOK_SECRET = 'whsec_cardWebhookTestSecret000000';
const NOW = '2026-03-16T08:00:00.000Z';

interface Connected extends Books {
  endpointId: string;
}

function paidSessionEvent(invoiceId: string, overrides: Record<string, unknown> = {}, type = 'checkout.session.completed'): Record<string, unknown> {
  return {
    id: `evt_${Math.random().toString(36).slice(2)}`,
    object: 'event',
    type,
    created: Date.parse(NOW) / 1000,
    data: {
      object: {
        id: 'cs_test_webhook000001',
        object: 'checkout.session',
        payment_status: 'paid',
        status: 'complete',
        amount_total: 100_000,
        currency: 'usd',
        metadata: { daybook_invoice_id: invoiceId },
        payment_intent: 'pi_test_000001',
        ...overrides,
      },
    },
  };
}

describe('card webhook: a paid Checkout Session is stored once, signature checked', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp(NOW, { config: { stripeApiUrl: 'http://127.0.0.1:9' } });
  });
  after(() => app.close());

  function connected(webhookSecret = WEBHOOK_SECRET): Connected {
    const books = newBooks(app);
    inTransaction(app.db, () => connectCardProcessor(app.db, app.clock, TEST_ACTOR, books.businessId, { secretKey: SECRET_KEY, webhookSecret }));
    return { ...books, endpointId: findCardProcessor(app.db, books.businessId)!.endpointId };
  }

  async function deliver(endpointId: string, event: Record<string, unknown>, secret = WEBHOOK_SECRET, signature?: string) {
    const payload = JSON.stringify(event);
    const header = signature ?? (await stripeClient('https://api.stripe.com', SECRET_KEY)).webhooks.generateTestHeaderString({ payload, secret });
    return app.request('POST', `/webhooks/stripe/${endpointId}`, { rawBody: payload, headers: { 'content-type': 'application/json', 'stripe-signature': header } });
  }

  const stored = (invoiceId: string) =>
    app.db
      .prepare('SELECT session_id, amount_cents, currency, paid_on, payment_intent_id, received_via, state, payment_id FROM card_payments WHERE invoice_id = ?')
      .all(invoiceId);
  const receipts = (invoiceId: string) =>
    app.db.prepare("SELECT actor_type, actor_name, detail_json FROM audit_log WHERE action = 'card_payment.receive' AND subject_id = ?").all(invoiceId) as {
      actor_type: string;
      actor_name: string;
      detail_json: string;
    }[];

  it('stores a paid session as a received card payment, audited under the processor, and answers 200', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const res = await deliver(books.endpointId, paidSessionEvent(invoice.id));
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ received: true, recorded: true });
    expect(stored(invoice.id)).to.deep.equal([
      { session_id: 'cs_test_webhook000001', amount_cents: 100_000n, currency: 'USD', paid_on: '2026-03-16', payment_intent_id: 'pi_test_000001', received_via: 'webhook', state: 'received', payment_id: null },
    ]);
    const [receipt] = receipts(invoice.id);
    expect(receipt).to.include({ actor_type: 'webhook', actor_name: 'stripe' });
    expect(JSON.parse(receipt!.detail_json)).to.deep.equal({ sessionId: 'cs_test_webhook000001', amountCents: '100000', currency: 'USD', paidOn: '2026-03-16', via: 'webhook' });
  });

  it('stores the same session once, however often it is delivered (async_payment_succeeded included)', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    for (const type of ['checkout.session.completed', 'checkout.session.completed', 'checkout.session.async_payment_succeeded']) {
      const res = await deliver(books.endpointId, paidSessionEvent(invoice.id, { id: 'cs_test_delivered_thrice' }, type));
      expect(res.status).to.equal(200);
    }
    expect(stored(invoice.id)).to.have.lengthOf(1);
    expect(receipts(invoice.id)).to.have.lengthOf(1);
  });

  it('refuses a missing, forged or stale signature with 400, writing nothing', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const event = paidSessionEvent(invoice.id);
    const payload = JSON.stringify(event);
    const stale = (await stripeClient('https://api.stripe.com', SECRET_KEY)).webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: Date.now() / 1000 - 301 });
    for (const [what, res] of [
      ['missing', await app.request('POST', `/webhooks/stripe/${books.endpointId}`, { rawBody: payload, headers: { 'content-type': 'application/json' } })],
      ['another secret', await deliver(books.endpointId, event, 'whsec_someoneElse000000000')],
      ['older than five minutes', await deliver(books.endpointId, event, WEBHOOK_SECRET, stale)],
    ] as const) {
      expect(res.status, what).to.equal(400);
      expect(res.body, what).to.deep.equal({ error: 'bad signature' });
    }
    expect(stored(invoice.id)).to.deep.equal([]);
  });

  it('answers 404 for an address no business has, and writes nothing', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const res = await deliver('A'.repeat(22), paidSessionEvent(invoice.id));
    expect(res.status).to.equal(404);
    expect(stored(invoice.id)).to.deep.equal([]);
  });

  it("records nothing (200) for an unpaid session, an event it does not act on, or another business's invoice", async () => {
    const books = connected();
    const other = connected();
    const invoice = await issueInvoice(app, books);
    const othersInvoice = await issueInvoice(app, other);
    const unpaid = await deliver(books.endpointId, paidSessionEvent(invoice.id, { payment_status: 'unpaid' }));
    const refund = await deliver(books.endpointId, { ...paidSessionEvent(invoice.id), type: 'charge.refunded' });
    const foreign = await deliver(books.endpointId, paidSessionEvent(othersInvoice.id, { id: 'cs_test_other' }));
    for (const res of [unpaid, refund, foreign]) {
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ received: true, recorded: false });
    }
    expect(stored(invoice.id)).to.deep.equal([]);
    expect(stored(othersInvoice.id)).to.deep.equal([]);
  });

  it('keeps each business’s sessions its own: an id another business stored does not block this one; within a business it names one invoice', async () => {
    const first = connected();
    const second = connected();
    const firstInvoice = await issueInvoice(app, first);
    const secondInvoice = await issueInvoice(app, second);
    const anotherOfFirst = await issueInvoice(app, first);
    expect((await deliver(first.endpointId, paidSessionEvent(firstInvoice.id, { id: 'cs_test_same_id' }))).body).to.deep.equal({ received: true, recorded: true });
    expect((await deliver(second.endpointId, paidSessionEvent(secondInvoice.id, { id: 'cs_test_same_id' }))).body).to.deep.equal({ received: true, recorded: true });
    expect(stored(secondInvoice.id)).to.have.lengthOf(1);
    const reused = await deliver(first.endpointId, paidSessionEvent(anotherOfFirst.id, { id: 'cs_test_same_id' }));
    expect(reused.body).to.deep.equal({ received: true, recorded: false });
    expect(stored(anotherOfFirst.id)).to.deep.equal([]);
  });

  it('keeps a stored card payment as the processor reported it: no delete, no change of amount', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    await deliver(books.endpointId, paidSessionEvent(invoice.id, { id: 'cs_test_kept' }));
    expect(() => app.db.prepare("DELETE FROM card_payments WHERE session_id = 'cs_test_kept'").run()).to.throw(/card payments are kept/);
    expect(() => app.db.prepare("UPDATE card_payments SET amount_cents = 1 WHERE session_id = 'cs_test_kept'").run()).to.throw(/keeps what the processor reported/);
  });
});
