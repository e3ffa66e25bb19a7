import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../../src/db/connection.js';
import { projectRoot } from '../../src/paths.js';
import { CliHarness, parseOneObject, waitFor } from './support.js';

/**
 * `daybook demo --card-payments`: the demo's first business takes cards through the stand-in
 * processor on loopback, and one of its unpaid invoices can be paid by card from the printed
 * pay link to the end: the "Pay by card" button, the stand-in's page and its Pay button, back
 * to the invoice's page, paid, with the payment in the books. Run as a reader runs it, in a
 * process of its own.
 */

/** The demo's day: the books, and the card payment, are dated from it. */
const DAY = '2027-01-04';

interface CardPayments {
  connected: boolean;
  note: string;
  businessId?: string;
  invoiceId?: string;
  invoiceNumber?: string;
  payUrl?: string;
}

interface DemoOutput {
  url: string;
  key: string;
  businesses: { id: string; name: string }[];
  cardPayments: CardPayments;
}

interface InvoiceDetail {
  number: string;
  status: string;
  balance: { cents: string; formatted: string };
  payments: { amount: { cents: string }; method: string; paidAt: string }[];
}

interface Demo {
  child: ChildProcess;
  printed: DemoOutput;
  ended: Promise<number | null>;
  stderr(): string;
}

async function startDemo(books: string): Promise<Demo> {
  // Without a site address the pay links name the default one; the test reads them back on the demo's own.
  const { DAYBOOK_SITE_URL: _site, DAYBOOK_DB: _db, ...env } = process.env;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(projectRoot, 'src/cli/run.ts'), '--db', books, '--json', 'demo', '--card-payments', '--port', '0', '--clock', DAY],
    { cwd: projectRoot, env: { ...env, DAYBOOK_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const ended = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('\n')) resolve(stdout.slice(0, stdout.indexOf('\n')));
    });
    void ended.then((code) => reject(new Error(`the demo exited (${String(code)}) before it printed: ${stderr}`)));
  });
  return { child, printed: JSON.parse(line) as DemoOutput, ended, stderr: () => stderr };
}

/** A request that does not follow redirects: the test follows each one itself, to see where it leads. */
async function send(url: string, method: 'GET' | 'POST' = 'GET'): Promise<{ status: number; location: string | null; text: string }> {
  const response = await fetch(url, { method, redirect: 'manual' });
  return { status: response.status, location: response.headers.get('location'), text: await response.text() };
}

describe('daybook demo --card-payments', function () {
  this.timeout(120_000);
  let folder: string;
  let books: string;
  let demo: Demo;
  /** Where the stand-in's hosted page was, once the first test has been there. */
  let standInOrigin: string | undefined;

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'daybook-demo-cards-'));
    books = join(folder, 'demo.sqlite');
    demo = await startDemo(books);
  });

  after(async () => {
    if (demo && demo.child.exitCode === null) demo.child.kill('SIGKILL');
    rmSync(folder, { recursive: true, force: true });
  });

  it('connects the first business and prints one of its unpaid invoices, whose pay link is paid by card through the stand-in from start to end', async () => {
    const { printed } = demo;
    const api = async (path: string) => {
      const response = await fetch(`${printed.url}/api/v1${path}`, { headers: { authorization: `Bearer ${printed.key}` } });
      expect(response.status, path).to.equal(200);
      return (await response.json()) as InvoiceDetail;
    };

    const cards = printed.cardPayments;
    expect(cards).to.include({ connected: true, businessId: printed.businesses[0]!.id });
    expect(cards.note).to.equal(
      `Card payments: ${printed.businesses[0]!.name} takes cards through a stand-in processor on this machine; no card is asked for and no money moves. To try it, open an unpaid invoice's pay link, press "Pay … by card", then "Pay" on the stand-in's page: you come back to the invoice, paid.`,
    );
    const payUrl = cards.payUrl!;
    expect(payUrl).to.match(new RegExp(`^${printed.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/pay/[A-Za-z0-9_-]{43}$`));
    const before = await api(`/invoices/${cards.invoiceId}`);
    expect(before.number).to.equal(cards.invoiceNumber);
    expect(before.status).to.equal('sent');
    expect(before.payments).to.deep.equal([]);

    // The pay page offers the card button for the whole balance.
    const page = await send(payUrl);
    expect(page.status).to.equal(200);
    expect(page.text).to.include(`<button type="submit">Pay ${before.balance.formatted} by card</button>`);

    // The button: a 303 to the stand-in's hosted page, elsewhere than the demo.
    const checkout = await send(`${payUrl}/checkout`, 'POST');
    expect(checkout.status).to.equal(303);
    const hosted = new URL(checkout.location!);
    expect(hosted.origin).to.not.equal(printed.url);
    expect(hosted.pathname).to.match(/^\/pay\/cs_test_\w+$/);
    const sessionId = hosted.pathname.slice('/pay/'.length);
    standInOrigin = hosted.origin;

    // The stand-in's page: one form, its Pay button for the amount.
    const standIn = await send(hosted.href);
    expect(standIn.status).to.equal(200);
    const amount = `${(Number(before.balance.cents) / 100).toFixed(2)} USD`;
    expect(standIn.text).to.include(`<form method="post" action="/pay/${sessionId}"><button type="submit">Pay ${amount}</button></form>`);

    // Paying sends the customer back to the invoice's return page, naming the session.
    const paid = await send(new URL(`/pay/${sessionId}`, hosted).href, 'POST');
    expect(paid.status).to.equal(303);
    const back = new URL(paid.location!);
    expect(back.pathname).to.equal(`${new URL(payUrl).pathname}/return`);
    expect(back.searchParams.get('session_id')).to.equal(sessionId);
    // The stand-in told the demo before sending the customer back: its signed webhook reached the demo's address.
    const db = openDb(books);
    try {
      expect(db.prepare('SELECT state, received_via FROM card_payments WHERE session_id = ?').all(sessionId)).to.deep.equal([{ state: 'posted', received_via: 'webhook' }]);
    } finally {
      db.close();
    }

    // The link names the site's address (with --port 0, the default one): the same path on the demo.
    const returned = await send(`${printed.url}${back.pathname}${back.search}`);
    expect(returned.status).to.equal(200);
    expect(returned.text).to.include('This invoice is paid in full. Thank you.');
    expect(returned.text).to.not.include('by card</button>');

    const after = await api(`/invoices/${cards.invoiceId}`);
    expect(after.status).to.equal('paid');
    expect(after.balance.cents).to.equal('0');
    expect(after.payments.map((payment) => ({ method: payment.method, cents: payment.amount.cents, paidAt: payment.paidAt }))).to.deep.equal([
      { method: 'stripe', cents: before.balance.cents, paidAt: DAY },
    ]);
  });

  it('stops the stand-in with the server: neither answers once the demo has ended', async () => {
    expect(standInOrigin, 'the first test reached the stand-in').to.be.a('string');
    demo.child.kill('SIGTERM');
    expect(await demo.ended, demo.stderr()).to.equal(0);
    const reach = (url: string) =>
      fetch(url).then(
        () => 'answered',
        () => 'refused',
      );
    expect(await reach(`${demo.printed.url}/api/v1/businesses`)).to.equal('refused');
    expect(await reach(`${standInOrigin}/pay/cs_test_none`)).to.equal('refused');
  });
});

describe('daybook demo without --card-payments', function () {
  this.timeout(60_000);

  it('says how to connect the stand-in card processor, and connects nothing', async () => {
    const cli = new CliHarness();
    try {
      const stop = new AbortController();
      const live = cli.start(['--json', 'demo', '--port', '0'], { stop: stop.signal });
      try {
        await waitFor(live, () => live.stdout().endsWith('\n'), 'the demo object on stdout', 60_000);
        const printed = parseOneObject<DemoOutput>(live.stdout());
        expect(printed.cardPayments).to.deep.equal({
          connected: false,
          note: 'Card payments: `npm run demo -- --card-payments` connects a stand-in card processor, to try "Pay by card" on the pay pages',
        });
      } finally {
        stop.abort();
      }
      const result = await live.done;
      expect(result.code, result.stderr).to.equal(0);
      expect(cli.withDb((db) => db.prepare('SELECT count(*) AS n FROM card_processors').get())).to.deep.equal({ n: 0n });
    } finally {
      cli.cleanup();
    }
  });
});
