import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import { setRate } from '../../src/books/fx.js';
import { findEmail, RETRY_BASE_MS } from '../../src/store/outbox.js';
import { deliverEmails } from '../../src/email/deliver.js';
import { createMailer } from '../../src/email/mailer.js';
import { createLogger, type Logger } from '../../src/log.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { countRows, expectError } from '../support/api.js';
import { buildBusiness, buildKey, buildTenant } from '../support/factories.js';
import { invoiceBody, invoiceLine, payInvoice, sendInvoice } from '../support/invoicing.js';
import { readPdf } from '../support/pdf.js';
import { addresses, header, type ParsedMessage, parseMessage, part, startSmtp, type TestSmtp } from '../support/smtp.js';

/**
 * The emails the send and remind calls write, delivered through a real SMTP server on
 * loopback (smtp-server, no TLS, no authentication) and read back from the bytes it received.
 */

const MAIL_FROM_NAME = 'Daybook Billing';
const MAIL_FROM_ADDRESS = 'billing@daybook.test';
const MAIL_FROM = `${MAIL_FROM_NAME} <${MAIL_FROM_ADDRESS}>`;
const SITE_URL = 'https://books.example.test';
const START = '2026-03-15T12:00:00.000Z';
const HOUR_MS = 60 * 60 * 1000;

// --- The one message the SMTP server holds, read back (test/support/smtp.ts). ---

/** A message from the mailer: text and HTML alternatives, both present, and the invoice's PDF. */
type InvoiceMessage = ParsedMessage & { text: string; html: string };

/** The message's one attachment, checked to be the invoice's PDF by name, type and disposition, then read. */
async function attachedInvoicePdf(message: InvoiceMessage, invoiceNumber: string): Promise<Awaited<ReturnType<typeof readPdf>>> {
  const [attachment] = message.attachments;
  expect({ filename: attachment!.filename, contentType: attachment!.contentType, disposition: attachment!.disposition }).to.deep.equal({
    filename: `${invoiceNumber}.pdf`,
    contentType: 'application/pdf',
    disposition: 'attachment',
  });
  return readPdf(attachment!.content);
}

/**
 * The one message the server holds, checked to have gone from mailFrom to `to` alone, as text
 * and HTML alternatives followed by one attached PDF.
 */
async function onlyMessage(smtp: TestSmtp, to: string): Promise<InvoiceMessage> {
  expect(smtp.received, 'messages the SMTP server holds').to.have.lengthOf(1);
  const [received] = smtp.received;
  expect(received!.from, 'envelope sender').to.equal(MAIL_FROM_ADDRESS);
  expect(received!.to, 'envelope recipients').to.deep.equal([to]);
  const message = await parseMessage(received!.raw);
  expect(header(message, 'content-type').toLowerCase(), 'the message is the alternatives, then the attachment').to.equal('multipart/mixed');
  const [, alternatives, ...partTypes] = message.contentTypes.map((type) => type.toLowerCase());
  expect(alternatives!.split(';')[0]).to.equal('multipart/alternative');
  expect(partTypes.map((type) => type.split(';')[0])).to.deep.equal(['text/plain', 'text/html', 'application/pdf']);
  for (const type of partTypes.slice(0, 2)) expect(type, 'each text part says its charset').to.include('charset=utf-8');
  expect(message.attachments, 'one attachment').to.have.lengthOf(1);
  expect(addresses(message, 'from')).to.deep.equal([{ name: MAIL_FROM_NAME, address: MAIL_FROM_ADDRESS }]);
  expect(addresses(message, 'to')).to.deep.equal([{ name: '', address: to }]);
  for (const name of ['cc', 'bcc', 'reply-to']) expect(message.headers.has(name), `no ${name} header`).to.equal(false);
  return { ...message, text: part(message, 'text'), html: part(message, 'html') };
}

// --- The books: tenants and customers built directly, invoices through the API. ---

interface Books {
  tenantId: string;
  businessId: string;
  businessName: string;
  key: string;
}

let tenantCounter = 0;

/** A tenant with one business (named as asked) and one read-write key. */
function newBooks(app: TestApp, businessName = `Acme Studio ${++tenantCounter}`): Books {
  const tenant = buildTenant(app.db, app.clock, { plan: 'large' });
  const business = buildBusiness(app.db, app.clock, { tenantId: tenant.id, name: businessName });
  const { key } = buildKey(app.db, app.clock, { tenantId: tenant.id });
  return { tenantId: tenant.id, businessId: business.id, businessName, key };
}

/** A customer created through POST /customers (so its name passed the API's rules). */
async function newCustomer(app: TestApp, books: Books, name: string, email: string | null): Promise<string> {
  const res = await app.post('/api/v1/customers', books.key, { name, ...(email === null ? {} : { email }) });
  expect(res.status, res.text).to.equal(201);
  return res.body.id as string;
}

interface DraftOptions {
  customerId: string;
  currency?: string;
  lines?: { description: string; quantity: string; unitPriceCents: string }[];
  taxRatePercent?: string;
}

/** A draft issued on 2026-03-15, due 2026-04-14; its webUrl is under the configured site URL. */
async function newDraft(app: TestApp, books: Books, options: DraftOptions): Promise<{ id: string; number: string }> {
  const lines = (options.lines ?? [{ description: 'Consulting', quantity: '2', unitPriceCents: '50000' }]).map((line) => invoiceLine(app, books.businessId, line));
  const res = await app.post(
    '/api/v1/invoices',
    books.key,
    invoiceBody(app, books.businessId, options.customerId, {
      issueDate: '2026-03-15',
      dueDate: '2026-04-14',
      lines,
      currency: options.currency,
      taxRatePercent: options.taxRatePercent,
    }),
  );
  expect(res.status, res.text).to.equal(201);
  expect(res.body.webUrl).to.match(new RegExp(`^${SITE_URL.replace(/[.]/g, '\\.')}/pay/[A-Za-z0-9_-]{43}$`));
  return { id: res.body.invoiceId, number: res.body.invoiceNumber };
}

interface OutboxRow {
  id: string;
  kind: string;
  to_address: string;
  subject: string;
  status: string;
  attempts: bigint;
  next_attempt_at: string;
  last_error: string | null;
  sent_at: string | null;
}

function outboxRows(app: TestApp, invoiceId: string): OutboxRow[] {
  return app.db.prepare('SELECT * FROM email_outbox WHERE invoice_id = ? ORDER BY created_at, id').all(invoiceId) as OutboxRow[];
}

function capturingLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger('warn', { write: (line: string) => void lines.push(line) }), lines };
}

describe('invoice emails (a real SMTP server on loopback)', () => {
  let smtp: TestSmtp;
  let app: TestApp;

  before(async () => {
    smtp = await startSmtp();
    app = await startTestApp(START, { config: { smtpUrl: smtp.url, siteUrl: SITE_URL, mailFrom: MAIL_FROM } });
  });
  after(async () => {
    await app?.close();
    await smtp?.stop();
  });
  beforeEach(() => {
    app.clock.set(START);
    smtp.received.length = 0;
  });

  describe('POST /invoices/{id}/send', () => {
    it('emails the invoice to the customer before answering: from mailFrom, naming the business, the number, amount, currency, due date and pay link', async () => {
      const books = newBooks(app);
      setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-13', usdPerUnit: '1.08' });
      const customerId = await newCustomer(app, books, 'Jo Customer', 'jo@customer.test');
      const draft = await newDraft(app, books, {
        customerId,
        currency: 'EUR',
        taxRatePercent: '10',
        lines: [
          { description: 'Design work', quantity: '10', unitPriceCents: '12000' },
          { description: 'Hosting', quantity: '1.5', unitPriceCents: '5000' },
        ],
      });
      expect(smtp.received, 'a draft emails nothing').to.have.lengthOf(0);

      const res = await app.post(`/api/v1/invoices/${draft.id}/send`, books.key);

      expect(res.status, res.text).to.equal(200);
      expect(res.body.status).to.equal('sent');
      // 1,200.00 + 75.00 = 1,275.00; tax 10% = 127.50; total 1,402.50.
      expect(res.body.total).to.deep.equal({ cents: '140250', formatted: '€1,402.50', currency: 'EUR' });
      const payUrl: string = res.body.payUrl;
      expect(payUrl.startsWith(`${SITE_URL}/pay/`), payUrl).to.equal(true);
      const detail = await app.get(`/api/v1/invoices/${draft.id}`, books.key);
      expect(detail.body.payUrl, 'the detail shows the same pay link').to.equal(payUrl);

      // Delivered before the answer: the server already holds it.
      const message = await onlyMessage(smtp, 'jo@customer.test');
      expect(header(message, 'subject')).to.equal(`Invoice ${draft.number} from ${books.businessName}`);
      expect(message.text).to.include('Hello Jo Customer,');
      expect(message.text).to.include(`${books.businessName} has sent you invoice ${draft.number}.`);
      expect(message.text).to.match(/Amount due: +€1,402\.50 \(EUR\)/);
      expect(message.text).to.match(/Due date: +2026-04-14/);
      expect(message.text).to.include(`Pay online: ${payUrl}`);
      expect(message.html).to.include('€1,402.50 (EUR)');
      expect(message.html).to.include('2026-04-14');
      expect(message.html).to.include(`href="${payUrl}"`);
      expect(message.html).to.include(`>${payUrl}</a>`);
      expect(message.html).to.not.match(/<script|<img|<link|src=/i);

      const rows = outboxRows(app, draft.id);
      expect(rows).to.have.lengthOf(1);
      expect(rows[0]).to.include({ kind: 'invoice', to_address: 'jo@customer.test', status: 'sent', attempts: 1n, last_error: null, sent_at: START });
    });

    it('attaches the invoice as a PDF: one attachment named after the invoice number, application/pdf, showing the invoice and the emailed pay link', async () => {
      const books = newBooks(app);
      setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-13', usdPerUnit: '1.08' });
      const customerId = await newCustomer(app, books, 'Pdf Customer', 'pdf@customer.test');
      const draft = await newDraft(app, books, { customerId, currency: 'EUR', taxRatePercent: '10', lines: [{ description: 'Design work', quantity: '10', unitPriceCents: '12000' }] });

      const res = await app.post(`/api/v1/invoices/${draft.id}/send`, books.key);

      expect(res.status, res.text).to.equal(200);
      const message = await onlyMessage(smtp, 'pdf@customer.test');
      const pdf = await attachedInvoicePdf(message, draft.number);
      expect(pdf.text).to.include(`${books.businessName} Invoice ${draft.number}`);
      expect(pdf.text).to.include('Bill to Pdf Customer');
      expect(pdf.text).to.include('Design work 10 €120.00 €1,200.00');
      expect(pdf.text).to.include(`Total ${res.body.total.formatted} Paid €0.00 Balance due ${res.body.balance.formatted}`);
      expect(pdf.text).to.include(`Pay online ${res.body.payUrl}`);
      expect(message.text).to.include(`Pay online: ${res.body.payUrl}`);
    });

    it('replays the same 200 with idempotent-replayed: true and emails nothing more', async () => {
      const books = newBooks(app);
      const customerId = await newCustomer(app, books, 'Replay Customer', 'replay@customer.test');
      const draft = await newDraft(app, books, { customerId });
      const headers = { 'idempotency-key': 'send-once-please' };

      const first = await app.post(`/api/v1/invoices/${draft.id}/send`, books.key, undefined, headers);
      expect(first.status, first.text).to.equal(200);
      expect(first.headers['idempotent-replayed']).to.equal(undefined);
      expect(smtp.received).to.have.lengthOf(1);

      app.clock.advanceMs(5 * 60_000);
      const replay = await app.post(`/api/v1/invoices/${draft.id}/send`, books.key, undefined, headers);
      expect(replay.status).to.equal(200);
      expect(replay.headers['idempotent-replayed']).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);

      expect(smtp.received, 'still one message on the server').to.have.lengthOf(1);
      expect(outboxRows(app, draft.id).map((row) => row.status)).to.deep.equal(['sent']);
      expect(countRows(app.db, "SELECT COUNT(*) FROM audit_log WHERE action = 'invoice.send' AND subject_id = ?", draft.id)).to.equal(1);
    });

    it('refuses a second send without an Idempotency-Key (409 conflict) and emails nothing', async () => {
      const books = newBooks(app);
      const customerId = await newCustomer(app, books, 'Twice Customer', 'twice@customer.test');
      const draft = await newDraft(app, books, { customerId });
      await sendInvoice(app, books.key, draft.id);

      expectError(await app.post(`/api/v1/invoices/${draft.id}/send`, books.key), 409, 'conflict');

      expect(smtp.received).to.have.lengthOf(1);
      expect(outboxRows(app, draft.id)).to.have.lengthOf(1);
    });

    it('sends and posts an invoice whose customer has no email address, emailing nobody', async () => {
      const books = newBooks(app);
      const customerId = await newCustomer(app, books, 'No Mail Customer', null);
      const draft = await newDraft(app, books, { customerId });

      const res = await app.post(`/api/v1/invoices/${draft.id}/send`, books.key);

      expect(res.status, res.text).to.equal(200);
      expect(res.body.status).to.equal('sent');
      expect(smtp.received).to.have.lengthOf(0);
      expect(outboxRows(app, draft.id)).to.have.lengthOf(0);
    });
  });

  describe('POST /invoices/{id}/remind', () => {
    it('emails a reminder naming the invoice, with the balance still owed and the pay link', async () => {
      const books = newBooks(app);
      const customerId = await newCustomer(app, books, 'Remind Customer', 'remind@customer.test');
      const draft = await newDraft(app, books, { customerId, lines: [{ description: 'Retainer', quantity: '1', unitPriceCents: '100000' }] });
      const sent = await app.post(`/api/v1/invoices/${draft.id}/send`, books.key);
      const payUrl: string = sent.body.payUrl;
      await payInvoice(app, books.key, draft.id, '25000');
      smtp.received.length = 0;

      app.clock.set('2026-03-20T09:30:00.000Z');
      const res = await app.post(`/api/v1/invoices/${draft.id}/remind`, books.key);

      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ invoiceId: draft.id, remindedAt: '2026-03-20T09:30:00.000Z' });
      const message = await onlyMessage(smtp, 'remind@customer.test');
      expect(header(message, 'subject')).to.equal(`Reminder: invoice ${draft.number} from ${books.businessName}`);
      expect(message.text).to.include(`This is a reminder that invoice ${draft.number} from ${books.businessName} is due on 2026-04-14.`);
      expect(message.text).to.match(/Invoice total: +\$1,000\.00 \(USD\)/);
      expect(message.text).to.match(/Balance due: +\$750\.00 \(USD\)/);
      expect(message.text).to.include(`Pay online: ${payUrl}`);
      expect(message.html).to.include('$750.00 (USD)');
      expect(message.html).to.include(`href="${payUrl}"`);

      const reminders = outboxRows(app, draft.id).filter((row) => row.kind === 'reminder');
      expect(reminders).to.have.lengthOf(1);
      expect(reminders[0]).to.include({ status: 'sent', attempts: 1n, to_address: 'remind@customer.test' });
    });

    it('attaches the invoice’s PDF to the reminder too, named after its number, showing what was paid and the balance left', async () => {
      const books = newBooks(app);
      const customerId = await newCustomer(app, books, 'Pdf Reminded', 'pdf-remind@customer.test');
      const draft = await newDraft(app, books, { customerId, lines: [{ description: 'Retainer', quantity: '1', unitPriceCents: '100000' }] });
      await sendInvoice(app, books.key, draft.id);
      await payInvoice(app, books.key, draft.id, '25000');
      smtp.received.length = 0;

      const res = await app.post(`/api/v1/invoices/${draft.id}/remind`, books.key);

      expect(res.status, res.text).to.equal(200);
      const message = await onlyMessage(smtp, 'pdf-remind@customer.test');
      const detail = await app.get(`/api/v1/invoices/${draft.id}`, books.key);
      const pdf = await attachedInvoicePdf(message, draft.number);
      expect(pdf.text).to.include('Retainer 1 $1,000.00 $1,000.00');
      expect(pdf.text).to.include('Total $1,000.00 Paid $250.00 Balance due $750.00');
      expect(pdf.text).to.include(`$250.00 received on 2026-03-15 (check)`);
      expect(pdf.text).to.include(`Pay online ${detail.body.payUrl}`);
    });

    it('says how many days overdue a past-due invoice is', async () => {
      const books = newBooks(app);
      const customerId = await newCustomer(app, books, 'Late Customer', 'late@customer.test');
      const draft = await newDraft(app, books, { customerId });
      await sendInvoice(app, books.key, draft.id);
      smtp.received.length = 0;

      app.clock.set('2026-04-17T08:00:00.000Z');
      const res = await app.post(`/api/v1/invoices/${draft.id}/remind`, books.key);

      expect(res.status, res.text).to.equal(200);
      const message = await onlyMessage(smtp, 'late@customer.test');
      expect(header(message, 'subject')).to.equal(`Overdue: invoice ${draft.number} from ${books.businessName}`);
      expect(message.text).to.include(`was due on 2026-04-14 and is 3 days overdue.`);
    });

    it('refuses a second reminder within 24 hours (409 conflict) and emails nothing; after 24 hours the next one goes', async () => {
      const books = newBooks(app);
      const customerId = await newCustomer(app, books, 'Cooldown Customer', 'cooldown@customer.test');
      const draft = await newDraft(app, books, { customerId });
      await sendInvoice(app, books.key, draft.id);
      smtp.received.length = 0;

      expect((await app.post(`/api/v1/invoices/${draft.id}/remind`, books.key)).status).to.equal(200);
      expect(smtp.received).to.have.lengthOf(1);

      app.clock.advanceMs(24 * HOUR_MS - 1000);
      expectError(await app.post(`/api/v1/invoices/${draft.id}/remind`, books.key), 409, 'conflict');
      expect(smtp.received, 'nothing more emailed').to.have.lengthOf(1);
      expect(outboxRows(app, draft.id).filter((row) => row.kind === 'reminder')).to.have.lengthOf(1);

      app.clock.advanceMs(1000);
      const later = await app.post(`/api/v1/invoices/${draft.id}/remind`, books.key);
      expect(later.status, later.text).to.equal(200);
      expect(smtp.received).to.have.lengthOf(2);
    });

    it('replays a keyed reminder (idempotent-replayed: true) without a 409 and without a second email', async () => {
      const books = newBooks(app);
      const customerId = await newCustomer(app, books, 'Keyed Customer', 'keyed@customer.test');
      const draft = await newDraft(app, books, { customerId });
      await sendInvoice(app, books.key, draft.id);
      smtp.received.length = 0;
      const headers = { 'idempotency-key': 'remind-2026-03-15' };

      const first = await app.post(`/api/v1/invoices/${draft.id}/remind`, books.key, undefined, headers);
      app.clock.advanceMs(HOUR_MS);
      const replay = await app.post(`/api/v1/invoices/${draft.id}/remind`, books.key, undefined, headers);

      expect(first.status, first.text).to.equal(200);
      expect(replay.status, replay.text).to.equal(200);
      expect(replay.headers['idempotent-replayed']).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);
      expect(smtp.received).to.have.lengthOf(1);
      expect(outboxRows(app, draft.id).filter((row) => row.kind === 'reminder')).to.have.lengthOf(1);
    });

    it('reminds on a viewed invoice: the emailed link opens the pay page, which marks it viewed', async () => {
      const books = newBooks(app);
      const customerId = await newCustomer(app, books, 'Viewer Customer', 'viewer@customer.test');
      const draft = await newDraft(app, books, { customerId });
      await sendInvoice(app, books.key, draft.id);
      const emailed = await onlyMessage(smtp, 'viewer@customer.test');
      const link = /Pay online: (\S+)/.exec(emailed.text)?.[1];
      expect(link, 'the pay link in the text part').to.be.a('string');
      smtp.received.length = 0;

      const page = await app.get(new URL(link!).pathname, null);
      expect(page.status).to.equal(200);
      expect(page.text).to.include(`Invoice ${draft.number}`);
      expect((await app.get(`/api/v1/invoices/${draft.id}`, books.key)).body.status).to.equal('viewed');

      const res = await app.post(`/api/v1/invoices/${draft.id}/remind`, books.key);
      expect(res.status, res.text).to.equal(200);
      const reminder = await onlyMessage(smtp, 'viewer@customer.test');
      expect(reminder.text).to.include(`Pay online: ${link}`);
    });

    it('refuses to remind on a draft (409 conflict) and emails nothing', async () => {
      const books = newBooks(app);
      const customerId = await newCustomer(app, books, 'Draft Customer', 'draft@customer.test');
      const draft = await newDraft(app, books, { customerId });

      expectError(await app.post(`/api/v1/invoices/${draft.id}/remind`, books.key), 409, 'conflict');

      expect(smtp.received).to.have.lengthOf(0);
      expect(outboxRows(app, draft.id)).to.have.lengthOf(0);
    });
  });

  describe('names in the email', () => {
    it('escapes markup characters of the business and customer names in the HTML part and keeps them literal in the text part', async () => {
      const businessName = `Acme <b>&"' Ltd ${++tenantCounter}`;
      const books = newBooks(app, businessName);
      const customerName = `Jo <b>&"' Customer`;
      const customerId = await newCustomer(app, books, customerName, 'markup@customer.test');
      const draft = await newDraft(app, books, { customerId });

      await sendInvoice(app, books.key, draft.id);

      const message = await onlyMessage(smtp, 'markup@customer.test');
      expect(header(message, 'subject')).to.equal(`Invoice ${draft.number} from ${businessName}`);
      expect(message.text).to.include(`Hello ${customerName},`);
      expect(message.text).to.include(`${businessName} has sent you invoice ${draft.number}.`);
      const escapedBusiness = businessName.replace('<b>&"\'', '&lt;b&gt;&amp;&quot;&#39;');
      expect(message.html).to.include(`Hello Jo &lt;b&gt;&amp;&quot;&#39; Customer,`);
      expect(message.html).to.include(`<title>Invoice ${draft.number} from ${escapedBusiness}</title>`);
      expect(message.html).to.include(`Thank you,<br>${escapedBusiness}</p>`);
      expect(message.html).to.not.include('<b>');
      expect(message.html).to.not.include(`&"'`);
    });

    it('a customer name holding CR/LF (written straight to the books) adds no header', async () => {
      const books = newBooks(app);
      const customerId = await newCustomer(app, books, 'Plain Name', 'crlf@customer.test');
      // The API refuses control characters in names; a row written before that rule is still possible.
      app.db.prepare('UPDATE customers SET name = ? WHERE id = ?').run('Jo\r\nBcc: attacker@evil.test\r\nX-Injected: yes', customerId);
      const draft = await newDraft(app, books, { customerId });

      await sendInvoice(app, books.key, draft.id);

      const message = await onlyMessage(smtp, 'crlf@customer.test');
      expect(message.headers.has('x-injected')).to.equal(false);
      expect(message.headerBlock).to.not.include('attacker@evil.test');
      expect(header(message, 'subject')).to.equal(`Invoice ${draft.number} from ${books.businessName}`);
    });

    it('a business name holding CR/LF (written straight to the books) stays on the one subject line', async () => {
      const books = newBooks(app);
      app.db.prepare('UPDATE businesses SET name = ? WHERE id = ?').run('Evil Co\r\nBcc: attacker@evil.test', books.businessId);
      const customerId = await newCustomer(app, books, 'Header Customer', 'header@customer.test');
      const draft = await newDraft(app, books, { customerId });

      await sendInvoice(app, books.key, draft.id);

      const message = await onlyMessage(smtp, 'header@customer.test');
      expect(header(message, 'subject')).to.equal(`Invoice ${draft.number} from Evil Co Bcc: attacker@evil.test`);
      expect(message.headerBlock.split('\r\n').filter((line) => /^bcc:/i.test(line))).to.deep.equal([]);
    });
  });
});

describe('invoice emails while the SMTP server is down', () => {
  let smtp: TestSmtp;
  let port: number;
  let app: TestApp;
  let logged: string[];

  before(async () => {
    // Take a port for the server, then stop it: the app is configured for a server that is down.
    const first = await startSmtp();
    port = first.port;
    await first.stop();
    const capture = capturingLogger();
    logged = capture.lines;
    app = await startTestApp(START, { config: { smtpUrl: `smtp://127.0.0.1:${port}?tls=off`, siteUrl: SITE_URL, mailFrom: MAIL_FROM }, log: capture.log });
  });
  after(async () => {
    await app?.close();
    await smtp?.stop();
  });

  it('still sends and posts the invoice, leaves the email pending for a retry a minute later, logs no body, and delivers it once the server is back', async () => {
    const books = newBooks(app);
    const customerId = await newCustomer(app, books, 'Patient Customer', 'patient@customer.test');
    const draft = await newDraft(app, books, { customerId });

    const res = await app.post(`/api/v1/invoices/${draft.id}/send`, books.key);

    expect(res.status, res.text).to.equal(200);
    expect(res.body.status).to.equal('sent');
    const payToken = new URL(res.body.payUrl as string).pathname.split('/').pop()!;
    const posted = app.db.prepare("SELECT id FROM journal_entries WHERE source_type = 'invoice' AND source_id = ?").all(draft.id);
    expect(posted, 'the invoice is posted').to.have.lengthOf(1);

    const [row, ...others] = outboxRows(app, draft.id);
    expect(others).to.deep.equal([]);
    expect(row).to.include({ kind: 'invoice', status: 'pending', attempts: 1n, sent_at: null });
    expect(row!.next_attempt_at).to.equal(new Date(Date.parse(START) + RETRY_BASE_MS).toISOString());
    expect(row!.last_error).to.match(/ECONNREFUSED/);

    const warnings = logged.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.emailId === row!.id);
    expect(warnings).to.have.lengthOf(1);
    expect(warnings[0]).to.include({ msg: 'email not delivered; will retry', attempts: 1, status: 'pending', nextAttemptAt: row!.next_attempt_at });
    expect(String(warnings[0]!.error)).to.match(/ECONNREFUSED/);
    const everything = logged.join('\n');
    for (const secret of [payToken, 'Patient Customer', 'patient@customer.test', 'Pay online', books.businessName]) {
      expect(everything, `the log must not hold ${secret}`).to.not.include(secret);
    }

    // The server comes back on the same port.
    smtp = await startSmtp({ port });
    const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}?tls=off`, mailFrom: MAIL_FROM }, createLogger('silent'));
    const silent = createLogger('silent');
    try {
      expect(await deliverEmails(app.db, app.clock, mailer, silent), 'not due yet').to.deep.equal({ sent: 0, failed: 0, retrying: 0 });
      expect(smtp.received).to.have.lengthOf(0);

      app.clock.advanceMs(RETRY_BASE_MS);
      expect(await deliverEmails(app.db, app.clock, mailer, silent)).to.deep.equal({ sent: 1, failed: 0, retrying: 0 });
      expect(await deliverEmails(app.db, app.clock, mailer, silent), 'nothing left to send').to.deep.equal({ sent: 0, failed: 0, retrying: 0 });
    } finally {
      mailer.close();
    }

    const message = await onlyMessage(smtp, 'patient@customer.test');
    expect(header(message, 'subject')).to.equal(`Invoice ${draft.number} from ${books.businessName}`);
    expect(message.text).to.include(`Pay online: ${res.body.payUrl}`);
    const email = findEmail(app.db, row!.id)!;
    expect(email).to.include({ status: 'sent', attempts: 2, sentAt: app.clock.now().toISOString() });
  });
});
