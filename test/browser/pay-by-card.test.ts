import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { connectCardProcessor, findCardProcessor } from '../../src/books/card-processors.js';
import { inTransaction } from '../../src/db/connection.js';
import { type FakeStripe, startFakeStripe } from '../../src/testing/fake-stripe.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { seriousAccessibilityFindings, startBrowserOrSkip, watchCspViolations, watchPage } from '../support/browser.js';
import { TEST_ACTOR } from '../support/factories.js';
import { addBilledCustomer, getInvoice, invoiceBody, invoiceLine, newBooks, sendInvoice } from '../support/invoicing.js';
import { freePort } from '../support/free-port.js';

/**
 * A customer pays an invoice by card in a real browser (Debian's Chromium, headless): the pay
 * page's "Pay … by card" button, the processor's hosted page (the loopback stand-in) and its
 * Pay button, and back to the pay page, now paid. Both pay pages keep their
 * Content-Security-Policy (the form may go to the processor, nothing else loads) and have no
 * serious accessibility finding; the payment is in the books once, as a card payment.
 */

const NOW = '2026-03-16T08:00:00.000Z';
const SECRET_KEY = 'sk_test_51PayByCardBrowserTest000000';
const WEBHOOK_SECRET = 'whsec_payByCardBrowserTest00000000';


describe('paying by card in Chromium', function () {
  this.timeout(60_000);
  let browser: Browser;
  let fake: FakeStripe;
  let app: TestApp;

  before(async function () {
    browser = await startBrowserOrSkip(this);
    fake = await startFakeStripe();
    const port = await freePort();
    app = await startTestApp(NOW, {
      config: { stripeApiUrl: fake.url, stripeCheckoutOrigin: fake.checkoutOrigin, port, siteUrl: `http://127.0.0.1:${port}` },
    });
    fake.now = () => Math.floor(app.clock.now().getTime() / 1000);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await fake?.close();
  });

  it('goes from the pay page to the processor’s page and back, paid: the policy and accessibility hold on both pay pages, and the payment is posted once', async () => {
    const books = newBooks(app, 'Lakeside Bakery');
    inTransaction(app.db, () => connectCardProcessor(app.db, app.clock, TEST_ACTOR, books.businessId, { secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET }));
    const { endpointId } = findCardProcessor(app.db, books.businessId)!;
    fake.webhookTo = { url: `${app.url}/webhooks/stripe/${endpointId}`, secret: WEBHOOK_SECRET };
    // $1,000.00, sent: its email's pay link names this server, the site's address.
    const lines = [invoiceLine(app, books.businessId, { quantity: '2', unitPriceCents: '50000' })];
    const created = await app.post('/api/v1/invoices', books.key, invoiceBody(app, books.businessId, addBilledCustomer(app, books.tenantId), { issueDate: '2026-03-15', paymentTermsDays: 30, lines }));
    expect(created.status, created.text).to.equal(201);
    const invoiceId = created.body.invoiceId as string;
    await sendInvoice(app, books.key, invoiceId);
    const before = await getInvoice(app, books.key, invoiceId);
    expect(before.status).to.equal('sent');
    expect(before.payUrl.startsWith(`${app.url}/pay/`), before.payUrl).to.equal(true);

    const context = await browser.newContext();
    try {
      await watchCspViolations(context);
      const page = await context.newPage();
      const problems = watchPage(page);

      const opened = await page.goto(before.payUrl);
      expect(opened?.status()).to.equal(200);
      const button = page.getByRole('button', { name: `Pay ${before.balance.formatted} by card` });
      expect(await button.count(), 'one card button').to.equal(1);
      expect(await problems.cspViolations(), 'policy violations on the pay page').to.deep.equal([]);
      expect(await seriousAccessibilityFindings(page), 'the pay page').to.deep.equal([]);

      // The button posts to the server, which sends the browser on to the processor's page.
      await Promise.all([page.waitForURL(`${fake.checkoutOrigin}/pay/**`), button.click()]);
      const sessionId = new URL(page.url()).pathname.split('/').pop()!;
      expect(sessionId).to.match(/^cs_test_\w+$/);
      expect(await page.locator('h1').innerText()).to.equal('Fake checkout: 1000.00 USD');

      // Paying there brings the customer back to the invoice's return page.
      await Promise.all([page.waitForURL(`${before.payUrl}/return?**`), page.getByRole('button', { name: 'Pay 1000.00 USD' }).click()]);
      expect(new URL(page.url()).searchParams.get('session_id')).to.equal(sessionId);
      expect(await page.locator('h1').innerText()).to.equal(`Invoice ${before.number}`);
      expect(await page.getByRole('status').innerText()).to.equal('This invoice is paid in full. Thank you.');
      const totals = await page.locator('table.totals tr').evaluateAll((rows) => rows.map((row) => [...(row as HTMLTableRowElement).cells].map((cell) => cell.innerText.trim())));
      expect(totals.slice(-2)).to.deep.equal([
        ['Paid', '$1,000.00'],
        ['Balance', '$0.00'],
      ]);
      expect(await page.getByRole('button', { name: /by card/ }).count(), 'no card button on a paid invoice').to.equal(0);
      expect(await page.locator('li').allInnerTexts()).to.deep.equal(['$1,000.00 received on 2026-03-16 (stripe)']);
      expect(await problems.cspViolations(), 'policy violations on the page after paying').to.deep.equal([]);
      expect(await seriousAccessibilityFindings(page), 'the page after paying').to.deep.equal([]);

      // The stand-in's own page is not Daybook's (the browser asks it for an icon it does not have): only Daybook's pages are held to this.
      const daybookErrors = problems.consoleErrors.filter((text) => !text.endsWith(`(${fake.checkoutOrigin}/favicon.ico)`));
      expect(daybookErrors, 'console errors').to.deep.equal([]);
      expect(problems.pageErrors, 'uncaught errors').to.deep.equal([]);
      expect(problems.cspMessages, 'console messages about the policy').to.deep.equal([]);
    } finally {
      await context.close();
    }

    const after = await getInvoice(app, books.key, invoiceId);
    expect(after.status).to.equal('paid');
    expect(after.balance.cents).to.equal('0');
    expect(after.payments.map((payment) => ({ method: payment.method, cents: payment.amount.cents, paidAt: payment.paidAt }))).to.deep.equal([
      { method: 'stripe', cents: '100000', paidAt: '2026-03-16' },
    ]);
    // The webhook and the return page both learnt of the payment; it is in the books once.
    const posted = app.db.prepare('SELECT state, received_via FROM card_payments WHERE invoice_id = ?').all(invoiceId);
    expect(posted).to.deep.equal([{ state: 'posted', received_via: 'webhook' }]);
  });
});
