import { expect } from 'chai';
import { runOutboxDelivery } from '../../src/jobs/outbox.js';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { sendInvoice } from '../../src/books/invoice-posting.js';
import { createInvoice } from '../../src/books/invoices.js';
import { CLAIM_MS, claimEmail, enqueueEmail, findEmail, pendingEmailIds, retryDelayMs } from '../../src/store/outbox.js';
import { refreshToday } from '../../src/books/today.js';
import { type Db, inTransaction, openDb } from '../../src/db/connection.js';
import { deliverEmails, isPermanentFailure } from '../../src/email/deliver.js';
import { createMailer, type Mailer, messageIdDomain, SMTP_TIMEOUTS_MS } from '../../src/email/mailer.js';
import { createLogger } from '../../src/log.js';
import { freshDb, type TempDb } from '../support/db.js';
import { accountIdByName, buildBusiness, TEST_ACTOR, testClock } from '../support/factories.js';
import { header, parseMessage, startSmtp, type TestSmtp } from '../support/smtp.js';

const MAIL_FROM = 'Daybook <billing@daybook.test>';
const SITE_URL = 'https://books.example.test';
const NOTHING = { sent: 0, failed: 0, retrying: 0 };

/**
 * The outbox job against a real SMTP server on loopback: emails a request could not deliver go
 * out once their backoff has passed, each exactly once, however many deliveries run at once; a
 * permanent refusal ends the retries at once and shows on Today.
 */
describe('outbox delivery job', () => {
  let temp: TempDb;
  let smtp: TestSmtp;
  let mailer: Mailer;
  const clock = testClock('2026-03-15T12:00:00.000Z');
  const log = createLogger('silent');

  before(async () => {
    temp = await freshDb();
    smtp = await startSmtp();
    mailer = createMailer({ smtpUrl: smtp.url, mailFrom: MAIL_FROM }, log);
  });
  beforeEach(() => {
    smtp.received.length = 0;
    smtp.refusals.length = 0;
    smtp.refused.length = 0;
  });
  after(async () => {
    mailer.close();
    await smtp.stop();
    temp.close();
  });

  let counter = 0;
  /** A pending email, due now, to a recipient no other email has; returns its id. */
  function pendingEmail(): { id: string; to: string } {
    const business = buildBusiness(temp.db, clock);
    const to = `customer${++counter}@customer.example`;
    const id = inTransaction(temp.db, () =>
      enqueueEmail(temp.db, clock, {
        tenantId: business.tenantId,
        businessId: business.id,
        kind: 'invoice',
        invoiceId: null,
        to,
        subject: 'Invoice INV-0001 from Test',
        text: 'Pay here: http://localhost:3000/pay/x',
        html: '<p>Pay here</p>',
      }),
    );
    return { id, to };
  }

  /** How many messages the server received for each of `addresses`, in their order. */
  const deliveriesTo = (addresses: readonly string[]) => addresses.map((to) => smtp.received.filter((message) => message.to.includes(to)).length);
  const row = (db: Db, id: string) => findEmail(db, id)!;

  it('delivers the due emails and marks them sent, claim ended', async () => {
    const { id, to } = pendingEmail();
    const result = await runOutboxDelivery({ db: temp.db, clock, mailer, log });
    expect(result).to.deep.equal({ sent: 1, failed: 0, retrying: 0 });
    expect(row(temp.db, id)).to.include({ status: 'sent', attempts: 1, claimedUntil: null, sentAt: clock.now().toISOString() });
    expect(smtp.received.map((message) => message.to)).to.deep.equal([[to]]);
  });

  it('gives each email a Message-ID made from its id, so a copy sent again after a crash is the same message', async () => {
    const { id } = pendingEmail();
    await runOutboxDelivery({ db: temp.db, clock, mailer, log });
    // A crash after the server accepted, before the outcome was recorded: the email is due again.
    temp.db.prepare("UPDATE email_outbox SET status = 'pending', sent_at = NULL, claimed_until = NULL WHERE id = ?").run(id);
    await runOutboxDelivery({ db: temp.db, clock, mailer, log });
    const messageIds = await Promise.all(smtp.received.map(async (message) => header(await parseMessage(message.raw), 'message-id')));
    expect(messageIds).to.deep.equal([`<${id}@daybook.test>`, `<${id}@daybook.test>`]);
  });

  it('takes the Message-ID domain from the sender address, with a fallback when it has none', () => {
    expect(messageIdDomain('Daybook <billing@books.example.com>')).to.equal('books.example.com');
    expect(messageIdDomain('billing@localhost')).to.equal('localhost');
    expect(messageIdDomain('Daybook')).to.equal('daybook.invalid');
    expect(messageIdDomain('Billing <billing@Books.Example.com.>')).to.equal('books.example.com');
    expect(messageIdDomain('billing@bücher.example')).to.equal('xn--bcher-kva.example');
    for (const odd of ['a@..', 'a@-bad-', 'a@[10.0.0.1]', 'a@']) expect(messageIdDomain(odd), odd).to.equal('daybook.invalid');
  });

  describe('a server that refuses for now, then accepts', () => {
    it('keeps the email pending on a 421 and a 450, each time on the backoff schedule, then delivers it exactly once', async () => {
      const { id, to } = pendingEmail();
      smtp.refusals.push(
        { at: 'connect', responseCode: 421, message: 'busy, try again later' },
        { at: 'rcpt', responseCode: 450, message: 'mailbox busy, try again later' },
      );
      const firstFailureAt = clock.now().getTime();

      expect(await runOutboxDelivery({ db: temp.db, clock, mailer, log })).to.deep.equal({ sent: 0, failed: 0, retrying: 1 });
      const afterFirst = row(temp.db, id);
      expect(afterFirst).to.include({ status: 'pending', attempts: 1, claimedUntil: null, sentAt: null });
      expect(afterFirst.nextAttemptAt).to.equal(new Date(firstFailureAt + retryDelayMs(1)).toISOString());
      expect(afterFirst.lastError).to.include('421').and.include('busy, try again later');

      clock.advanceMs(retryDelayMs(1) - 1);
      expect(await runOutboxDelivery({ db: temp.db, clock, mailer, log }), 'not due a moment early').to.deep.equal(NOTHING);
      clock.advanceMs(1);
      const secondFailureAt = clock.now().getTime();
      expect(await runOutboxDelivery({ db: temp.db, clock, mailer, log })).to.deep.equal({ sent: 0, failed: 0, retrying: 1 });
      const afterSecond = row(temp.db, id);
      expect(afterSecond).to.include({ status: 'pending', attempts: 2, claimedUntil: null });
      expect(afterSecond.nextAttemptAt).to.equal(new Date(secondFailureAt + retryDelayMs(2)).toISOString());
      expect(afterSecond.lastError).to.include('450');
      expect(smtp.refused.map((refusal) => refusal.responseCode)).to.deep.equal([421, 450]);
      expect(smtp.received, 'nothing delivered while refused').to.have.lengthOf(0);

      clock.advanceMs(retryDelayMs(2));
      expect(await runOutboxDelivery({ db: temp.db, clock, mailer, log })).to.deep.equal({ sent: 1, failed: 0, retrying: 0 });
      clock.advanceMs(retryDelayMs(3));
      expect(await runOutboxDelivery({ db: temp.db, clock, mailer, log }), 'nothing left to send').to.deep.equal(NOTHING);
      expect(deliveriesTo([to])).to.deep.equal([1]);
      expect(row(temp.db, id)).to.include({ status: 'sent', attempts: 3, claimedUntil: null });
    });
  });

  describe('a permanent refusal (550 to RCPT TO)', () => {
    /** A sent invoice whose email (the one send wrote) is pending; returns both ids and the business. */
    function sentInvoice() {
      const business = buildBusiness(temp.db, clock);
      return inTransaction(temp.db, () => {
        const customer = findOrCreateCustomer(temp.db, clock, TEST_ACTOR, business.tenantId, { name: 'Gone Co', email: 'nobody@gone.example' });
        const { invoiceId, invoiceNumber } = createInvoice(temp.db, clock, TEST_ACTOR, {
          business,
          customerId: customer.id,
          issueDate: '2026-03-15',
          dueDate: '2026-04-14',
          lines: [{ description: 'Work', quantity: '1', unitPriceCents: 10_000n, accountId: accountIdByName(temp.db, business.id, 'Sales') }],
        });
        sendInvoice(temp.db, clock, TEST_ACTOR, invoiceId, { siteUrl: SITE_URL });
        const [emailId, ...others] = pendingEmailIds(temp.db, invoiceId);
        expect(others).to.deep.equal([]);
        return { business, invoiceId, invoiceNumber, emailId: emailId! };
      });
    }

    it('marks the email failed at its first attempt with the reply, never retries it, and raises email_failed on Today with the invoice link', async () => {
      const { business, invoiceId, invoiceNumber, emailId } = sentInvoice();
      smtp.refusals.push({ at: 'rcpt', responseCode: 550, message: 'no such mailbox here' });

      expect(await runOutboxDelivery({ db: temp.db, clock, mailer, log })).to.deep.equal({ sent: 0, failed: 1, retrying: 0 });
      const email = row(temp.db, emailId);
      expect(email).to.include({ status: 'failed', attempts: 1, claimedUntil: null, sentAt: null, nextAttemptAt: clock.now().toISOString() });
      expect(email.lastError).to.include('550').and.include('no such mailbox here');

      // A week of job runs later the server would accept it: it is never asked again.
      for (let day = 0; day < 7; day++) {
        clock.advanceDays(1);
        expect(await runOutboxDelivery({ db: temp.db, clock, mailer, log })).to.deep.equal(NOTHING);
      }
      expect(smtp.refused).to.have.lengthOf(1);
      expect(smtp.received).to.have.lengthOf(0);
      expect(row(temp.db, emailId)).to.include({ status: 'failed', attempts: 1 });

      const today = refreshToday(temp.db, clock, business, { siteUrl: SITE_URL });
      const signals = today.signals.filter((signal) => signal.kind === 'email_failed');
      expect(signals.map((signal) => signal.subjectId)).to.deep.equal([emailId]);
      expect(signals[0]!.severity).to.equal('urgent');
      expect(signals[0]!.sentence).to.include('nobody@gone.example').and.include(invoiceNumber);
      expect(signals[0]!.evidence).to.deep.include({ label: 'The invoice', url: `${SITE_URL}/api/v1/invoices/${invoiceId}` });
      expect(signals[0]!.evidence[0]!.label).to.include('550');
    });

    it('tells permanent refusals from temporary ones by nodemailer’s codes', () => {
      const smtpError = (code: string, responseCode: number | undefined, command: string) => Object.assign(new Error('refused'), { code, responseCode, command });
      const permanent = [
        smtpError('EENVELOPE', 550, 'RCPT TO'),
        smtpError('EENVELOPE', 553, 'RCPT TO'),
        smtpError('EENVELOPE', 554, 'DATA'),
        smtpError('EMESSAGE', 552, 'DATA'),
        smtpError('EENVELOPE', undefined, 'API'),
      ];
      const temporary = [
        smtpError('EENVELOPE', 450, 'RCPT TO'),
        smtpError('EMESSAGE', 451, 'DATA'),
        smtpError('EPROTOCOL', 421, 'CONN'),
        smtpError('EPROTOCOL', 554, 'CONN'),
        smtpError('EAUTH', 535, 'AUTH PLAIN'),
        smtpError('EENVELOPE', 553, 'MAIL FROM'),
        smtpError('ECONNECTION', undefined, 'CONN'),
        smtpError('ETIMEDOUT', undefined, 'CONN'),
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      ];
      expect(permanent.map(isPermanentFailure)).to.deep.equal(permanent.map(() => true));
      expect(temporary.map(isPermanentFailure)).to.deep.equal(temporary.map(() => false));
      expect(isPermanentFailure('550 no such mailbox')).to.equal(false);
    });
  });

  describe('claims', () => {
    it('holds a claim for longer than any one SMTP attempt can take', () => {
      const attemptMs = Object.values(SMTP_TIMEOUTS_MS).reduce((sum, ms) => sum + ms, 0);
      expect(CLAIM_MS).to.be.greaterThan(10 * attemptMs);
    });

    it('sends each email exactly once when two deliveries run at once on one connection (a request’s and the job’s)', async () => {
      const emails = [pendingEmail(), pendingEmail(), pendingEmail(), pendingEmail(), pendingEmail()];
      // Each lists every email before the other has claimed most of them.
      const [a, b] = await Promise.all([
        deliverEmails(temp.db, clock, mailer, log, emails.map((email) => email.id)),
        runOutboxDelivery({ db: temp.db, clock, mailer, log }),
      ]);
      expect(a.sent, 'both deliveries took part').to.be.greaterThan(0);
      expect(b.sent, 'both deliveries took part').to.be.greaterThan(0);
      expect(a.sent + b.sent).to.equal(emails.length);
      expect(a.failed + b.failed + a.retrying + b.retrying).to.equal(0);
      expect(deliveriesTo(emails.map((email) => email.to))).to.deep.equal([1, 1, 1, 1, 1]);
      expect(smtp.received).to.have.lengthOf(emails.length);
      for (const { id } of emails) expect(row(temp.db, id)).to.include({ status: 'sent', attempts: 1, claimedUntil: null });
    });

    it('sends each email exactly once when two connections to the same books deliver at once (the server and `daybook jobs run outbox`)', async () => {
      const emails = Array.from({ length: 6 }, () => pendingEmail());
      const other = openDb(temp.path, { synchronous: 'normal' });
      const otherMailer = createMailer({ smtpUrl: smtp.url, mailFrom: MAIL_FROM }, log);
      try {
        const [here, there] = await Promise.all([
          runOutboxDelivery({ db: temp.db, clock, mailer, log }),
          runOutboxDelivery({ db: other, clock, mailer: otherMailer, log }),
        ]);
        expect(here.sent, 'both deliveries took part').to.be.greaterThan(0);
        expect(there.sent, 'both deliveries took part').to.be.greaterThan(0);
        expect(here.sent + there.sent).to.equal(emails.length);
      } finally {
        otherMailer.close();
        other.close();
      }
      expect(deliveriesTo(emails.map((email) => email.to))).to.deep.equal(emails.map(() => 1));
      expect(smtp.received).to.have.lengthOf(emails.length);
      for (const { id } of emails) expect(row(temp.db, id)).to.include({ status: 'sent', attempts: 1, claimedUntil: null });
    });

    it('skips an email another delivery holds, and takes over the claim a crashed delivery left once it lapses', async () => {
      const { id, to } = pendingEmail();
      // A delivery claims the email and dies before it marks anything.
      expect(claimEmail(temp.db, clock, id)).to.equal(true);
      const claimedUntil = new Date(clock.now().getTime() + CLAIM_MS).toISOString();
      expect(row(temp.db, id)).to.include({ status: 'pending', attempts: 0, claimedUntil });
      expect(claimEmail(temp.db, clock, id), 'a live claim is not taken twice').to.equal(false);

      clock.advanceMs(CLAIM_MS - 1);
      expect(await runOutboxDelivery({ db: temp.db, clock, mailer, log }), 'the claim is live').to.deep.equal(NOTHING);
      expect(await deliverEmails(temp.db, clock, mailer, log, [id]), 'the claim is live').to.deep.equal(NOTHING);
      expect(smtp.received).to.have.lengthOf(0);
      expect(row(temp.db, id)).to.include({ status: 'pending', attempts: 0, claimedUntil });

      clock.advanceMs(1);
      expect(await runOutboxDelivery({ db: temp.db, clock, mailer, log })).to.deep.equal({ sent: 1, failed: 0, retrying: 0 });
      expect(deliveriesTo([to])).to.deep.equal([1]);
      expect(row(temp.db, id)).to.include({ status: 'sent', attempts: 1, claimedUntil: null });
    });

    it('claims only a pending email that is due', () => {
      const notDue = pendingEmail();
      temp.db.prepare('UPDATE email_outbox SET next_attempt_at = ? WHERE id = ?').run(new Date(clock.now().getTime() + 1).toISOString(), notDue.id);
      expect(claimEmail(temp.db, clock, notDue.id)).to.equal(false);
      const settled = pendingEmail();
      temp.db.prepare("UPDATE email_outbox SET status = 'sent', sent_at = ? WHERE id = ?").run(clock.now().toISOString(), settled.id);
      expect(claimEmail(temp.db, clock, settled.id)).to.equal(false);
      expect([row(temp.db, notDue.id).claimedUntil, row(temp.db, settled.id).claimedUntil]).to.deep.equal([null, null]);
    });
  });
});
