import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Stripe from 'stripe';
import { connectCardProcessor } from '../../src/books/card-processors.js';
import { ledgerTotals } from '../../src/books/ledger.js';
import { verifyBalances } from '../../src/books/reports/verify.js';
import { inTransaction, openDb, type Db } from '../../src/db/connection.js';
import { fixedClock } from '../../src/clock.js';
import { CLAIM_MS } from '../../src/store/outbox.js';
import { deliverEmails } from '../../src/email/deliver.js';
import { createMailer } from '../../src/email/mailer.js';
import { createLogger } from '../../src/log.js';
import { seededRandom } from '../../src/seeded-random.js';
import { type FakeStripe, startFakeStripe } from '../../src/testing/fake-stripe.js';
import { startTestApp } from '../support/app.js';
import { buildApiTenant, setTenant } from '../support/api.js';
import { accountIdByName, TEST_ACTOR } from '../support/factories.js';
import { addBilledCustomer } from '../support/invoicing.js';
import { queueReviewItem } from '../support/review.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';
import { header, parseMessage, startSmtp, type TestSmtp } from '../support/smtp.js';

/**
 * `daybook serve` in its own process under write load from several clients (expenses; invoices
 * created, sent and paid; review items accepted; every request with an Idempotency-Key) is
 * killed with SIGKILL at seeded random moments and started again. Each client retries every
 * request that got no answer with the same key until it is answered. Some invoices are paid by
 * card instead: the customer presses Pay by card on the invoice's page, pays at the card
 * processor (a loopback stand-in), and the processor sends its signed webhook until the
 * server answers 200, now and then twice on purpose; the card-payments job, which runs at
 * every start, posts what a kill left received. Then the books must hold every write exactly
 * once, balanced, whole, with no key left in progress, every card payment posted once, and
 * every invoice email must reach the test's SMTP server, twice only when a kill cut its
 * delivery after the server had taken it.
 *
 * CRASH_SEED and CRASH_KILLS run it differently or longer (docs/reliability.md).
 */
const SEED = Number(process.env.CRASH_SEED ?? 20_261_123);
const KILLS = Number(process.env.CRASH_KILLS ?? 20);
const CLIENTS = 6;
/** Clients that, besides those, only have invoices paid by card, one after another. */
const CARD_CLIENTS = 2;
/** The server runs under load for a random time in this range between two kills. */
const LOAD_MS = { min: 40, max: 400 };

type Kind = 'expense' | 'invoice' | 'card' | 'accept';
/** What the clients other than the card ones do, by chance. */
type MixedKind = Exclude<Kind, 'card'>;

/** The business's secrets at the card processor: its API key (the stand-in checks none) and the signing secret of its webhooks. */
const PROCESSOR_SECRET_KEY = 'sk_test_51CrashTestProcessorKey00000';
const WEBHOOK_SECRET = 'whsec_crashTestSigningSecret0000';
/** How long, at most, the end of the run waits for the last server's card-payments job to have run and posted. */
const CARD_POSTING_WAIT_MS = 30_000;

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

/** An invoice paid by card: the processor's checkout for it, and what the processor took and charged. */
interface CardPaid {
  memo: string;
  invoiceId: string;
  sessionId: string;
  grossCents: bigint;
  /** The processor's fee on it, by its default rule: 2.9 % of the gross, rounded, plus 30 cents. */
  feeCents: bigint;
}

/** What the clients did, to hold the books against. */
interface Ledger {
  expenses: Array<{ memo: string; expenseId: string }>;
  invoices: Array<{ memo: string; invoiceId: string; paymentId: string }>;
  cards: CardPaid[];
  accepted: string[];
  /** Requests sent again because the first try got no answer. */
  retried: number;
  /** Of those, webhook deliveries the processor sent again. */
  webhooksAgain: number;
  /** Card payments whose webhook the processor sent twice on purpose (at once, or once more after the first was answered). */
  deliveredTwice: number;
  keys: number;
}

describe('SIGKILL at random moments under write load', function () {
  this.timeout(KILLS * 15_000 + 60_000);
  let dir: string;
  let smtp: TestSmtp;
  let fake: FakeStripe;
  let server: ServerProcess | undefined;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'daybook-crash-'));
    smtp = await startSmtp();
    fake = await startFakeStripe();
  });
  after(async () => {
    server?.child.kill('SIGKILL');
    await smtp.stop();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`loses no acknowledged or retried write, doubles none, leaves no key in progress, posts every card payment once, loses no email and repeats one only across a kill (${KILLS} kills, seed ${SEED})`, async () => {
    const dbPath = join(dir, 'books.sqlite');
    const books = await seedBooks(dbPath);
    const env = {
      DAYBOOK_SMTP_URL: smtp.url,
      DAYBOOK_JOB_OUTBOX: 'off',
      DAYBOOK_STRIPE_API_URL: fake.url,
      DAYBOOK_STRIPE_CHECKOUT_ORIGIN: fake.checkoutOrigin,
      // Customers reach the pay pages through a proxy on this machine, each from an address of
      // their own, so the per-address pay-page budget holds however long the run.
      DAYBOOK_TRUST_PROXY: 'loopback',
    };

    // The server the clients talk to; replaced at every kill, `live` pending while it restarts.
    let lastStartAt = new Date().toISOString();
    server = await startServerProcess(dbPath, env);
    let live: Promise<string> = Promise.resolve(server.url);
    const ledger: Ledger = { expenses: [], invoices: [], cards: [], accepted: [], retried: 0, webhooksAgain: 0, deliveredTwice: 0, keys: 0 };
    const inFlightAtKill: number[] = [];
    let inFlight = 0;

    /** Sends until an answer comes: a try that got none (the server died under it) goes again to the next server. */
    async function untilAnswered<T>(what: string, send: (url: string) => Promise<T>, onRetry = () => {}): Promise<{ answer: T; tries: number }> {
      for (let tries = 1; tries <= 50; tries++) {
        const url = await live;
        inFlight += 1;
        try {
          return { answer: await send(url), tries };
        } catch {
          ledger.retried += 1; // no answer: the next try waits for the new server
          onRetry();
          await new Promise((resolve) => setTimeout(resolve, 5));
        } finally {
          inFlight -= 1;
        }
      }
      throw new Error(`no answer after 50 tries: ${what}`);
    }

    async function sendUntilAnswered(request: KeyedRequest): Promise<Answer> {
      ledger.keys += 1;
      const { answer, tries } = await untilAnswered(`POST ${request.path}`, async (url) => {
        const response = await fetch(`${url}/api/v1${request.path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${books.key}`, 'content-type': 'application/json', 'idempotency-key': request.idempotencyKey },
          body: JSON.stringify(request.body),
        });
        return { status: response.status, text: await response.text() };
      });
      return { status: answer.status, body: JSON.parse(answer.text), tries };
    }

    /**
     * Presses Pay by card on the invoice's page, from the customer's own address, until the
     * server answers: the checkout it sends the customer to, at the processor.
     */
    async function payByCard(token: string, customerAddress: string): Promise<string> {
      const { answer, tries } = await untilAnswered(`POST /pay/…/checkout`, async (url) => {
        const response = await fetch(`${url}/pay/${token}/checkout`, { method: 'POST', redirect: 'manual', headers: { 'x-forwarded-for': customerAddress } });
        return { status: response.status, location: response.headers.get('location'), text: await response.text() };
      });
      expect(answer.status, `Pay by card answered after ${tries} tries: ${answer.text.slice(0, 300)}`).to.equal(303);
      const checkout = new URL(answer.location!);
      expect(checkout.origin, 'Pay by card leads to the processor').to.equal(fake.checkoutOrigin);
      return checkout.pathname.split('/').pop()!;
    }

    /** The processor sends the event to the business's webhook address until the server answers, which must be 200. */
    async function deliverUntilAnswered(event: Stripe.Event): Promise<void> {
      const { answer, tries } = await untilAnswered(
        'the card webhook',
        (url) => fake.deliver({ url: `${url}/webhooks/stripe/${books.endpointId}`, secret: WEBHOOK_SECRET }, event),
        () => void (ledger.webhooksAgain += 1),
      );
      expect(answer, `the card webhook answered after ${tries} tries`).to.equal(200);
    }

    async function write(path: string, body: Record<string, unknown>, status: number): Promise<any> {
      const answer = await sendUntilAnswered({ path, body, idempotencyKey: randomUUID() });
      expect(answer.status, `POST ${path} answered ${JSON.stringify(answer.body)} after ${answer.tries} tries`).to.equal(status);
      return answer.body;
    }

    const stepFor: Record<Kind, (random: () => number) => Promise<void>> = {
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
      async card(random) {
        // An invoice of its own amount, sent, paid by card and never by the path above.
        const memo = randomUUID();
        const unitPriceCents = 1_000 + Math.floor(random() * 99_000);
        const line = { description: 'Consulting', quantity: '1', unitPriceCents: String(unitPriceCents), accountId: books.revenueAccountId };
        const created = await write('/invoices', { customerId: books.customerId, lines: [line], memo }, 201);
        const sent = await write(`/invoices/${created.invoiceId}/send`, {}, 200);
        expect(sent.status).to.equal('sent');
        // The pay link names the configured site; the page is asked for at the running server, by the link's token.
        const token = new URL(created.webUrl as string).pathname.split('/').pop()!;
        const customer = Math.floor(random() * 2 ** 24);
        const sessionId = await payByCard(token, `10.${(customer >> 16) & 255}.${(customer >> 8) & 255}.${customer & 255}`);
        const completed = fake.pay(sessionId);
        const grossCents = BigInt((completed.data.object as { amount_total: number }).amount_total);
        expect(grossCents, 'the processor charged the invoice total').to.equal(BigInt(unitPriceCents));
        const twice = random();
        if (twice < 0.15) {
          // Sent twice at once, as the processor does when its first try seemed to time out.
          ledger.deliveredTwice += 1;
          await Promise.all([deliverUntilAnswered(completed), deliverUntilAnswered(completed)]);
        } else {
          await deliverUntilAnswered(completed);
          if (twice < 0.3) {
            ledger.deliveredTwice += 1;
            await deliverUntilAnswered(completed);
          }
        }
        const feeCents = BigInt(Math.round(Number(grossCents) * 0.029) + 30);
        ledger.cards.push({ memo, invoiceId: created.invoiceId, sessionId, grossCents, feeCents });
      },
      async accept(random) {
        const itemId = books.reviewItems.pop();
        if (!itemId) return stepFor.expense(random);
        expect(await write(`/review-queue/${itemId}/accept`, {}, 200)).to.deep.equal({ ok: true });
        ledger.accepted.push(itemId);
      },
    };

    let stopping = false;
    let failure: unknown;
    const client = async (random: () => number, kind: (random: () => number) => Kind) => {
      try {
        while (!stopping) await stepFor[kind(random)](random);
      } catch (error) {
        failure ??= error;
        stopping = true;
      }
    };
    const mixed = (random: () => number): MixedKind => {
      const pick = random();
      return pick < 0.4 ? 'expense' : pick < 0.7 ? 'invoice' : 'accept';
    };
    const clients = [
      ...Array.from({ length: CLIENTS }, (_, i) => client(seededRandom(SEED + i + 1), mixed)),
      ...Array.from({ length: CARD_CLIENTS }, (_, i) => client(seededRandom(SEED + CLIENTS + i + 1), () => 'card')),
    ];

    const random = seededRandom(SEED);
    for (let kill = 0; kill < KILLS && failure === undefined; kill++) {
      await new Promise((resolve) => setTimeout(resolve, LOAD_MS.min + random() * (LOAD_MS.max - LOAD_MS.min)));
      let restarted: (url: string) => void = () => {};
      live = new Promise((resolve) => (restarted = resolve));
      inFlightAtKill.push(inFlight);
      server.child.kill('SIGKILL');
      expect((await server.exited).signal).to.equal('SIGKILL');
      lastStartAt = new Date().toISOString();
      server = await startServerProcess(dbPath, env);
      restarted(server.url);
    }
    stopping = true;
    await Promise.all(clients);
    if (failure !== undefined) throw failure;
    const cardJob = await cardPaymentsSettled(dbPath, lastStartAt);
    expect(cardJob.ranSinceStart, `the card-payments job ran to the end after the last start; stderr: ${server.stderr()}`).to.equal(true);
    server.child.kill('SIGTERM');
    expect((await server.exited).code, `exit after SIGTERM; stderr: ${server.stderr()}`).to.equal(0);

    const outcome = checkBooks(dbPath, books.businessId, ledger);
    const cards = checkCardPayments(dbPath, books.businessId, ledger);
    const emails = await checkEmails(dbPath, smtp, ledger);
    console.log(
      `      crash test: seed ${SEED}, ${KILLS} kills with ${inFlightAtKill.reduce((a, b) => a + b, 0)} requests in flight at them, ` +
        `${ledger.keys} keyed writes (${ledger.expenses.length} expenses, ${ledger.invoices.length} invoices sent and paid, ${ledger.accepted.length} accepts), ` +
        `${ledger.cards.length} invoices paid by card (received from ${cards.byWebhook} webhooks, ${cards.byJob} found by the card-payments job, ${cards.postedByJob} posted by it; ` +
        `${ledger.webhooksAgain} webhook deliveries cut and sent again, ${ledger.deliveredTwice} sent twice on purpose), ` +
        `${ledger.retried} requests sent again after no answer; ${outcome.entries} entries balanced; invoice emails: ${emails.once} received once, ` +
        `${emails.heldByKilledDelivery} held by a killed delivery's claim until it lapsed, ${emails.twice} of those received twice (taken by the SMTP server just before the kill)`,
    );
    expect(ledger.retried, 'the kills cut requests in flight').to.be.greaterThan(0);
    expect(ledger.cards.length, 'invoices paid by card').to.be.greaterThan(0);
    expect(smtp.errors, 'SMTP server errors').to.deep.equal([]);
  });
});

interface SeededBooks {
  key: string;
  businessId: string;
  /** The business's webhook address at the card processor: /webhooks/stripe/{endpointId}. */
  endpointId: string;
  customerId: string;
  expenseAccountId: string;
  revenueAccountId: string;
  /** Review items waiting, each accepted at most once by the clients. */
  reviewItems: string[];
}

/**
 * One tenant with no rate limit, a customer to bill, review items waiting and the business
 * taking card payments, written through the real books functions.
 */
async function seedBooks(dbPath: string): Promise<SeededBooks> {
  const app = await startTestApp(undefined, { dbPath });
  try {
    const tenant = buildApiTenant(app, { plan: 'large', keys: [{ access: 'read_write' }] });
    setTenant(app, tenant.id, { rateLimit: { mode: 'off' } });
    const reviewItems = Array.from({ length: 400 }, (_, i) => queueReviewItem(app, tenant.business, { date: '2026-03-05', amountCents: 500n + BigInt(i) }).itemId);
    const connection = inTransaction(app.db, () =>
      connectCardProcessor(app.db, app.clock, TEST_ACTOR, tenant.business.id, { secretKey: PROCESSOR_SECRET_KEY, webhookSecret: WEBHOOK_SECRET }),
    );
    return {
      key: tenant.key,
      businessId: tenant.business.id,
      endpointId: connection.endpointId,
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
    expect(invoices.map((row) => `${row.memo} ${row.id} ${row.status}`).sort(), 'exactly the acknowledged invoices, each sent and partly paid, or paid by card').to.deep.equal(
      [
        ...ledger.invoices.map((invoice) => `${invoice.memo} ${invoice.invoiceId} partially_paid`),
        ...ledger.cards.map((card) => `${card.memo} ${card.invoiceId} paid`),
      ].sort(),
    );
    // A card payment's invoice payment is named by the checkout it came from (card_payments.payment_id).
    const payments = db
      .prepare('SELECT p.id, p.invoice_id, p.method, p.amount_cents, c.session_id FROM invoice_payments p LEFT JOIN card_payments c ON c.payment_id = p.id')
      .all() as { id: string; invoice_id: string; method: string; amount_cents: bigint; session_id: string | null }[];
    expect(
      payments.map((row) => `${row.invoice_id} ${row.method} ${row.amount_cents} ${row.session_id ?? row.id}`).sort(),
      'one payment per invoice: the cheque answered, or the whole total by card from its paid checkout',
    ).to.deep.equal(
      [
        ...ledger.invoices.map((invoice) => `${invoice.invoiceId} check 4000 ${invoice.paymentId}`),
        ...ledger.cards.map((card) => `${card.invoiceId} stripe ${card.grossCents} ${card.sessionId}`),
      ].sort(),
    );

    const accepted = (db.prepare('SELECT id FROM review_queue_items WHERE accepted_at IS NOT NULL').all() as { id: string }[]).map((row) => row.id);
    expect(accepted.sort(), 'exactly the acknowledged accepts').to.deep.equal([...ledger.accepted].sort());
    expect(count(db, "SELECT count(*) AS n FROM journal_entries WHERE source_type = 'review_accept'"), 'one entry per accept').to.equal(ledger.accepted.length);
    expect(count(db, "SELECT count(*) AS n FROM journal_entries WHERE source_type = 'expense'"), 'one entry per expense').to.equal(ledger.expenses.length);
    const sentInvoices = ledger.invoices.length + ledger.cards.length;
    expect(count(db, "SELECT count(*) AS n FROM journal_entries WHERE source_type = 'invoice'"), 'one entry per sent invoice').to.equal(sentInvoices);
    expect(count(db, "SELECT count(*) AS n FROM journal_entries WHERE source_type = 'invoice_payment'"), 'one entry per payment, by cheque or card').to.equal(sentInvoices);

    const audit = db.prepare("SELECT action, count(*) AS n FROM audit_log WHERE actor_type = 'api_key' GROUP BY action").all() as { action: string; n: bigint }[];
    const audited = Object.fromEntries(audit.map((row) => [row.action, Number(row.n)]));
    expect(audited, 'one audit row per write, naming the key').to.include({
      'expense.create': ledger.expenses.length,
      'invoice.create': sentInvoices,
      'invoice.send': sentInvoices,
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

/**
 * Waits, a bounded time, for the last server's card-payments job (it runs at start) to have
 * run to the end and for no card payment to be left received, reading the books on a
 * connection of the test's own.
 */
async function cardPaymentsSettled(dbPath: string, startedAt: string): Promise<{ ranSinceStart: boolean }> {
  const db = openDb(dbPath);
  try {
    const settled = () => {
      const run = db.prepare("SELECT last_started_at, last_outcome FROM job_runs WHERE name = 'card-payments'").get() as
        | { last_started_at: string | null; last_outcome: string | null }
        | undefined;
      const ranSinceStart = run !== undefined && run.last_started_at !== null && run.last_started_at >= startedAt && run.last_outcome === 'ok';
      return { ranSinceStart, done: ranSinceStart && count(db, "SELECT count(*) AS n FROM card_payments WHERE state = 'received'") === 0 };
    };
    for (const until = Date.now() + CARD_POSTING_WAIT_MS; Date.now() < until && !settled().done; ) await new Promise((resolve) => setTimeout(resolve, 50));
    return { ranSinceStart: settled().ranSinceStart };
  } finally {
    db.close();
  }
}

/**
 * Every paid checkout is in the books exactly once and posted: the whole total applied to its
 * invoice as one payment of method `stripe` (nothing held as a deposit), and the clearing
 * account holding what the processor will pay out, the gross less its fees, in both views.
 */
function checkCardPayments(dbPath: string, businessId: string, ledger: Ledger): { byWebhook: number; byJob: number; postedByJob: number } {
  const db = openDb(dbPath);
  try {
    const stored = db
      .prepare(
        `SELECT c.session_id, c.invoice_id, c.state, c.received_via, c.gross_usd_cents, c.fee_usd_cents, c.applied_cents, c.deposit_usd_cents, c.settlement_currency,
                p.method, p.amount_cents AS payment_cents, p.journal_entry_id AS payment_entry_id, c.journal_entry_id
         FROM card_payments c LEFT JOIN invoice_payments p ON p.id = c.payment_id WHERE c.business_id = ?`,
      )
      .all(businessId) as Record<string, unknown>[];
    expect(
      stored.map((row) =>
        [row.session_id, row.invoice_id, row.state, row.settlement_currency, row.gross_usd_cents, row.fee_usd_cents, row.applied_cents, row.deposit_usd_cents, row.method, row.payment_cents].join(' '),
      ).sort(),
      'each paid checkout once, posted as a card payment of its whole invoice',
    ).to.deep.equal(ledger.cards.map((card) => [card.sessionId, card.invoiceId, 'posted', 'USD', card.grossCents, card.feeCents, card.grossCents, 0n, 'stripe', card.grossCents].join(' ')).sort());
    expect(stored.filter((row) => row.journal_entry_id === null || row.journal_entry_id !== row.payment_entry_id), 'card payments whose entry is not their payment’s').to.deep.equal([]);

    const cardInvoices = ledger.cards.map((card) => card.invoiceId);
    const stripePayments = db.prepare("SELECT invoice_id, count(*) AS n FROM invoice_payments WHERE method = 'stripe' GROUP BY invoice_id").all() as { invoice_id: string; n: bigint }[];
    expect(stripePayments.map((row) => `${row.invoice_id} ${row.n}`).sort(), 'one card payment per invoice paid by card, none on the others').to.deep.equal(
      cardInvoices.map((id) => `${id} 1`).sort(),
    );
    const audit = db.prepare("SELECT action, count(*) AS n FROM audit_log WHERE action LIKE 'card_payment.%' GROUP BY action").all() as { action: string; n: bigint }[];
    expect(Object.fromEntries(audit.map((row) => [row.action, Number(row.n)])), 'one audit row per card payment received and per one posted').to.deep.equal({
      'card_payment.receive': ledger.cards.length,
      'card_payment.post': ledger.cards.length,
    });
    expect(count(db, "SELECT count(*) AS n FROM journal_entries WHERE source_type = 'card_payment'"), 'card payments held whole as deposits').to.equal(0);

    const gross = ledger.cards.reduce((sum, card) => sum + card.grossCents, 0n);
    const fees = ledger.cards.reduce((sum, card) => sum + card.feeCents, 0n);
    for (const view of ['accrual', 'cash'] as const) {
      expect(accountBalance(db, businessId, 'Card Payments Clearing', view), `Card Payments Clearing (${view}): the gross less the processor's fees`).to.equal(gross - fees);
      expect(accountBalance(db, businessId, 'Payment Processing Fees', view), `Payment Processing Fees (${view})`).to.equal(fees);
      expect(accountBalance(db, businessId, 'Customer Deposits', view), `Customer Deposits (${view})`).to.equal(0n);
    }
    const via = (source: string) => stored.filter((row) => row.received_via === source).length;
    expect(via('webhook') + via('job'), 'card payments recorded by the webhook or the job (no customer came back to the page)').to.equal(ledger.cards.length);
    const postedByJob = count(db, "SELECT count(*) AS n FROM audit_log WHERE action = 'card_payment.post' AND actor_type = 'job'");
    return { byWebhook: via('webhook'), byJob: via('job'), postedByJob };
  } finally {
    db.close();
  }
}

/** Debits minus credits of one of the business's accounts, by name, in one view of the books. */
function accountBalance(db: Db, businessId: string, account: string, view: 'accrual' | 'cash'): bigint {
  const row = db
    .prepare(
      `SELECT coalesce(sum(CASE WHEN l.direction = 'debit' THEN l.amount_cents ELSE -l.amount_cents END), 0) AS net
       FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
       WHERE l.business_id = ? AND a.name = ? AND l.basis IN ('both', ?)`,
    )
    .get(businessId, account, view) as { net: bigint };
  return BigInt(row.net);
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
    expect(outbox.map((row) => row.invoice_id).sort(), 'one invoice email per sent invoice').to.deep.equal(
      [...ledger.invoices, ...ledger.cards].map((invoice) => invoice.invoiceId).sort(),
    );
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
