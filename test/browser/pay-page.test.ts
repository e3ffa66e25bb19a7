import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { extractText, getDocumentProxy } from 'unpdf';
import { setRate } from '../../src/books/fx.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { outputPath, seriousAccessibilityFindings, startBrowserOrSkip, watchCspViolations, watchPage } from '../support/browser.js';
import { getInvoice, type InvoiceDetail, issueInvoice, newBooks } from '../support/invoicing.js';

/**
 * The customer's pay page in a real browser (Debian's Chromium, headless), as a customer opens
 * it from an email on a laptop and on a phone, downloads the PDF and prints it. The figures the
 * browser shows are held to the invoice detail the API returns.
 */

const START = '2026-03-15T12:00:00.000Z';

/** A long word with no place to break, as references and links in descriptions are. */
const UNBROKEN_REFERENCE = 'PO:ACMEHARBORFRAMEWORKAGREEMENT2026031500000000042';

interface Viewport {
  name: string;
  options: BrowserContextOptions;
}

const VIEWPORTS: readonly Viewport[] = [
  { name: 'desktop', options: { viewport: { width: 1280, height: 800 } } },
  { name: 'phone', options: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 3 } },
];

/** What a reader sees in the page's tables, row by row, cell by cell (innerText: nothing hidden is counted). */
async function tableRows(page: Page, selector: string): Promise<string[][]> {
  return page.locator(selector).evaluateAll((rows) => rows.map((row) => [...(row as HTMLTableRowElement).cells].map((cell) => cell.innerText.trim())));
}

describe('the pay page in Chromium', function () {
  this.timeout(60_000);
  let browser: Browser;
  let app: TestApp;
  let detail: InvoiceDetail;
  let payUrl: string;

  before(async function () {
    browser = await startBrowserOrSkip(this);
    app = await startTestApp(START);
    // A EUR invoice with tax, a partial payment, a fractional quantity, a long description and a memo.
    const books = newBooks(app, 'Atelier Lumière & Fils');
    setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-13', usdPerUnit: '1.08' });
    const invoice = await issueInvoice(app, books, {
      customer: { name: 'Marta Kowalski-Nowak' },
      currency: 'EUR',
      taxRatePercent: '20',
      memo: 'Thank you for your custom. Bank: IBAN FR76 3000 6000 0112 3456 7890 189.',
      lines: [
        {
          description: `Brand identity workshop, two days on site with the whole team, including preparation, materials and the written summary (${UNBROKEN_REFERENCE})`,
          quantity: '2',
          unitPriceCents: '185000',
        },
        { description: 'Hosting, per month', quantity: '1.5', unitPriceCents: '4999' },
        { description: 'Stock photography licence', quantity: '12', unitPriceCents: '2500' },
      ],
    });
    const paid = await app.post(`/api/v1/invoices/${invoice.id}/payments`, books.key, { amountCents: '150000', method: 'wire' });
    expect(paid.status, paid.text).to.equal(201);
    detail = await getInvoice(app, books.key, invoice.id);
    expect(detail.paid.cents, 'a partial payment').to.equal('150000');
    expect(BigInt(detail.balance.cents) > 0n, 'a balance left').to.equal(true);
    // The link in the email names the configured site; the browser opens the same path on the test server.
    payUrl = `${app.url}${new URL(detail.payUrl).pathname}`;
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  for (const viewport of VIEWPORTS) {
    const { width, height } = viewport.options.viewport!;
    it(`at a ${viewport.name} viewport (${width}×${height}) shows the API's figures, with no console error, no policy violation, nothing wider than the screen and no serious axe finding`, async () => {
      const context = await browser.newContext(viewport.options);
      try {
        await watchCspViolations(context);
        const page = await context.newPage();
        const problems = watchPage(page);

        const response = await page.goto(payUrl);

        expect(response?.status()).to.equal(200);
        expect(await page.locator('h1').innerText()).to.equal(`Invoice ${detail.number}`);
        expect(await page.title()).to.equal(`Invoice ${detail.number} from Atelier Lumière & Fils`);
        expect(await page.locator('header').innerText()).to.include(
          `For ${detail.customer.name} · issued ${detail.issueDate} · due ${detail.dueDate} · ${detail.currency}`,
        );
        expect(await tableRows(page, 'table:not(.totals) tbody tr')).to.deep.equal(
          detail.lines.map((line) => [line.description, line.quantity, line.unitPrice.formatted, line.amount.formatted]),
        );
        expect(await tableRows(page, 'table.totals tr')).to.deep.equal([
          ['Subtotal', detail.subtotal.formatted],
          ['Tax', detail.tax.formatted],
          ['Total', detail.total.formatted],
          ['Paid', detail.paid.formatted],
          ['Balance', detail.balance.formatted],
        ]);
        expect(await page.locator('.due').innerText()).to.equal(`Amount due: ${detail.balance.formatted} by ${detail.dueDate}`);
        expect(await page.locator('li').allInnerTexts()).to.deep.equal(
          detail.payments.map((payment) => `${payment.amount.formatted} received on ${payment.paidAt} (${payment.method})`),
        );
        expect(await page.locator('main').innerText()).to.include(detail.memo!);

        // On a phone the browser zooms out to show a page wider than the screen, so the measure is the screen, not innerWidth.
        const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(pageWidth, 'nothing scrolls sideways').to.be.at.most(width);
        const overhanging = await page.evaluate(() => {
          const edge = document.querySelector('main')!.getBoundingClientRect().right;
          return [...document.querySelectorAll('main *')].filter((element) => element.getBoundingClientRect().right > edge + 0.5).map((element) => element.tagName);
        });
        expect(overhanging, 'nothing reaches past the page’s edge').to.deep.equal([]);
        await page.screenshot({ path: outputPath(`pay-page-${viewport.name}.png`), fullPage: true });

        expect(problems.consoleErrors, 'console errors').to.deep.equal([]);
        expect(problems.pageErrors, 'uncaught errors').to.deep.equal([]);
        expect(problems.cspMessages, 'console messages about the policy').to.deep.equal([]);
        expect(await problems.cspViolations(), 'securitypolicyviolation events').to.deep.equal([]);
        expect(await seriousAccessibilityFindings(page)).to.deep.equal([]);
      } finally {
        await context.close();
      }
    });
  }

  it('the Download PDF link downloads the invoice as a PDF named after its number', async () => {
    const context = await browser.newContext({ acceptDownloads: true });
    try {
      const page = await context.newPage();
      const problems = watchPage(page);
      await page.goto(payUrl);
      const link = page.getByRole('link', { name: /download pdf/i });
      expect(await link.count(), 'one Download PDF link').to.equal(1);
      expect(new URL(String(await link.getAttribute('href')), payUrl).pathname).to.equal(`${new URL(payUrl).pathname}/invoice.pdf`);

      const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);

      expect(await download.failure()).to.equal(null);
      expect(download.suggestedFilename()).to.equal(`${detail.number}.pdf`);
      const bytes = readFileSync(await download.path());
      expect(bytes.subarray(0, 5).toString('latin1')).to.equal('%PDF-');
      // The invoice itself (test/api checks every figure of the PDF; here, that it is this invoice).
      const { text } = await extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: true });
      expect(text).to.include(detail.number).and.include(detail.balance.formatted);
      expect(problems.consoleErrors).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('prints on A4 and Letter in black on white, without shadow or links, every figure on the paper and nothing wider than the printable width', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(payUrl);
      await page.emulateMedia({ media: 'print' });

      // The narrower printable width of the two papers: A4 with 12 mm margins, 186 mm at 96 px to the inch.
      const printableWidthPx = Math.floor((186 / 25.4) * 96);
      await page.setViewportSize({ width: printableWidthPx, height: 1000 });
      await page.screenshot({ path: outputPath('pay-page-print.png'), fullPage: true });
      // No named functions inside evaluate: the test runner's compiler would wrap them in a helper the page lacks.
      const printed = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        mainRight: document.querySelector('main')!.getBoundingClientRect().right,
        bodyBackground: getComputedStyle(document.body).backgroundColor,
        mainBackground: getComputedStyle(document.querySelector('main')!).backgroundColor,
        mainShadow: getComputedStyle(document.querySelector('main')!).boxShadow,
        bodyColor: getComputedStyle(document.body).color,
        mutedColors: [...document.querySelectorAll('.muted')].map((element) => getComputedStyle(element).color),
        visibleLinks: [...document.querySelectorAll('a, button')].filter((element) => getComputedStyle(element).display !== 'none').map((element) => element.outerHTML),
        rowBreaks: [...document.querySelectorAll('tr')].map((row) => getComputedStyle(row).breakInside),
      }));
      expect(printed.scrollWidth, 'nothing wider than the printable width').to.be.at.most(printableWidthPx);
      expect(printed.mainRight).to.be.at.most(printableWidthPx);
      expect(printed.bodyBackground, 'white paper').to.be.oneOf(['rgb(255, 255, 255)', 'rgba(0, 0, 0, 0)']);
      expect(printed.mainBackground).to.be.oneOf(['rgb(255, 255, 255)', 'rgba(0, 0, 0, 0)']);
      expect(printed.mainShadow).to.equal('none');
      expect(printed.bodyColor, 'black text').to.equal('rgb(0, 0, 0)');
      expect([...new Set(printed.mutedColors)], 'no grey text').to.deep.equal(['rgb(0, 0, 0)']);
      expect(printed.visibleLinks, 'nothing to click on paper').to.deep.equal([]);
      expect([...new Set(printed.rowBreaks)], 'no table row is split across pages').to.deep.equal(['avoid']);

      for (const format of ['A4', 'Letter'] as const) {
        const pdf = await page.pdf({ format, margin: { top: '12mm', bottom: '12mm', left: '12mm', right: '12mm' }, printBackground: true });
        writeFileSync(outputPath(`pay-page-print-${format.toLowerCase()}.pdf`), pdf);
        const { totalPages, text } = await extractText(await getDocumentProxy(new Uint8Array(pdf)), { mergePages: true });
        expect(totalPages, `${format}: one page`).to.equal(1);
        const words = text.replace(/\s+/g, ' ');
        for (const figure of [detail.number, detail.subtotal.formatted, detail.tax.formatted, detail.total.formatted, detail.paid.formatted, detail.balance.formatted, detail.issueDate, detail.dueDate]) {
          expect(words, `${format}: ${figure}`).to.include(figure);
        }
        for (const line of detail.lines) expect(words, `${format}: ${line.description.slice(0, 30)}`).to.include(line.amount.formatted);
        expect(words, `${format}: no link to click on paper`).to.not.match(/download pdf/i);
      }
    } finally {
      await context.close();
    }
  });
});
