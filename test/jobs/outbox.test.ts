import { expect } from 'chai';
import { runOutboxDelivery } from '../../jobs/outbox.js';
import { standardJobs } from '../../jobs/pool.js';
import { enqueueEmail } from '../../src/books/outbox.js';
import { inTransaction } from '../../src/db/connection.js';
import { deliverEmails } from '../../src/email/deliver.js';
import { createMailer, type Mailer } from '../../src/email/mailer.js';
import { createLogger } from '../../src/log.js';
import { freshDb, type TempDb } from '../support/db.js';
import { buildBusiness, testClock } from '../support/factories.js';
import { startSmtp, type TestSmtp } from '../support/smtp.js';

/** The outbox job: emails a request could not deliver go out once their backoff has passed, each once. */
describe('outbox delivery job', () => {
  let temp: TempDb;
  let smtp: TestSmtp;
  let mailer: Mailer;
  const clock = testClock('2026-03-15T12:00:00.000Z');
  const log = createLogger('silent');

  before(async () => {
    temp = await freshDb();
    smtp = await startSmtp();
    mailer = createMailer({ smtpUrl: smtp.url, mailFrom: 'Daybook <billing@daybook.test>' }, log);
  });
  after(async () => {
    mailer.close();
    await smtp.stop();
    temp.close();
  });

  function pendingEmail(to: string): string {
    const business = buildBusiness(temp.db, clock);
    return inTransaction(temp.db, () =>
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
  }
  const statusOf = (id: string) => (temp.db.prepare('SELECT status FROM email_outbox WHERE id = ?').get(id) as { status: string }).status;

  it('delivers the due emails and marks them sent', async () => {
    const id = pendingEmail('first@customer.example');
    const result = await runOutboxDelivery({ db: temp.db, clock, mailer, log });
    expect(result).to.deep.equal({ sent: 1, failed: 0 });
    expect(statusOf(id)).to.equal('sent');
    expect(smtp.received.map((message) => message.to)).to.deep.equal([['first@customer.example']]);
  });

  it('never sends one email twice when two deliveries run at once (a request\'s and the job\'s)', async () => {
    const id = pendingEmail('racing@customer.example');
    const before = smtp.received.length;
    const [a, b] = await Promise.all([deliverEmails(temp.db, clock, mailer, log, [id]), runOutboxDelivery({ db: temp.db, clock, mailer, log })]);
    expect(a.sent + b.sent).to.equal(1);
    expect(smtp.received.length - before).to.equal(1);
    expect(statusOf(id)).to.equal('sent');
  });

  it('is one of the standard jobs, run at start and every minute', () => {
    const job = standardJobs({ db: temp.db, clock, counters: undefined as never, mailer, log }).find((candidate) => candidate.name === 'outbox');
    expect(job).to.include({ runAtStart: true, schedule: '* * * * *' });
  });
});
