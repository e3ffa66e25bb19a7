import { expect } from 'chai';
import { type InvoiceEmailInput, invoiceEmail, reminderEmail, type ReminderEmailInput } from '../../src/books/invoice-mail.js';

const invoice: InvoiceEmailInput = {
  businessName: 'Acme Ltd',
  customerName: 'Jo Customer',
  invoiceNumber: '1001',
  amountFormatted: '€1,200.00',
  currency: 'EUR',
  dueDate: '2026-04-14',
  payUrl: 'https://books.example.com/pay/abc?x=1&y=2',
};

const reminder: ReminderEmailInput = { ...invoice, balanceFormatted: '€700.00', daysOverdue: 14 };

describe('email templates', () => {
  describe('invoiceEmail', () => {
    it('names the business and the invoice number in the subject', () => {
      expect(invoiceEmail(invoice).subject).to.equal('Invoice 1001 from Acme Ltd');
    });

    it('gives the amount, the due date and the pay link in the text', () => {
      const { text } = invoiceEmail(invoice);
      expect(text).to.include('Hello Jo Customer,');
      expect(text).to.include('€1,200.00 (EUR)');
      expect(text).to.include('2026-04-14');
      expect(text).to.include('Pay online: https://books.example.com/pay/abc?x=1&y=2');
    });

    it('gives a heading, a details table and a clear pay link in the HTML', () => {
      const { html } = invoiceEmail(invoice);
      expect(html).to.match(/<h1[^>]*>Invoice 1001 from Acme Ltd<\/h1>/);
      expect(html).to.match(/<table[^>]*>/);
      expect(html).to.match(/<th scope="row"[^>]*>Amount due<\/th><td[^>]*>€1,200.00 \(EUR\)<\/td>/);
      expect(html).to.include('<a href="https://books.example.com/pay/abc?x=1&amp;y=2"');
      expect(html).to.match(/>Pay invoice 1001<\/a>/);
      expect(html).to.include('<html lang="en">');
    });

    it('has no scripts, stylesheets, remote images or other fetched resources', () => {
      const { html } = invoiceEmail(invoice);
      expect(html).not.to.match(/<script|<style|<link|<img|<iframe|\ssrc=|url\(/i);
    });

    it('escapes <, &, and quotes in every value in the HTML and keeps them as they are in the text', () => {
      const hostile = `<script>alert("x")</script> & 'Sons'`;
      const email = invoiceEmail({ ...invoice, businessName: hostile, customerName: hostile, invoiceNumber: `<b>1</b>"` });
      expect(email.html).not.to.include('<script');
      expect(email.html).not.to.include('<b>');
      expect(email.html).to.include('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;Sons&#39;');
      expect(email.html).to.include('&lt;b&gt;1&lt;/b&gt;&quot;');
      expect(email.text).to.include(`Hello ${hostile},`);
      expect(email.text).to.include('<b>1</b>"');
    });

    it('strips CR and LF (and other control characters) from what goes into the subject', () => {
      const email = invoiceEmail({ ...invoice, businessName: 'Acme\r\nBcc: attacker@evil.test', invoiceNumber: '10\n01\t' });
      expect(email.subject).to.equal('Invoice 10 01 from Acme Bcc: attacker@evil.test');
      expect(email.subject).not.to.match(/[\r\n]/);
    });

    it('refuses a pay link that is not http(s) and a due date that is not YYYY-MM-DD', () => {
      expect(() => invoiceEmail({ ...invoice, payUrl: 'javascript:alert(1)' })).to.throw(/payUrl/);
      expect(() => invoiceEmail({ ...invoice, payUrl: '/pay/abc' })).to.throw(/payUrl/);
      expect(() => invoiceEmail({ ...invoice, dueDate: '14/04/2026' })).to.throw(/dueDate/);
    });
  });

  describe('reminderEmail', () => {
    it('says how many days overdue and the balance still owed', () => {
      const email = reminderEmail(reminder);
      expect(email.subject).to.equal('Overdue: invoice 1001 from Acme Ltd');
      expect(email.text).to.include('was due on 2026-04-14 and is 14 days overdue');
      expect(email.text).to.include('€700.00 (EUR)');
      expect(email.text).to.include('€1,200.00 (EUR)');
      expect(email.text).to.include('Pay online: https://books.example.com/pay/abc?x=1&y=2');
      expect(email.html).to.match(/<th scope="row"[^>]*>Balance due<\/th><td[^>]*>€700.00 \(EUR\)<\/td>/);
      expect(email.html).to.include('<a href="https://books.example.com/pay/abc?x=1&amp;y=2"');
    });

    it('says "1 day" for one day overdue', () => {
      expect(reminderEmail({ ...reminder, daysOverdue: 1 }).text).to.include('is 1 day overdue');
    });

    it('says "due on" when the invoice is not yet overdue (daysOverdue <= 0)', () => {
      for (const daysOverdue of [0, -3]) {
        const email = reminderEmail({ ...reminder, daysOverdue });
        expect(email.subject).to.equal('Reminder: invoice 1001 from Acme Ltd');
        expect(email.text).to.include('invoice 1001 from Acme Ltd is due on 2026-04-14.');
        expect(email.text).not.to.include('overdue');
      }
    });

    it('escapes values in the HTML and strips line breaks from the subject', () => {
      const email = reminderEmail({ ...reminder, businessName: 'A & B <Co>\r\nX-Evil: 1' });
      expect(email.html).to.include('A &amp; B &lt;Co&gt;');
      expect(email.html).not.to.include('<Co>');
      expect(email.subject).to.equal('Overdue: invoice 1001 from A & B <Co> X-Evil: 1');
    });

    it('refuses a daysOverdue that is not a whole number', () => {
      expect(() => reminderEmail({ ...reminder, daysOverdue: 1.5 })).to.throw(/daysOverdue/);
      expect(() => reminderEmail({ ...reminder, daysOverdue: Number.NaN })).to.throw(/daysOverdue/);
    });
  });
});
