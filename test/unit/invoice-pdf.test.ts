import { expect } from 'chai';
import type { Invoice } from '../../src/books/invoices.js';
import { CURRENCIES } from '../../src/money.js';
import {
  invoicePdfFilename,
  linesShownInPdf,
  MAX_PDF_DESCRIPTION_CHARACTERS,
  PAPER_POINTS,
  paperSizeFor,
  renderInvoicePdf,
  renderVoidInvoicePdf,
} from '../../src/pdf/invoice-pdf.js';
import { buildInput, buildLine, PAY_URL } from '../support/invoice-pdf-input.js';
import { expectEmbeddedFontsOnly, type ReadPdf, readPdf } from '../support/pdf.js';

/**
 * The invoice PDF on its own, from invoices built here: layout across pages, wrapping, paper,
 * fonts and the same bytes every time. test/api/invoice-pdf.test.ts checks it against the API.
 */

/** Lines of `count`, each "Item n" at 1 x $10.00, with the subtotal and total they make. */
function manyLines(count: number): Partial<Invoice> {
  const lines = Array.from({ length: count }, (_, index) => buildLine({ description: `Item ${index + 1}`, quantity: '1', unitPriceCents: 1000n, amountCents: 1000n }));
  const totalCents = BigInt(count) * 1000n;
  return { lines, subtotalCents: totalCents, totalCents };
}

/** Where the right margin starts (54 points in), with half a point for rounding. */
function rightMargin(pdf: ReadPdf): number {
  return pdf.pageSizes[0]!.width - 54 + 0.5;
}

/** `count` distinct words, so a missing or repeated one shows. */
function words(count: number, stem = 'word'): string {
  return Array.from({ length: count }, (_, index) => `${stem}${index + 1}`).join(' ');
}

describe('invoice PDF', () => {
  describe('renderInvoicePdf', () => {
    it('writes every part of the invoice as text: business, customer and address, number, dates, terms, line, totals, memo, pay link', async () => {
      const pdf = await readPdf(
        await renderInvoicePdf(
          buildInput(
            { memo: 'Thank you for your business.', taxRatePercent: '8.25', taxCents: 2063n, totalCents: 27063n },
            { customerAddressLines: ['12 Main Street', 'Springfield, IL 62704'] },
          ),
        ),
      );

      expect(pdf.text).to.include('Harbor Design Invoice INV-0042');
      expect(pdf.text).to.include('Bill to Jo Customer 12 Main Street Springfield, IL 62704');
      expect(pdf.text).to.include('Invoice number INV-0042 Issue date 2026-03-15 Due date 2026-04-14 Terms Net 30 Currency USD');
      expect(pdf.text).to.include('Description Quantity Unit price Amount Consulting 2 $125.00 $250.00');
      expect(pdf.text).to.include('Subtotal $250.00 Tax (8.25%) $20.63 Total $270.63 Paid $0.00 Balance due $270.63');
      expect(pdf.text).to.include('Note Thank you for your business.');
      expect(pdf.text).to.include(`Pay online ${PAY_URL}`);
      expect(pdf.links).to.deep.equal([PAY_URL]);
      expect(pdf.text).to.include('Invoice INV-0042 · Page 1 of 1');
    });

    it('leaves out terms the invoice does not state, and an empty memo', async () => {
      const pdf = await readPdf(await renderInvoicePdf(buildInput({ paymentTermsDays: null, memo: '' })));

      expect(pdf.text).to.include('Due date 2026-04-14 Currency USD');
      expect(pdf.text).to.not.include('Terms');
      expect(pdf.text).to.not.include('Note');
    });

    it('writes euro, pound and accented Latin text as it is', async () => {
      const eur = await readPdf(
        await renderInvoicePdf(
          buildInput(
            {
              currency: 'EUR',
              customer: { id: 'customer-1', name: 'Łukasz Dvořák Øresund', email: null },
              lines: [buildLine({ description: 'Café crème, naïve façade, Ærøskøbing, Ğ İ ş ț', quantity: '1.5', unitPriceCents: 123456n, amountCents: 185184n })],
              subtotalCents: 185184n,
              totalCents: 185184n,
            },
            { business: { name: 'Société Générale d’Études' } },
          ),
        ),
      );
      const gbp = await readPdf(await renderInvoicePdf(buildInput({ currency: 'GBP' })));

      expect(eur.text).to.include('Société Générale d’Études');
      expect(eur.text).to.include('Łukasz Dvořák Øresund');
      expect(eur.text).to.include('Café crème, naïve façade, Ærøskøbing, Ğ İ ş ț 1.5 €1,234.56 €1,851.84');
      expect(gbp.text).to.include('Consulting 2 £125.00 £250.00');
    });

    it('wraps a long description inside its column, every word kept, in order, before the line’s figures', async () => {
      const description = words(120, 'alpha');
      const bytes = await renderInvoicePdf(buildInput({ lines: [buildLine({ description })] }));
      const pdf = await readPdf(bytes);

      expect(pdf.text).to.include(`${description} 2 $125.00 $250.00`);
      const runs = pdf.items[0]!.filter((item) => /alpha\d/.test(item.str));
      expect(new Set(runs.map((item) => Math.round(item.y))).size, 'lines the description takes').to.be.greaterThan(4);
      for (const run of runs) expect(run.x + run.width, `"${run.str}" stays inside the right margin`).to.be.at.most(rightMargin(pdf));
    });

    it('breaks a word longer than its column instead of cutting it', async () => {
      const word = 'x'.repeat(300);
      const pdf = await readPdf(await renderInvoicePdf(buildInput({ lines: [buildLine({ description: word })] })));

      expect(pdf.text.replace(/ /g, '')).to.include(`${word}2$125.00$250.00`);
      for (const run of pdf.items[0]!) expect(run.x + run.width, `"${run.str.slice(0, 20)}…" stays inside the right margin`).to.be.at.most(rightMargin(pdf));
    });

    it('carries a description taller than a page onto the next page, whole, its figures where it starts', async () => {
      // Wide figures leave the description a narrow column, and 2000 characters of wide capitals
      // then take more lines than a whole page holds.
      const description = Array.from({ length: 166 }, (_, index) => `WWWWWWWW${String(index).padStart(3, '0')}`).join(' ');
      expect(description.length).to.be.at.most(2000);
      const priceCents = 99_999_999_999_999n;
      const pdf = await readPdf(
        await renderInvoicePdf(buildInput({ lines: [buildLine({ description, quantity: '1', unitPriceCents: priceCents, amountCents: priceCents })], subtotalCents: priceCents, totalCents: priceCents })),
      );

      expect(pdf.text.match(/WWWWWWWW\d{3}/g), 'every word of the description, once, in order').to.deep.equal(description.split(' '));
      const pageOf = (text: string) => pdf.pageTexts.findIndex((page) => page.includes(text));
      const first = pageOf('WWWWWWWW000');
      const last = pageOf('WWWWWWWW165');
      expect(first, 'the row starts on the first page, under the headings').to.equal(0);
      expect(last, 'the description ends a page later than it starts').to.equal(first + 1);
      expect(pdf.pageTexts[first], 'the figures stay on the page where the row starts').to.include('1 $999,999,999,999.99 $999,999,999,999.99');
      expect(pdf.pageTexts[pdf.pageCount - 1]).to.include('Balance due $999,999,999,999.99');
    });

    it('flows many lines onto further pages: headings on each, every line once, the totals after the last', async () => {
      const pdf = await readPdf(await renderInvoicePdf(buildInput(manyLines(150))));

      expect(pdf.pageCount).to.be.greaterThan(2);
      for (const [index, text] of pdf.pageTexts.entries()) {
        expect(text, `page ${index + 1}`).to.include('Description Quantity Unit price Amount');
        expect(text, `page ${index + 1}`).to.include(`Invoice INV-0042 · Page ${index + 1} of ${pdf.pageCount}`);
        if (index > 0) expect(text, `page ${index + 1}`).to.match(/^Invoice INV-0042 \(continued\)/);
      }
      for (let n = 1; n <= 150; n += 1) {
        expect(pdf.text.match(new RegExp(`Item ${n} 1 \\$10\\.00 \\$10\\.00`, 'g')), `Item ${n}`).to.have.lengthOf(1);
      }
      const last = pdf.pageTexts[pdf.pageCount - 1]!;
      expect(last).to.include('Item 150 1 $10.00 $10.00');
      expect(last).to.include('Subtotal $1,500.00 Tax $0.00 Total $1,500.00 Paid $0.00 Balance due $1,500.00');
      expect(last.indexOf('Item 150')).to.be.lessThan(last.indexOf('Subtotal'));
    });

    it('lists each payment and the balance left; a settled invoice says it is paid and links to view, not pay', async () => {
      const payment = { id: 'payment-1', amountCents: 10000n, method: 'wire' as const, paidAt: '2026-03-20', usdCents: 10000n, receivableUsdCents: 10000n };
      const partly = await readPdf(await renderInvoicePdf(buildInput({ status: 'partially_paid', paidCents: 10000n, payments: [payment] })));
      const settled = await readPdf(
        await renderInvoicePdf(buildInput({ status: 'paid', paidCents: 25000n, payments: [payment, { ...payment, id: 'payment-2', amountCents: 15000n, paidAt: '2026-03-25', method: 'check' }] })),
      );

      expect(partly.text).to.include('Total $250.00 Paid $100.00 Balance due $150.00');
      expect(partly.text).to.include('Payments received $100.00 received on 2026-03-20 (wire)');
      expect(partly.text).to.include(`Pay online ${PAY_URL}`);
      expect(partly.text).to.not.include('paid in full');
      expect(settled.text).to.include('This invoice is paid in full. Thank you.');
      expect(settled.text).to.include('Paid $250.00 Balance due $0.00');
      expect(settled.text).to.include('$150.00 received on 2026-03-25 (check)');
      expect(settled.text).to.include(`View online ${PAY_URL}`);
    });

    it('says a void invoice owes nothing', async () => {
      const pdf = await readPdf(await renderInvoicePdf(buildInput({ status: 'void' })));

      expect(pdf.text).to.include('This invoice was voided. Nothing is owed on it.');
      expect(pdf.text).to.include('Total $250.00 Paid $0.00 Balance due $0.00');
      expect(pdf.text).to.include(`View online ${PAY_URL}`);
    });

    it('embeds its fonts: subsets of DejaVu Sans, no standard font left to the reader', async () => {
      expectEmbeddedFontsOnly(await renderInvoicePdf(buildInput({ status: 'paid', paidCents: 25000n })));
    });

    it('gives the same bytes for the same invoice, dated by its issue date rather than the time it was made', async () => {
      const first = await renderInvoicePdf(buildInput());
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const second = await renderInvoicePdf(buildInput());
      const paid = await renderInvoicePdf(buildInput({ status: 'partially_paid', paidCents: 100n }));

      expect(second.equals(first), 'same bytes').to.equal(true);
      expect(paid.equals(first), 'another state, other bytes').to.equal(false);
      const { info } = await readPdf(first);
      expect(info.CreationDate).to.equal('D:20260315000000Z');
      expect(info.ModDate).to.equal('D:20260315000000Z');
      expect(info.Title).to.equal('Invoice INV-0042 from Harbor Design');
    });

    it('refuses a pay link that is not http(s)', async () => {
      for (const payUrl of ['javascript:alert(1)', 'file:///etc/passwd', 'not a url']) {
        let thrown: unknown;
        await renderInvoicePdf(buildInput({}, { payUrl })).catch((error: unknown) => (thrown = error));
        expect(thrown, payUrl).to.be.an('error');
      }
    });
  });

  describe('the bound on one render (MAX_PDF_DESCRIPTION_CHARACTERS)', () => {
    it('the largest invoice the spec allows (500 lines of 2,000 characters) lists the lines up to the bound, says how many more the pay page shows, and totals the whole invoice', async () => {
      const lines = Array.from({ length: 500 }, (_, index) => buildLine({ description: `Line ${index + 1} `.padEnd(2_000, 'x'), quantity: '1', unitPriceCents: 100n, amountCents: 100n }));
      const shown = MAX_PDF_DESCRIPTION_CHARACTERS / 2_000;
      expect(linesShownInPdf(lines)).to.equal(shown);

      const pdf = await readPdf(await renderInvoicePdf(buildInput({ lines, subtotalCents: 50_000n, totalCents: 50_000n })));

      expect(pdf.text).to.include(`Line ${shown} x`);
      expect(pdf.text).to.not.include(`Line ${shown + 1} x`);
      expect(pdf.text).to.include(`${500 - shown} more lines of the 500 on this invoice are not printed here; the pay page lists them all: https://`);
      expect(pdf.text.replace(/ /g, ''), 'the link, wrapped where it meets the margin').to.include(`liststhemall:${PAY_URL}`);
      expect(pdf.text).to.include('Total $500.00');
    });

    it('counts description characters line by line, and always shows the first line', () => {
      const line = (characters: number) => ({ description: 'x'.repeat(characters) });
      expect(linesShownInPdf([line(10), line(20)])).to.equal(2);
      expect(linesShownInPdf([line(MAX_PDF_DESCRIPTION_CHARACTERS), line(1)])).to.equal(1);
      expect(linesShownInPdf([line(MAX_PDF_DESCRIPTION_CHARACTERS + 1), line(1)])).to.equal(1);
      expect(linesShownInPdf([line(MAX_PDF_DESCRIPTION_CHARACTERS - 1), line(1), line(1)])).to.equal(2);
    });
  });

  describe('renderVoidInvoicePdf', () => {
    it('one page: the heading, the parties and that nothing is owed; no lines, no totals, no pay link', async () => {
      const pdf = await readPdf(await renderVoidInvoicePdf(buildInput({ status: 'void', lines: manyLines(90).lines! })));
      expect(pdf.pageCount).to.equal(1);
      expect(pdf.text).to.include('Harbor Design Invoice INV-0042');
      expect(pdf.text).to.include('Bill to Jo Customer');
      expect(pdf.text).to.include('This invoice was voided. Nothing is owed on it.');
      expect(pdf.text).to.not.include('Item 1');
      expect(pdf.text).to.not.include('Total');
      expect(pdf.links).to.deep.equal([]);
    });

    it('refuses an invoice that is not void', async () => {
      let refused: unknown;
      await renderVoidInvoicePdf(buildInput({ status: 'sent' })).catch((error: unknown) => (refused = error));
      expect(String(refused)).to.match(/is sent, not void/);
    });
  });

  describe('paperSizeFor', () => {
    it('is Letter for USD, CAD and MXN, A4 for EUR and GBP', () => {
      expect(Object.fromEntries(CURRENCIES.map((currency) => [currency, paperSizeFor(currency)]))).to.deep.equal({ USD: 'LETTER', CAD: 'LETTER', MXN: 'LETTER', EUR: 'A4', GBP: 'A4' });
    });

    it('makes pages of that size: Letter 612 x 792 points, A4 595.28 x 841.89', async () => {
      const letter = await readPdf(await renderInvoicePdf(buildInput({ currency: 'USD' })));
      const a4 = await readPdf(await renderInvoicePdf(buildInput({ currency: 'EUR' })));

      expect(letter.pageSizes).to.deep.equal([PAPER_POINTS.LETTER]);
      expect(a4.pageSizes).to.deep.equal([PAPER_POINTS.A4]);
      expect(PAPER_POINTS).to.deep.equal({ LETTER: { width: 612, height: 792 }, A4: { width: 595.28, height: 841.89 } });
    });
  });

  describe('invoicePdfFilename', () => {
    it('is the invoice number with .pdf', () => {
      expect(invoicePdfFilename('INV-0001')).to.equal('INV-0001.pdf');
    });

    it('refuses a number that could break a header: quotes, slashes, line breaks, nothing', () => {
      for (const number of ['INV"1', 'a/b', 'INV\r\n1', '', 'x'.repeat(41)]) expect(() => invoicePdfFilename(number), JSON.stringify(number)).to.throw(/unexpected invoice number/);
    });
  });
});
