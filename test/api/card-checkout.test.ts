import { expect } from 'chai';
import { receiveCardPayment } from '../../src/books/card-payments.js';
import { connectCardProcessor } from '../../src/books/card-processors.js';
import { inTransaction } from '../../src/db/connection.js';
import { PAY_PAGE_CSP } from '../../src/pages/pay.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { TEST_ACTOR } from '../support/factories.js';
import { type FakeStripe, startFakeStripe } from '../../src/testing/fake-stripe.js';
import { type Books, issueInvoice, newBooks, payInvoice } from '../support/invoicing.js';

/**
 * The pay page's "Pay by card" button (issue: card payments through Stripe Checkout): shown
 * only for a business that takes cards and an invoice with a balance the processor can charge;
 * POST /pay/{token}/checkout starts a Checkout Session for the balance at the business's own
 * processor account and answers 303 to its hosted page; a double click makes one session;
 * nothing to pay, or a processor error, gets the page again with a sentence and nothing
 * recorded. Against a loopback fake of the processor's API, through the official SDK.
 */

const SECRET_KEY = 'sk_test_51CardCheckoutTest000000000000';
const SITE = 'http://localhost:3000';

function csp(res: TestResponse): Map<string, string[]> {
  return new Map(
    String(res.headers['content-security-policy'])
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .map(([name, ...sources]) => [name!, sources]),
  );
}

describe('pay by card: the pay page starts a Stripe Checkout Session', () => {
  let fake: FakeStripe;
  let app: TestApp;
  before(async () => {
    fake = await startFakeStripe();
    app = await startTestApp('2026-03-16T08:00:00.000Z', { config: { stripeApiUrl: fake.url, stripeCheckoutOrigin: fake.checkoutOrigin } });
  });
  after(async () => {
    await app.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });

  function connected(): Books {
    const books = newBooks(app);
    inTransaction(app.db, () => connectCardProcessor(app.db, app.clock, TEST_ACTOR, books.businessId, { secretKey: SECRET_KEY, webhookSecret: 'whsec_cardCheckoutTest000000' }));
    return books;
  }
  const checkout = (token: string) => app.request('POST', `/pay/${token}/checkout`);

  it('offers "Pay $1,000.00 by card" on the page of a connected business, its form allowed to go only there and to the checkout origin', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const page = await app.get(invoice.payPath);
    expect(page.status).to.equal(200);
    expect(page.text).to.contain(`<form class="pay-card" method="post" action="${invoice.token}/checkout"><button type="submit">Pay $1,000.00 by card</button></form>`);
    expect(page.text).to.contain('Or pay with the payment details');
    expect(csp(page).get('form-action')).to.deep.equal(["'self'", fake.checkoutOrigin]);
    expect(fake.requests, 'showing the page asks the processor nothing').to.deep.equal([]);
  });

  it('creates one session for the balance (303 to the hosted page), with the invoice, the customer and the way back; a double click makes no second one', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books, { customer: { name: 'Harbor Cafe', email: 'ap@harbor.example' } });
    await payInvoice(app, books.key, invoice.id, '25000');
    const first = await checkout(invoice.token);
    expect(first.status).to.equal(303);
    const session = [...fake.sessions.values()].find((candidate) => candidate.metadata.daybook_invoice_id === invoice.id)!;
    expect(first.headers.location).to.equal(session.url);
    expect(session).to.deep.include({ mode: 'payment', amount_total: 75_000, currency: 'usd', customer_email: 'ap@harbor.example', client_reference_id: invoice.id });
    expect(session.sent.line_items).to.deep.equal([{ quantity: '1', price_data: { currency: 'usd', unit_amount: '75000', product_data: { name: `Invoice ${invoice.number}` } } }]);
    expect(session.success_url).to.equal(`${SITE}${invoice.payPath}/return?session_id={CHECKOUT_SESSION_ID}`);
    expect(session.cancel_url).to.equal(`${SITE}${invoice.payPath}`);
    const [request] = fake.requests;
    expect(request!.authorization, "the business's own key").to.equal(`Bearer ${SECRET_KEY}`);
    expect(request!.idempotencyKey).to.match(new RegExp(`^daybook-checkout-${invoice.id}-75000-[0-9a-f]{16}$`));

    const again = await checkout(invoice.token);
    expect(again.status).to.equal(303);
    expect(again.headers.location, 'the same session').to.equal(session.url);
    expect(fake.requests.map((r) => r.idempotencyKey)).to.deep.equal([request!.idempotencyKey, request!.idempotencyKey]);
    expect([...fake.sessions.values()].filter((candidate) => candidate.metadata.daybook_invoice_id === invoice.id)).to.have.lengthOf(1);

    // The customer's email address changed: the same key with other parameters would be refused
    // by the processor, so the key changes and a new session is made for the new address.
    app.db.prepare("UPDATE customers SET email = 'payables@harbor.example' WHERE id = (SELECT customer_id FROM invoices WHERE id = ?)").run(invoice.id);
    const changed = await checkout(invoice.token);
    expect(changed.status).to.equal(303);
    expect(fake.requests[2]!.idempotencyKey).to.not.equal(request!.idempotencyKey);
    const sessions = [...fake.sessions.values()].filter((candidate) => candidate.metadata.daybook_invoice_id === invoice.id);
    expect(sessions.map((candidate) => candidate.customer_email)).to.deep.equal(['ap@harbor.example', 'payables@harbor.example']);
  });

  it('offers nothing, and 404s the checkout, for a business that takes no cards', async () => {
    const books = newBooks(app);
    const invoice = await issueInvoice(app, books);
    const page = await app.get(invoice.payPath);
    expect(page.text).not.to.contain('by card');
    expect(page.text).to.contain('To pay, use the payment details');
    expect(page.headers['content-security-policy']).to.equal(PAY_PAGE_CSP);
    const refused = await checkout(invoice.token);
    expect(refused.status).to.equal(404);
    expect(refused.text).to.contain('There is no page at this address.');
    expect(fake.requests).to.deep.equal([]);
  });

  it('says a paid invoice has nothing left to pay (409, the page again) and asks the processor nothing', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    await payInvoice(app, books.key, invoice.id, '100000');
    expect((await app.get(invoice.payPath)).text).not.to.contain('by card');
    const refused = await checkout(invoice.token);
    expect(refused.status).to.equal(409);
    expect(refused.text).to.contain('There is nothing left to pay on this invoice; no card was charged.');
    expect(refused.text).to.contain('This invoice is paid in full.');
    expect(fake.requests).to.deep.equal([]);
  });

  it('replaces the button with a sentence below the processor’s minimum charge, and refuses the checkout', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books, { lines: [{ description: 'Stamp', quantity: '1', unitPriceCents: '40' }] });
    const page = await app.get(invoice.payPath);
    expect(page.text).to.contain('A balance this small cannot be paid by card (the least a card payment can be is $0.50).');
    expect(page.text).not.to.contain('<form');
    expect(csp(page).get('form-action')).to.deep.equal(["'none'"]);
    expect((await checkout(invoice.token)).status).to.equal(409);
    expect(fake.requests).to.deep.equal([]);
  });

  it('shows the page again (502, a plain sentence) when the processor refuses, and records nothing', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const auditBefore = Number(app.db.prepare('SELECT count(*) FROM audit_log').pluck().get());
    fake.failNext(400, 'Invalid API Key provided: sk_test_****0000');
    const refused = await checkout(invoice.token);
    expect(refused.status).to.equal(502);
    expect(refused.text).to.contain('The card payment could not be started just now; please try again in a few minutes. No card was charged.');
    expect(refused.text, 'the processor’s words are not shown to the customer').not.to.contain('Invalid API Key');
    expect(Number(app.db.prepare('SELECT count(*) FROM audit_log').pluck().get())).to.equal(auditBefore);
  });

  it('shows the page on return, and while a card payment is received offers no second one (409), saying it is being recorded', async () => {
    const books = connected();
    const invoice = await issueInvoice(app, books);
    const back = await app.get(`${invoice.payPath}/return?session_id=cs_test_made_up`);
    expect(back.status).to.equal(200);
    expect(back.text, 'the query is not trusted').not.to.contain('being recorded');
    expect(back.text).to.contain('by card</button>');
    inTransaction(app.db, () =>
      receiveCardPayment(app.db, app.clock, TEST_ACTOR, { sessionId: 'cs_test_received', invoiceId: invoice.id, amountCents: 100_000n, currency: 'usd', paidOn: '2026-03-16', paymentIntentId: null, via: 'webhook' }),
    );
    for (const path of [invoice.payPath, `${invoice.payPath}/return?session_id=cs_test_received`]) {
      const page = await app.get(path);
      expect(page.text, path).to.contain('A card payment for this invoice has been received and is being recorded');
      expect(page.text, path).not.to.contain('<form');
    }
    const refused = await checkout(invoice.token);
    expect(refused.status).to.equal(409);
    // The return page asked the processor about each session named (neither is a paid session
    // of this invoice, so nothing more was stored); the checkout asked nothing.
    expect(fake.requests.map((request) => `${request.method} ${request.path}`)).to.deep.equal([
      'GET /v1/checkout/sessions/cs_test_made_up',
      'GET /v1/checkout/sessions/cs_test_received',
    ]);
  });

  it('does not send the customer to a checkout address the page’s policy does not allow (502)', async () => {
    const other = await startTestApp('2026-03-16T08:00:00.000Z', { config: { stripeApiUrl: fake.url, stripeCheckoutOrigin: 'https://checkout.stripe.com' } });
    try {
      const books = newBooks(other);
      inTransaction(other.db, () => connectCardProcessor(other.db, other.clock, TEST_ACTOR, books.businessId, { secretKey: SECRET_KEY, webhookSecret: 'whsec_cardCheckoutTest000000' }));
      const invoice = await issueInvoice(other, books);
      const refused = await other.request('POST', `/pay/${invoice.token}/checkout`);
      expect(refused.status).to.equal(502);
      expect(refused.headers.location).to.equal(undefined);
    } finally {
      await other.close();
    }
  });

  it('answers the 404 page for a token that names nothing, as the page does', async () => {
    const refused = await checkout('A'.repeat(43));
    expect(refused.status).to.equal(404);
    expect(refused.headers['content-security-policy']).to.equal(PAY_PAGE_CSP);
  });
});
