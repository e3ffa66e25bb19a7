import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ledgerTotals } from '../../src/books/ledger.js';
import { verifyBalances } from '../../src/books/reports/verify.js';
import { openDb, type Db } from '../../src/db/connection.js';
import { fixedClock } from '../../src/clock.js';
import { CLAIM_MS } from '../../src/store/outbox.js';
import { deliverEmails } from '../../src/email/deliver.js';
import { createMailer } from '../../src/email/mailer.js';
import { createLogger } from '../../src/log.js';
import { seededRandom } from '../../src/seeded-random.js';
import { startTestApp } from '../support/app.js';
import { buildApiTenant, setTenant } from '../support/api.js';
import { accountIdByName } from '../support/factories.js';
import { addBilledCustomer } from '../support/invoicing.js';
import { queueReviewItem } from '../support/review.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';
import { header, parseMessage, startSmtp, type TestSmtp } from '../support/smtp.js';

/**
 * `daybook serve` in its own process under write load from several clients (expenses; invoices
 * created, sent and paid; review items accepted; every request with an Idempotency-Key) is
 * killed with SIGKILL at seeded random moments and started again. Each client retries every
 * request that got no answer with the same key until it is answered. Then the books must hold
 * every write exactly once, balanced, whole, with no key left in progress, and every invoice
 * email must reach the test's SMTP server, twice only when a kill cut its delivery after the
 * server had taken it.
 *
 * CRASH_SEED and CRASH_KILLS run it differently or longer (docs/reliability.md).
 */
const SEED = Number(process.env.CRASH_SEED ?? 20_261_123);
const KILLS = Number(process.env.CRASH_KILLS ?? 20);
const CLIENTS = 6;
/** The server runs under load for a random time in this range between two kills. */
const LOAD_MS = { min: 40, max: 400 };

type Kind = 'expense' | 'invoice' | 'accept';

/** One request a client must see answered, sent again with the same key until it is. */
interface KeyedRequest {
  path: string;
  body: Record<string, unknown>;
  idempotencyKey: string;
}

interface Answer {
  status: number;
  body: any;
  /** How many times it was sent: 1 when the first try was answered. */
  tries: number;
}

/** What the clients did, to hold the books against. */
interface Ledger {
  expenses: Array<{ memo: string; expenseId: string }>;
  invoices: Array<{ memo: string; invoiceId: string; paymentId: string }>;
  accepted: string[];
  /** Requests sent again because the first try got no answer. */
  retried: number;
  keys: number;
}

describe('SIGKILL at random moments under write load', function () {
  this.timeout(KILLS * 15_000 + 60_000);
  let dir: string;
  let smtp: TestSmtp;
  let server: ServerProcess | undefined;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'daybook-crash-'));
    smtp = await startSmtp();
  });
  after(async () => {
    server?.child.kill('SIGKILL');
    await smtp.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`loses no acknowledged or retried write, doubles none, leaves no key in progress, loses no email and repeats one only across a kill (${KILLS} kills, seed ${SEED})`, async () => {
    const dbPath = join(dir, 'books.sqlite');
    const books = await seedBooks(dbPath);
    const env = { DAYBOOK_SMTP_URL: smtp.url, DAYBOOK_JOB_OUTBOX: 'off' };

    // The server the clients talk to; replaced at every kill, `live` pending while it restarts.
    server = await startServerProcess(dbPath, env);
    let live: Promise<string> = Promise.resolve(server.url);
    const ledger: Ledger = { expenses: [], invoices: [], accepted: [], retried: 0, keys: 0 };
    const inFlightAtKill: number[] = [];
    let inFlight = 0;

    async function sendUntilAnswered(request: KeyedRequest): Promise<Answer> {
      ledger.keys += 1;
      for (let tries = 1; tries <= 50; tries++) {
        const url = await live;
        inFlight += 1;
        try {
          const response = await fetch(`${url}/api/v1${request.path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${books.key}`, 'content-type': 'application/json', 'idempotency-key': request.idempotencyKey },
            body: JSON.stringify(request.body),
          });
          const text = await response.text();
          return { status: response.status, body: JSON.parse(text), tries };
        } catch {
          ledger.retried += 1; // no answer: the server died under it; the next try waits for the new one
          await new Promise((resolve) => setTimeout(resolve, 5));
        } finally {
          inFlight -= 1;
        }
      }
      throw new Error(`no answer after 50 tries: POST ${request.path}`);
    }

    async function write(path: string, body: Record<string, unknown>, status: number): Promise<any> {
      const answer = await sendUntilAnswered({ path, body, idempotencyKey: randomUUID() });
      expect(answer.status, `POST ${path} answered ${JSON.stringify(answer.body)} after ${answer.tries} tries`).to.equal(status);
      return answer.body;
    }

    const stepFor: Record<Kind, () => Promise<void>> = {
      async expense() {
        const memo = randomUUID();
        const body = await write('/expenses', { date: '2026-03-10', amountCents: '1234', vendorName: 'Staples', accountId: books.expenseAccountId, memo }, 201);
        ledger.expenses.push({ memo, expenseId: body.expenseId });
      },
      async invoice() {
        const memo = randomUUID();
        const line = { description: 'Consulting', quantity: '1', unitPriceCents: '10000', accountId: books.revenueAccountId };
        const created = await write('/invoices', { customerId: books.customerId, lines: [line], memo }, 201);
        const sent = await write(`/invoices/${created.invoiceId}/send`, {}, 200);
        expect(sent.status).to.equal('sent');
        const paid = await write(`/invoices/${created.invoiceId}/payments`, { amountCents: '4000', method: 'check' }, 201);
        expect(paid.status).to.equal('partially_paid');
        ledger.invoices.push({ memo, invoiceId: created.invoiceId, paymentId: paid.paymentId });
      },
      async accept() {
        const itemId = books.reviewItems.pop();
        if (!itemId) return stepFor.expense();
        expect(await write(`/review-queue/${itemId}/accept`, {}, 200)).to.deep.equal({ ok: true });
        ledger.accepted.push(itemId);
      },
    };

    let stopping = false;
    let failure: unknown;
    const client = async (random: () => number) => {
      try {
        while (!stopping) {
          const pick = random();
          await stepFor[pick < 0.4 ? 'expense' : pick < 0.7 ? 'invoice' : 'accept']();
        }
      } catch (error) {
        failure ??= error;
        stopping = true;
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, i) => client(seededRandom(SEED + i + 1)));

    const random = seededRandom(SEED);
    for (let kill = 0; kill < KILLS && failure === undefined; kill++) {
      await new Promise((resolve) => setTimeout(resolve, LOAD_MS.min + random() * (LOAD_MS.max - LOAD_MS.min)));
      let restarted: (url: string) => void = () => {};
      live = new Promise((resolve) => (restarted = resolve));
      inFlightAtKill.push(inFlight);
      server.child.kill('SIGKILL');
      expect((await server.exited).signal).to.equal('SIGKILL');
      server = await startServerProcess(dbPath, env);
      restarted(server.url);
    }
    stopping = true;
    await Promise.all(clients);
    if (failure !== undefined) throw failure;
    server.child.kill('SIGTERM');
    expect((await server.exited).code, `exit after SIGTERM; stderr: ${server.stderr()}`).to.equal(0);

    const outcome = checkBooks(dbPath, books.businessId, ledger);
    const emails = await checkEmails(dbPath, smtp, ledger);
    console.log(
      `      crash test: seed ${SEED}, ${KILLS} kills with ${inFlightAtKill.reduce((a, b) => a + b, 0)} requests in flight at them, ` +
        `${ledger.keys} keyed writes (${ledger.expenses.length} expenses, ${ledger.invoices.length} invoices sent and paid, ${ledger.accepted.length} accepts), ` +
        `${ledger.retried} sent again after no answer; ${outcome.entries} entries balanced; invoice emails: ${emails.once} received once, ` +
        `${emails.heldByKilledDelivery} held by a killed delivery's claim until it lapsed, ${emails.twice} of those received twice (taken by the SMTP server just before the kill)`,
    );
    expect(ledger.retried, 'the kills cut requests in flight').to.be.greaterThan(0);
    expect(smtp.errors, 'SMTP server errors').to.deep.equal([]);
  });
});

interface SeededBooks {
  key: string;
  businessId: string;
  customerId: string;
  expenseAccountId: string;
  revenueAccountId: string;
  /** Review items waiting, each accepted at most once by the clients. */
  reviewItems: string[];
}

/** One tenant with no rate limit, a customer to bill and review items waiting, written through the real books functions. */
async function seedBooks(dbPath: string): Promise<SeededBooks> {
  const app = await startTestApp(undefined, { dbPath });
  try {
    const tenant = buildApiTenant(app, { plan: 'large', keys: [{ access: 'read_write' }] });
    setTenant(app, tenant.id, { rateLimit: { mode: 'off' } });
    const reviewItems = Array.from({ length: 400 }, (_, i) => queueReviewItem(app, tenant.business, { date: '2026-03-05', amountCents: 500n + BigInt(i) }).itemId);
    return {
      key: tenant.key,
      businessId: tenant.business.id,
      customerId: addBilledCustomer(app, tenant.id),
      expenseAccountId: accountIdByName(app.db, tenant.business.id, 'Office Supplies'),
      revenueAccountId: accountIdByName(app.db, tenant.business.id, 'Service Revenue'),
      reviewItems,
    };
  } finally {
    await app.close();
  }
}

function count(db: Db, sql: string, ...params: unknown[]): number {
  return Number((db.prepare(sql).get(...params) as { n: bigint }).n);
}

/** Every write the clients were told succeeded is in the books exactly once, and the books are whole and balanced. */
function checkBooks(dbPath: string, businessId: string, ledger: Ledger): { entries: number } {
  const db = openDb(dbPath);
  try {
    expect(db.pragma('integrity_check', { simple: true })).to.equal('ok');
    expect(db.pragma('foreign_key_check')).to.deep.equal([]);

    const expenses = db.prepare('SELECT id, memo FROM expenses').all() as { id: string; memo: string }[];
    expect(expenses.map((row) => `${row.memo} ${row.id}`).sort(), 'exactly the acknowledged expenses, each once, with the id it was answered with').to.deep.equal(
      ledger.expenses.map((expense) => `${expense.memo} ${expense.expenseId}`).sort(),
    );

    const invoices = db.prepare('SELECT id, memo, status FROM invoices').all() as { id: string; memo: string; status: string }[];
    expect(invoices.map((row) => `${row.memo} ${row.id} ${row.status}`).sort(), 'exactly the acknowledged invoices, each sent and partly paid').to.deep.equal(
      ledger.invoices.map((invoice) => `${invoice.memo} ${invoice.invoiceId} partially_paid`).sort(),
    );
    const payments = db.prepare('SELECT id, invoice_id FROM invoice_payments').all() as { id: string; invoice_id: string }[];
    expect(payments.map((row) => `${row.invoice_id} ${row.id}`).sort(), 'one payment per invoice, the one answered').to.deep.equal(
      ledger.invoices.map((invoice) => `${invoice.invoiceId} ${invoice.paymentId}`).sort(),
    );

    const accepted = (db.prepare('SELECT id FROM review_queue_items WHERE accepted_at IS NOT NULL').all() as { id: string }[]).map((row) => row.id);
    expect(accepted.sort(), 'exactly the acknowledged accepts').to.deep.equal([...ledger.accepted].sort());
    expect(count(db, "SELECT count(*) AS n FROM journal_entries WHERE source_type = 'review_accept'"), 'one entry per accept').to.equal(ledger.accepted.length);
    expect(count(db, "SELECT count(*) AS n FROM journal_entries WHERE source_type = 'expense'"), 'one entry per expense').to.equal(ledger.expenses.length);
    expect(count(db, "SELECT count(*) AS n FROM journal_entries WHERE source_type = 'invoice'"), 'one entry per sent invoice').to.equal(ledger.invoices.length);
    expect(count(db, "SELECT count(*) AS n FROM journal_entries WHERE source_type = 'invoice_payment'"), 'one entry per payment').to.equal(ledger.invoices.length);

    const audit = db.prepare("SELECT action, count(*) AS n FROM audit_log WHERE actor_type = 'api_key' GROUP BY action").all() as { action: string; n: bigint }[];
    const audited = Object.fromEntries(audit.map((row) => [row.action, Number(row.n)]));
    expect(audited, 'one audit row per write, naming the key').to.include({
      'expense.create': ledger.expenses.length,
      'invoice.create': ledger.invoices.length,
      'invoice.send': ledger.invoices.length,
      'invoice.payment': ledger.invoices.length,
      'review.accept': ledger.accepted.length,
    });

    expect(count(db, "SELECT count(*) AS n FROM idempotency_records WHERE state = 'in_progress'"), 'no key left in progress').to.equal(0);
    expect(count(db, 'SELECT count(*) AS n FROM idempotency_records'), 'one record per key').to.equal(ledger.keys);

    // Each entry balances in both views: the accrual lines (basis both or accrual) and the cash lines (both or cash).
    for (const view of ['accrual', 'cash'] as const) {
      const unbalanced = db
        .prepare(
          `SELECT entry_id FROM journal_lines WHERE basis IN ('both', ?) GROUP BY entry_id
           HAVING sum(CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END) <> 0`,
        )
        .all(view);
      expect(unbalanced, `entries that do not balance on the ${view} basis`).to.deep.equal([]);
      const totals = ledgerTotals(db, businessId, view);
      expect(totals.debitCents, `trial balance (${view}): debits equal credits`).to.equal(totals.creditCents);
    }
    expect(verifyBalances(db, businessId).mismatchCount, 'stored balances that disagree with the journal lines').to.equal(0);
    return { entries: count(db, 'SELECT count(*) AS n FROM journal_entries') };
  } finally {
    db.close();
  }
}

interface EmailOutcome {
  /** Invoice emails the SMTP server received exactly once. */
  once: number;
  /** Emails whose delivery a kill cut after the server had taken them: sent again once the claim lapsed. */
  twice: number;
  /** Emails a kill left held by a cut delivery's claim, which went out once that lapsed. */
  heldByKilledDelivery: number;
}

/**
 * One invoice email per sent invoice in the outbox, and none lost: after a last delivery with
 * the clock past every claim a killed delivery left (CLAIM_MS), each has reached the SMTP
 * server. None reached it twice, except one whose delivery a kill cut between the server
 * taking it and the books recording so: SMTP gives no way to ask whether a message arrived,
 * so that email goes again, with the same Message-ID (docs/reliability.md).
 */
async function checkEmails(dbPath: string, smtp: TestSmtp, ledger: Ledger): Promise<EmailOutcome> {
  const db = openDb(dbPath);
  try {
    // A claim is cleared when the outcome is recorded: one still set was a delivery the kill cut.
    const claimed = (db.prepare("SELECT id FROM email_outbox WHERE status = 'pending' AND claimed_until IS NOT NULL").all() as { id: string }[]).map((row) => row.id);
    const receivedBefore = await receivedEmailIds(smtp);
    const log = createLogger('silent');
    const mailer = createMailer({ smtpUrl: smtp.url, mailFrom: 'Daybook <billing@localhost>' }, log);
    try {
      await deliverEmails(db, fixedClock(new Date(Date.now() + CLAIM_MS + 60_000)), mailer, log);
    } finally {
      mailer.close();
    }
    const outbox = db.prepare("SELECT id, invoice_id, status FROM email_outbox WHERE kind = 'invoice'").all() as { id: string; invoice_id: string; status: string }[];
    expect(outbox.map((row) => row.invoice_id).sort(), 'one invoice email per sent invoice').to.deep.equal(ledger.invoices.map((invoice) => invoice.invoiceId).sort());
    expect(outbox.filter((row) => row.status !== 'sent'), 'emails not delivered in the end').to.deep.equal([]);

    const times = new Map<string, number>();
    for (const id of await receivedEmailIds(smtp)) times.set(id, (times.get(id) ?? 0) + 1);
    expect(outbox.filter((row) => !times.has(row.id)), 'emails marked sent that the SMTP server never received').to.deep.equal([]);
    const twice = [...times].filter(([, n]) => n > 1).map(([id]) => id);
    const cutAfterTaken = claimed.filter((id) => receivedBefore.includes(id));
    expect(twice.sort(), 'emails received twice: only those whose delivery a kill cut after the server took them').to.deep.equal(cutAfterTaken.sort());
    expect([...times.values()].every((n) => n <= 2), 'no email three times').to.equal(true);
    return { once: times.size - twice.length, twice: twice.length, heldByKilledDelivery: claimed.length };
  } finally {
    db.close();
  }
}

/** The outbox ids of the messages the SMTP server received, from their Message-IDs (<id@domain>), one per message. */
async function receivedEmailIds(smtp: TestSmtp): Promise<string[]> {
  const messageIds = await Promise.all(smtp.received.map(async (message) => header(await parseMessage(message.raw), 'message-id')));
  return messageIds.map((messageId) => {
    const id = /^<([0-9a-f-]{36})@localhost>$/.exec(messageId)?.[1];
    if (!id) throw new Error(`a Message-ID not made from an outbox id: ${messageId}`);
    return id;
  });
}
