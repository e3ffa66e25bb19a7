import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import {
  EMAIL_KINDS,
  EMAIL_STATUSES,
  emailsDue,
  enqueueEmail,
  findEmail,
  MAX_ATTEMPTS,
  markEmailFailed,
  type NewEmail,
  retryDelayMs,
} from '../../src/store/outbox.js';
import type { FixedClock } from '../../src/clock.js';
import { inTransaction } from '../../src/db/connection.js';
import { deliverEmails } from '../../src/email/deliver.js';
import { createMailer, type Mailer, SMTP_TIMEOUTS_MS } from '../../src/email/mailer.js';
import { invoiceEmail, type InvoiceEmailInput } from '../../src/books/invoice-mail.js';
import { createLogger, type Logger } from '../../src/log.js';
import { type TempDb, freshDb } from '../support/db.js';
import { buildBusiness, testClock } from '../support/factories.js';
import { captureLog } from '../support/log-capture.js';
import { addresses, header, parseMessage, part, startSmtp, type TestSmtp } from '../support/smtp.js';

const MAIL_FROM = 'Daybook <billing@daybook.test>';
const MINUTE_MS = 60_000;

// --- A real SMTP server on loopback (test/support/smtp.ts), and one that is not there. ---

/** A loopback port nothing listens on (bound, read, then released), as a plain relay's URL. */
async function deadSmtpUrl(): Promise<string> {
  const server = createServer();
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  await new Promise((resolve) => server.close(resolve));
  return `smtp://127.0.0.1:${port}?tls=off`;
}

// --- Outbox setup. ---

const INVOICE: InvoiceEmailInput = {
  businessName: 'Acme Ltd',
  customerName: 'Jo Customer',
  invoiceNumber: '1001',
  amountFormatted: '€1,200.00',
  currency: 'EUR',
  dueDate: '2026-04-14',
  payUrl: 'https://books.example.com/pay/inv-1001',
};

interface Scene {
  temp: TempDb;
  clock: FixedClock;
  tenantId: string;
  businessId: string;
}

async function scene(): Promise<Scene> {
  const temp = await freshDb();
  const clock = testClock();
  const business = buildBusiness(temp.db, clock);
  return { temp, clock, tenantId: business.tenantId, businessId: business.id };
}

function enqueue(s: Scene, overrides: Partial<InvoiceEmailInput> = {}, to = 'jo@customer.test'): string {
  const rendered = invoiceEmail({ ...INVOICE, ...overrides });
  const message: NewEmail = { tenantId: s.tenantId, businessId: s.businessId, kind: 'invoice', invoiceId: null, to, ...rendered };
  return inTransaction(s.temp.db, () => enqueueEmail(s.temp.db, s.clock, message));
}

const silent: Logger = createLogger('silent');

function isoPlus(clock: FixedClock, ms: number): string {
  return new Date(clock.now().getTime() + ms).toISOString();
}

describe('email delivery', () => {
  let s: Scene;
  beforeEach(async () => {
    s = await scene();
  });
  afterEach(() => s.temp.close());

  describe('the outbox (books)', () => {
    it('lists the same kinds and statuses as the schema', () => {
      const sql = (s.temp.db.prepare("SELECT sql FROM sqlite_master WHERE name = 'email_outbox'").get() as { sql: string }).sql;
      expect(sql).to.include(`kind IN (${EMAIL_KINDS.map((k) => `'${k}'`).join(',')})`);
      expect(sql).to.include(`status IN (${EMAIL_STATUSES.map((k) => `'${k}'`).join(',')})`);
    });

    it('enqueues a pending email due now, with no attempts', () => {
      const id = enqueue(s);
      const email = findEmail(s.temp.db, id)!;
      expect(email).to.include({ status: 'pending', attempts: 0, nextAttemptAt: s.clock.now().toISOString(), to: 'jo@customer.test', lastError: null });
      expect(email.subject).to.equal('Invoice 1001 from Acme Ltd');
      expect(email.html).to.include('<h1');
    });

    it('refuses to enqueue outside the caller’s transaction', () => {
      const rendered = invoiceEmail(INVOICE);
      const message: NewEmail = { tenantId: s.tenantId, businessId: s.businessId, kind: 'invoice', invoiceId: null, to: 'jo@customer.test', ...rendered };
      expect(() => enqueueEmail(s.temp.db, s.clock, message)).to.throw(/transaction/);
    });

    it('refuses a recipient that is not one bare address (a list, a display name, a line break)', () => {
      for (const to of ['a@x.test, b@y.test', 'Jo <jo@x.test>', 'jo@x.test\r\nBcc: b@y.test', 'nobody']) {
        expect(() => enqueue(s, {}, to), to).to.throw(/one bare email address/);
      }
    });

    it('lists only due emails: not before next_attempt_at', () => {
      const id = enqueue(s);
      markEmailFailed(s.temp.db, s.clock, id, 'boom');
      expect(emailsDue(s.temp.db, s.clock)).to.deep.equal([]);
      s.clock.advanceMs(MINUTE_MS);
      expect(emailsDue(s.temp.db, s.clock).map((e) => e.id)).to.deep.equal([id]);
    });

    it('keeps only the first 2000 characters of an error', () => {
      const id = enqueue(s);
      markEmailFailed(s.temp.db, s.clock, id, 'x'.repeat(5000));
      expect(findEmail(s.temp.db, id)!.lastError).to.have.lengthOf(2000);
    });

    it('waits 1, 2, 4 ... minutes between attempts, never more than 6 hours', () => {
      const minutes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 40].map((n) => retryDelayMs(n) / MINUTE_MS);
      expect(minutes).to.deep.equal([1, 2, 4, 8, 16, 32, 64, 128, 256, 360, 360, 360]);
    });
  });

  describe('with an SMTP server', () => {
    let smtp: TestSmtp;
    let mailer: Mailer;
    beforeEach(async () => {
      smtp = await startSmtp();
      mailer = createMailer({ smtpUrl: smtp.url, mailFrom: MAIL_FROM }, silent);
    });
    afterEach(async () => {
      mailer.close();
      await smtp.stop();
    });

    it('delivers an invoice email: recipient, From, subject, amount and pay link in both parts', async () => {
      const id = enqueue(s);
      const result = await deliverEmails(s.temp.db, s.clock, mailer, silent);
      expect(result).to.deep.equal({ sent: 1, failed: 0, retrying: 0 });
      expect(smtp.received).to.have.lengthOf(1);
      const [delivery] = smtp.received;
      expect(delivery!.from).to.equal('billing@daybook.test');
      expect(delivery!.to).to.deep.equal(['jo@customer.test']);

      const message = await parseMessage(delivery!.raw);
      expect(addresses(message, 'from')).to.deep.equal([{ name: 'Daybook', address: 'billing@daybook.test' }]);
      expect(addresses(message, 'to')).to.deep.equal([{ name: '', address: 'jo@customer.test' }]);
      expect(header(message, 'subject')).to.equal('Invoice 1001 from Acme Ltd');
      expect(header(message, 'content-type')).to.match(/^multipart\/alternative/);
      const text = part(message, 'text');
      const html = part(message, 'html');
      expect(text).to.include('€1,200.00 (EUR)');
      expect(html).to.include('€1,200.00 (EUR)');
      expect(text).to.include('https://books.example.com/pay/inv-1001');
      expect(html).to.include('<a href="https://books.example.com/pay/inv-1001"');

      const email = findEmail(s.temp.db, id)!;
      expect(email).to.include({ status: 'sent', attempts: 1, sentAt: s.clock.now().toISOString(), lastError: null });
    });

    it('sends an invoice email whose PDF cannot be made without it, and logs why, rather than holding the email back', async () => {
      // An email naming an invoice the books do not hold: its PDF cannot be made.
      const missingInvoice = randomUUID();
      s.temp.db.pragma('foreign_keys = OFF');
      const rendered = invoiceEmail(INVOICE);
      const id = inTransaction(s.temp.db, () =>
        enqueueEmail(s.temp.db, s.clock, { tenantId: s.tenantId, businessId: s.businessId, kind: 'invoice', invoiceId: missingInvoice, to: 'jo@customer.test', ...rendered }),
      );
      s.temp.db.pragma('foreign_keys = ON');
      const { log, lines } = captureLog('info');

      const result = await deliverEmails(s.temp.db, s.clock, mailer, log);

      expect(result).to.deep.equal({ sent: 1, failed: 0, retrying: 0 });
      const message = await parseMessage(smtp.received[0]!.raw);
      expect(message.attachments).to.deep.equal([]);
      expect(part(message, 'text')).to.include('https://books.example.com/pay/inv-1001');
      expect(findEmail(s.temp.db, id)).to.include({ status: 'sent', attempts: 1 });
      expect(lines.find((line) => line.msg === 'invoice PDF not made; the email is sent without it')).to.include({ level: 50, emailId: id, invoiceId: missingInvoice });
    });

    it('escapes a name with <script> and & in the HTML part and keeps it literally in the text part', async () => {
      const hostile = '<script>alert(1)</script> & Sons';
      enqueue(s, { customerName: hostile, businessName: hostile });
      await deliverEmails(s.temp.db, s.clock, mailer, silent);
      const message = await parseMessage(smtp.received[0]!.raw);
      const html = part(message, 'html');
      expect(html).not.to.include('<script');
      expect(html).to.include('&lt;script&gt;alert(1)&lt;/script&gt; &amp; Sons');
      expect(part(message, 'text')).to.include(`Hello ${hostile},`);
      expect(header(message, 'subject')).to.equal(`Invoice 1001 from ${hostile}`);
    });

    it('cannot be made to inject a header by a CR/LF in a name', async () => {
      enqueue(s, { businessName: 'Acme\r\nBcc: attacker@evil.test\r\nX-Injected: yes' });
      await deliverEmails(s.temp.db, s.clock, mailer, silent);
      const [delivery] = smtp.received;
      expect(delivery!.to).to.deep.equal(['jo@customer.test']);
      const message = await parseMessage(delivery!.raw);
      expect(message.headers.has('bcc')).to.equal(false);
      expect(message.headers.has('x-injected')).to.equal(false);
      expect(message.headerBlock).not.to.match(/^(Bcc|X-Injected):/im);
      expect(header(message, 'subject')).to.equal('Invoice 1001 from Acme Bcc: attacker@evil.test X-Injected: yes');
    });

    it('does not send a sent email again', async () => {
      enqueue(s);
      expect(await deliverEmails(s.temp.db, s.clock, mailer, silent)).to.deep.equal({ sent: 1, failed: 0, retrying: 0 });
      s.clock.advanceDays(1);
      expect(await deliverEmails(s.temp.db, s.clock, mailer, silent)).to.deep.equal({ sent: 0, failed: 0, retrying: 0 });
      expect(smtp.received).to.have.lengthOf(1);
    });

    it('delivers only the emails named in ids', async () => {
      const first = enqueue(s, { invoiceNumber: '1001' });
      const second = enqueue(s, { invoiceNumber: '1002' });
      expect(await deliverEmails(s.temp.db, s.clock, mailer, silent, [second])).to.deep.equal({ sent: 1, failed: 0, retrying: 0 });
      expect(await Promise.all(smtp.received.map(async (r) => header(await parseMessage(r.raw), 'subject')))).to.deep.equal(['Invoice 1002 from Acme Ltd']);
      expect(findEmail(s.temp.db, first)!.status).to.equal('pending');
      expect(findEmail(s.temp.db, second)!.status).to.equal('sent');
      expect(await deliverEmails(s.temp.db, s.clock, mailer, silent, [])).to.deep.equal({ sent: 0, failed: 0, retrying: 0 });
    });

    it('refuses to run inside a transaction (no await while a transaction is open)', async () => {
      enqueue(s);
      s.temp.db.exec('BEGIN');
      try {
        let thrown: unknown;
        await deliverEmails(s.temp.db, s.clock, mailer, silent).catch((error: unknown) => (thrown = error));
        expect(String(thrown)).to.match(/transaction/);
      } finally {
        s.temp.db.exec('ROLLBACK');
      }
      expect(smtp.received).to.have.lengthOf(0);
    });
  });

  describe('when sending fails', () => {
    it('leaves the row pending with attempts 1, the error, and the next attempt a minute later; does not throw', async () => {
      const id = enqueue(s);
      const mailer = createMailer({ smtpUrl: await deadSmtpUrl(), mailFrom: MAIL_FROM }, silent);
      const { log, lines } = captureLog('info');
      const result = await deliverEmails(s.temp.db, s.clock, mailer, log);
      mailer.close();
      expect(result).to.deep.equal({ sent: 0, failed: 0, retrying: 1 });
      const email = findEmail(s.temp.db, id)!;
      expect(email).to.include({ status: 'pending', attempts: 1, nextAttemptAt: isoPlus(s.clock, MINUTE_MS), sentAt: null });
      expect(email.lastError).to.match(/ECONNREFUSED|ECONNECTION/);
      const warning = lines.find((line) => line['emailId'] === id)!;
      expect(warning).to.include({ level: 40, attempts: 1, status: 'pending' });
      expect(String(warning['error'])).to.match(/ECONNREFUSED|ECONNECTION/);
      expect(JSON.stringify(lines)).not.to.include('€1,200.00');
    });

    it('leaves the row pending when the SMTP server has stopped', async () => {
      const smtp = await startSmtp();
      const mailer = createMailer({ smtpUrl: smtp.url, mailFrom: MAIL_FROM }, silent);
      const id = enqueue(s);
      await smtp.stop();
      const result = await deliverEmails(s.temp.db, s.clock, mailer, silent);
      mailer.close();
      expect(result).to.deep.equal({ sent: 0, failed: 0, retrying: 1 });
      expect(findEmail(s.temp.db, id)).to.include({ status: 'pending', attempts: 1, nextAttemptAt: isoPlus(s.clock, MINUTE_MS) });
    });

    it('gives up on a server that accepts the connection but never greets, within the greeting timeout', async function () {
      this.slow(SMTP_TIMEOUTS_MS.greetingTimeout + 3000);
      const sockets: Socket[] = [];
      const silentServer = createServer((socket) => void sockets.push(socket));
      const port = await new Promise<number>((resolve) => silentServer.listen(0, '127.0.0.1', () => resolve((silentServer.address() as AddressInfo).port)));
      const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}?tls=off`, mailFrom: MAIL_FROM }, silent);
      const id = enqueue(s);
      const started = Date.now();
      try {
        expect(await deliverEmails(s.temp.db, s.clock, mailer, silent)).to.deep.equal({ sent: 0, failed: 0, retrying: 1 });
      } finally {
        mailer.close();
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => silentServer.close(resolve));
      }
      expect(Date.now() - started).to.be.lessThan(SMTP_TIMEOUTS_MS.greetingTimeout + 2000);
      expect(findEmail(s.temp.db, id)!.lastError).to.match(/ETIMEDOUT|Greeting never received/);
    });

    it('marks an email whose recipient the server refuses for good (550) failed at its first attempt', async () => {
      const smtp = await startSmtp({ rejectRecipient: true });
      const mailer = createMailer({ smtpUrl: smtp.url, mailFrom: MAIL_FROM }, silent);
      const id = enqueue(s);
      try {
        expect(await deliverEmails(s.temp.db, s.clock, mailer, silent)).to.deep.equal({ sent: 0, failed: 1, retrying: 0 });
        s.clock.advanceDays(1);
        expect(await deliverEmails(s.temp.db, s.clock, mailer, silent), 'never retried').to.deep.equal({ sent: 0, failed: 0, retrying: 0 });
      } finally {
        mailer.close();
        await smtp.stop();
      }
      const email = findEmail(s.temp.db, id)!;
      expect(email).to.include({ status: 'failed', attempts: 1 });
      expect(email.lastError).to.match(/550/);
    });

    it('doubles the wait after each failure and marks the row failed after 10 failures', async () => {
      const id = enqueue(s);
      const mailer = createMailer({ smtpUrl: await deadSmtpUrl(), mailFrom: MAIL_FROM }, silent);
      const waitsMinutes: number[] = [];
      try {
        for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
          expect(await deliverEmails(s.temp.db, s.clock, mailer, silent)).to.deep.equal({ sent: 0, failed: 0, retrying: 1 });
          const email = findEmail(s.temp.db, id)!;
          expect(email).to.include({ status: 'pending', attempts: attempt });
          const waitMs = Date.parse(email.nextAttemptAt) - s.clock.now().getTime();
          waitsMinutes.push(waitMs / MINUTE_MS);
          // Not due a moment early; due exactly at next_attempt_at.
          s.clock.advanceMs(waitMs - 1);
          expect(await deliverEmails(s.temp.db, s.clock, mailer, silent)).to.deep.equal({ sent: 0, failed: 0, retrying: 0 });
          s.clock.advanceMs(1);
        }
        expect(waitsMinutes).to.deep.equal([1, 2, 4, 8, 16, 32, 64, 128, 256]);
        expect(await deliverEmails(s.temp.db, s.clock, mailer, silent)).to.deep.equal({ sent: 0, failed: 1, retrying: 0 });
        expect(findEmail(s.temp.db, id)).to.include({ status: 'failed', attempts: 10 });
        s.clock.advanceDays(7);
        expect(await deliverEmails(s.temp.db, s.clock, mailer, silent)).to.deep.equal({ sent: 0, failed: 0, retrying: 0 });
      } finally {
        mailer.close();
      }
    });

    it('sends a failed-before email once the server is back and it is due', async () => {
      const id = enqueue(s);
      const dead = createMailer({ smtpUrl: await deadSmtpUrl(), mailFrom: MAIL_FROM }, silent);
      await deliverEmails(s.temp.db, s.clock, dead, silent);
      dead.close();
      const smtp = await startSmtp();
      const mailer = createMailer({ smtpUrl: smtp.url, mailFrom: MAIL_FROM }, silent);
      try {
        s.clock.advanceMs(MINUTE_MS);
        expect(await deliverEmails(s.temp.db, s.clock, mailer, silent)).to.deep.equal({ sent: 1, failed: 0, retrying: 0 });
      } finally {
        mailer.close();
        await smtp.stop();
      }
      expect(findEmail(s.temp.db, id)).to.include({ status: 'sent', attempts: 2 });
      expect(smtp.received).to.have.lengthOf(1);
    });
  });

  describe('without an SMTP URL (LogMailer)', () => {
    it('writes the email to the log at info level and marks the row sent', async () => {
      const id = enqueue(s);
      const { log, lines } = captureLog('info');
      const mailer = createMailer({ smtpUrl: null, mailFrom: MAIL_FROM }, log);
      expect(await deliverEmails(s.temp.db, s.clock, mailer, log)).to.deep.equal({ sent: 1, failed: 0, retrying: 0 });
      mailer.close();
      expect(lines).to.have.lengthOf(1);
      const line = lines[0]!;
      expect(line['level']).to.equal(30);
      expect(line['mail']).to.deep.include({ to: 'jo@customer.test', subject: 'Invoice 1001 from Acme Ltd' });
      expect((line['mail'] as { text: string }).text).to.include('https://books.example.com/pay/inv-1001');
      expect(findEmail(s.temp.db, id)!.status).to.equal('sent');
    });
  });
});
