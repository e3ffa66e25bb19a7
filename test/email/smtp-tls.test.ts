import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import type { Business } from '../../src/books/businesses.js';
import { enqueueEmail, findEmail, MAX_ATTEMPTS } from '../../src/store/outbox.js';
import { refreshToday } from '../../src/books/today.js';
import type { FixedClock } from '../../src/clock.js';
import { ConfigError } from '../../src/config.js';
import { inTransaction } from '../../src/db/connection.js';
import { deliverEmails } from '../../src/email/deliver.js';
import { createMailer, type Mailer, NO_STARTTLS } from '../../src/email/mailer.js';
import { invoiceEmail } from '../../src/books/invoice-mail.js';
import { createLogger } from '../../src/log.js';
import { projectRoot } from '../../src/paths.js';
import { makeCertificate, type TestCertificate } from '../support/certificates.js';
import { type TempDb, freshDb } from '../support/db.js';
import { buildBusiness, testClock } from '../support/factories.js';
import { captureLog } from '../support/log-capture.js';
import { startTestApp } from '../support/app.js';
import { header, parseMessage, startSmtp, type TestSmtp } from '../support/smtp.js';

/**
 * smtp:// requires STARTTLS (src/smtp-url.ts): against real SMTP servers on loopback, one
 * that offers no STARTTLS and one that offers it with a test certificate.
 */

const MAIL_FROM = 'Daybook <billing@daybook.test>';
const USER = 'daybook';
const PASSWORD = 's3cret-Pa55word';
const SITE_URL = 'https://books.example.com';
const silent = createLogger('silent');

/** An smtp:// URL with a login for the test server, and `query` (e.g. `?tls=off`) as given. */
function loginUrl(smtp: TestSmtp, query = ''): string {
  return `smtp://${USER}:${PASSWORD}@127.0.0.1:${smtp.port}${query}`;
}

describe('SMTP: smtp:// requires STARTTLS', () => {
  let temp: TempDb;
  let clock: FixedClock;
  let business: Business;
  let smtp: TestSmtp | undefined;
  let mailer: Mailer | undefined;

  beforeEach(async () => {
    temp = await freshDb();
    clock = testClock();
    business = buildBusiness(temp.db, clock);
  });
  afterEach(async () => {
    mailer?.close();
    mailer = undefined;
    await smtp?.stop();
    smtp = undefined;
    temp.close();
  });

  function enqueue(): string {
    const rendered = invoiceEmail({
      businessName: 'Acme Ltd',
      customerName: 'Jo Customer',
      invoiceNumber: '1001',
      amountFormatted: '$1,200.00',
      currency: 'USD',
      dueDate: '2026-04-14',
      payUrl: `${SITE_URL}/pay/inv-1001`,
    });
    return inTransaction(temp.db, () =>
      enqueueEmail(temp.db, clock, { tenantId: business.tenantId, businessId: business.id, kind: 'invoice', invoiceId: null, to: 'jo@customer.test', ...rendered }),
    );
  }

  describe('a server that offers no STARTTLS', () => {
    it('gets no AUTH and no message; the delivery fails with a line naming ?tls=off, is retried, and Today shows the email once the retries run out', async () => {
      smtp = await startSmtp();
      const { log, lines } = captureLog('info');
      mailer = createMailer({ smtpUrl: loginUrl(smtp), mailFrom: MAIL_FROM }, log);
      const id = enqueue();

      expect(await deliverEmails(temp.db, clock, mailer, log)).to.deep.equal({ sent: 0, failed: 0, retrying: 1 });

      expect(smtp.logins, 'no login was sent').to.deep.equal([]);
      expect(smtp.received, 'no message was sent').to.deep.equal([]);
      const email = findEmail(temp.db, id)!;
      expect(email).to.include({ status: 'pending', attempts: 1, sentAt: null });
      expect(email.lastError).to.match(new RegExp(`^${NO_STARTTLS}: the mail server offered no STARTTLS, so nothing was sent \\(no login, no email\\)`));
      expect(email.lastError).to.include('add ?tls=off to DAYBOOK_SMTP_URL');
      const [warning, ...others] = lines.filter((line) => line.emailId === id);
      expect(others).to.deep.equal([]);
      expect(warning).to.include({ level: 40, msg: 'email not delivered; will retry', attempts: 1, status: 'pending', permanent: false, error: email.lastError });
      expect(JSON.stringify(lines)).to.not.include(PASSWORD);

      // The outbox's usual path: retried with backoff, then failed after MAX_ATTEMPTS.
      for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt++) {
        clock.set(findEmail(temp.db, id)!.nextAttemptAt);
        const expected = attempt < MAX_ATTEMPTS ? { sent: 0, failed: 0, retrying: 1 } : { sent: 0, failed: 1, retrying: 0 };
        expect(await deliverEmails(temp.db, clock, mailer, silent), `attempt ${attempt}`).to.deep.equal(expected);
      }
      expect(findEmail(temp.db, id)).to.include({ status: 'failed', attempts: MAX_ATTEMPTS });
      expect(smtp.logins, 'no login in any attempt').to.deep.equal([]);
      expect(smtp.received).to.deep.equal([]);

      const today = refreshToday(temp.db, clock, business, { siteUrl: SITE_URL });
      const signal = today.signals.find((found) => found.kind === 'email_failed' && found.subjectId === id);
      expect(signal, JSON.stringify(today.signals)).to.include({ severity: 'urgent' });
      expect(signal!.sentence).to.equal('An email to jo@customer.test ("Invoice 1001 from Acme Ltd") could not be delivered: the mail server refused it, or every retry failed.');
      const [lastError] = signal!.evidence;
      expect(lastError!.label).to.match(new RegExp(`^Last error: ${NO_STARTTLS}: the mail server offered no STARTTLS`));
      expect(lastError!.label, 'the fix fits in the evidence').to.include('?tls=off');
    });

    it('with ?tls=off (and only with it), gets the login and the message in clear', async () => {
      smtp = await startSmtp();
      const { log, lines } = captureLog('info');
      const id = enqueue();

      const strict = createMailer({ smtpUrl: loginUrl(smtp), mailFrom: MAIL_FROM }, log);
      try {
        expect(await deliverEmails(temp.db, clock, strict, silent), 'the same URL without ?tls=off').to.deep.equal({ sent: 0, failed: 0, retrying: 1 });
      } finally {
        strict.close();
      }
      expect(smtp.logins).to.deep.equal([]);

      clock.set(findEmail(temp.db, id)!.nextAttemptAt);
      mailer = createMailer({ smtpUrl: loginUrl(smtp, '?tls=off'), mailFrom: MAIL_FROM }, log);
      expect(await deliverEmails(temp.db, clock, mailer, silent)).to.deep.equal({ sent: 1, failed: 0, retrying: 0 });

      expect(smtp.logins).to.deep.equal([{ method: 'PLAIN', username: USER, password: PASSWORD, secure: false }]);
      expect(smtp.received.map((message) => message.secure)).to.deep.equal([false]);
      expect(header(await parseMessage(smtp.received[0]!.raw), 'subject')).to.equal('Invoice 1001 from Acme Ltd');
      expect(findEmail(temp.db, id)).to.include({ status: 'sent', attempts: 2 });
      expect(lines, 'a server on this machine: no warning').to.deep.equal([]);
    });
  });

  describe('a server that offers STARTTLS', () => {
    let dir: string;
    let certificate: TestCertificate;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'daybook-smtp-tls-'));
      certificate = makeCertificate(dir, 'smtp');
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    /** Trusts the test certificate as NODE_EXTRA_CA_CERTS would (it is read only at a process's start), for `work` only. */
    async function trustingTestCertificate<T>(work: () => Promise<T>): Promise<T> {
      const before = tls.getCACertificates('default');
      tls.setDefaultCACertificates([...before, readFileSync(certificate.certPath, 'utf8')]);
      try {
        return await work();
      } finally {
        tls.setDefaultCACertificates(before);
      }
    }

    it('delivers, the login and the message sent only after the upgrade, with the certificate checked', async () => {
      smtp = await startSmtp({ starttls: certificate });
      expect(smtp.url).to.equal(`smtp://127.0.0.1:${smtp.port}`);
      mailer = createMailer({ smtpUrl: loginUrl(smtp), mailFrom: MAIL_FROM }, silent);
      const id = enqueue();

      const result = await trustingTestCertificate(() => deliverEmails(temp.db, clock, mailer!, silent));

      expect(result).to.deep.equal({ sent: 1, failed: 0, retrying: 0 });
      expect(smtp.logins).to.deep.equal([{ method: 'PLAIN', username: USER, password: PASSWORD, secure: true }]);
      expect(smtp.received.map((message) => message.secure)).to.deep.equal([true]);
      expect(findEmail(temp.db, id)).to.include({ status: 'sent', attempts: 1 });
    });

    it('delivers from `daybook jobs run outbox` given the CA in NODE_EXTRA_CA_CERTS, as an operator with a private CA would', async function () {
      this.slow(6000);
      smtp = await startSmtp({ starttls: certificate });
      // Due by the machine's clock, which the command follows.
      clock.set('2020-01-01T00:00:00.000Z');
      const id = enqueue();
      const env = { ...process.env, DAYBOOK_LOG_LEVEL: 'warn', DAYBOOK_SMTP_URL: loginUrl(smtp), DAYBOOK_MAIL_FROM: MAIL_FROM, NODE_EXTRA_CA_CERTS: certificate.certPath };
      const command = ['--import', 'tsx', join(projectRoot, 'src/cli/run.ts'), '--db', temp.path, '--json', 'jobs', 'run', 'outbox'];
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile(process.execPath, command, { cwd: projectRoot, env }, (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out))),
      );

      expect(JSON.parse(stdout)).to.deep.include({ name: 'outbox', outcome: 'ok', result: { sent: 1, failed: 0, retrying: 0 } });
      expect(smtp.logins).to.deep.equal([{ method: 'PLAIN', username: USER, password: PASSWORD, secure: true }]);
      expect(smtp.received.map((message) => message.secure)).to.deep.equal([true]);
      expect(findEmail(temp.db, id)).to.include({ status: 'sent' });
    });

    it('refuses one whose certificate it does not trust, before the login', async () => {
      smtp = await startSmtp({ starttls: certificate });
      mailer = createMailer({ smtpUrl: loginUrl(smtp), mailFrom: MAIL_FROM }, silent);
      const id = enqueue();

      expect(await deliverEmails(temp.db, clock, mailer, silent)).to.deep.equal({ sent: 0, failed: 0, retrying: 1 });

      expect(smtp.logins).to.deep.equal([]);
      expect(smtp.received).to.deep.equal([]);
      expect(findEmail(temp.db, id)!.lastError).to.match(/^ESOCKET: self-signed certificate/);
    });
  });

  describe('start-up', () => {
    it('warns, without the password, when ?tls=off names a server that is not this machine', async () => {
      const { log, lines } = captureLog('info');
      const app = await startTestApp(undefined, { config: { smtpUrl: `smtp://${USER}:${PASSWORD}@mail.example.com:25?tls=off` }, log });
      await app.close();

      const warnings = lines.filter((line) => line.level === 40);
      expect(warnings).to.deep.equal([
        {
          level: 40,
          time: warnings[0]?.time,
          smtpUrl: 'smtp://***@mail.example.com:25?tls=off',
          msg: 'DAYBOOK_SMTP_URL has ?tls=off for a mail server that is not this machine: if it offers no STARTTLS, the password and every email (pay links, invoice PDFs) cross the network unencrypted',
        },
      ]);
      expect(JSON.stringify(lines)).to.not.include(PASSWORD);
    });

    it('refuses a well-known ?service whose options would turn STARTTLS off, unless ?tls=off says so', () => {
      expect(() => createMailer({ smtpUrl: 'smtp://127.0.0.1:1025?service=Maildev', mailFrom: MAIL_FROM }, silent)).to.throw(
        ConfigError,
        /^DAYBOOK_SMTP_URL: its options \(a \?service among them\) turn STARTTLS off, which smtp:\/\/ requires; for a relay without STARTTLS that you trust, add \?tls=off$/,
      );
      createMailer({ smtpUrl: 'smtp://127.0.0.1:1025?tls=off&service=Maildev', mailFrom: MAIL_FROM }, silent).close();
    });

    it('does not warn for ?tls=off on this machine (localhost, 127.0.0.0/8, ::1)', () => {
      for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '[::1]']) {
        const { log, lines } = captureLog('info');
        createMailer({ smtpUrl: `smtp://${USER}:${PASSWORD}@${host}:25?tls=off`, mailFrom: MAIL_FROM }, log).close();
        expect(lines, host).to.deep.equal([]);
      }
    });
  });
});
