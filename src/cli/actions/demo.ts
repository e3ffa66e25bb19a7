import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, statSync } from 'node:fs';
import { DEMO_FIRST_DAY, DEMO_LAST_DAY, type DemoBooks, seedDemo } from '../../seeds/demo.js';
import { type Clock, fixedClock, todayUtc } from '../../clock.js';
import { type Config, loadConfig } from '../../config.js';
import { payToken, payUrl } from '../../books/pay-links.js';
import { setCardPayments } from '../../door/commands/accounts.js';
import { createSignInLinkCommand } from '../../door/commands/console.js';
import { signInUrl } from './console.js';
import type { FakeStripe } from '../../testing/fake-stripe.js';
import { databaseFiles } from '../../db/connection.js';
import { redactUrl } from '../../redact.js';
import { acquireServerLock } from '../../db/server-lock.js';
import { type CommandContext, withBooksAt, writeAsCli } from '../context.js';
import { UsageError } from '../errors.js';
import { DEMO_DB_PATH, DEMO_HOST, DEMO_PORT, demoShellLine } from '../settings.js';
import { clockOption, serveUntilStopped } from './serve.js';

function removeDatabaseFiles(path: string): void {
  for (const file of databaseFiles(path)) rmSync(file, { force: true });
}

/**
 * Without --db: ./data/demo.sqlite, deleted first so the books are fresh. With --db: the file
 * must not hold anything yet, so `demo` can never write demo books into real ones. The caller
 * holds the file's server lock, so no running demo loses its books.
 */
function freshDemoPath(path: string, dbOption: string | undefined): string {
  if (dbOption === undefined) {
    removeDatabaseFiles(path);
    return path;
  }
  if (existsSync(path) && statSync(path).size > 0) {
    throw new UsageError(`demo: ${path} already exists; give a new file, or omit --db to use ${DEMO_DB_PATH} (recreated each run)`);
  }
  return path;
}

/** `at`: the instant --clock fixed the demo's clock at, if it did. */
/** The first business, connected to the stand-in card processor, and the unpaid invoice whose pay link is printed. */
interface DemoCards {
  businessId: string;
  businessName: string;
  invoiceId: string;
  invoiceNumber: string;
  payUrl: string;
}

/** What the demo says about card payments: how to try them, or how to turn them on. */
function cardPaymentsPart(cards: DemoCards | undefined): { json: Record<string, unknown>; lines: string[] } {
  if (!cards) {
    const note = 'Card payments: `npm run demo -- --card-payments` connects a stand-in card processor, to try "Pay by card" on the pay pages';
    return { json: { connected: false, note }, lines: [note] };
  }
  const connected = `Card payments: ${cards.businessName} takes cards through a stand-in processor on this machine; no card is asked for and no money moves.`;
  const howTo = `To try it, open an unpaid invoice's pay link, press "Pay … by card", then "Pay" on the stand-in's page: you come back to the invoice, paid.`;
  return {
    json: { connected: true, businessId: cards.businessId, invoiceId: cards.invoiceId, invoiceNumber: cards.invoiceNumber, payUrl: cards.payUrl, note: `${connected} ${howTo}` },
    lines: [connected, howTo, `${cards.invoiceNumber}'s pay link:`, cards.payUrl],
  };
}

function printDemo(context: CommandContext, demo: DemoBooks, url: string, config: Config, at: Date | undefined, cards: DemoCards | undefined, consoleUrl: string): void {
  const curl = `curl -s -H "Authorization: Bearer ${demo.key}" ${url}/api/v1/businesses`;
  const shell = demoShellLine(config.db, demo.key, url);
  const mail = config.smtpUrl ? `sent through ${redactUrl(config.smtpUrl)}` : 'written to the log (set DAYBOOK_SMTP_URL to send it)';
  const clock = at?.toISOString();
  const cardPayments = cardPaymentsPart(cards);
  context.out.result({ url, key: demo.key, keyId: demo.keyId, accountId: demo.tenantId, businesses: demo.businesses, curl, shell, mail, cardPayments: cardPayments.json, consoleUrl, ...(clock ? { clock } : {}) }, [
    `Demo books for ${demo.tenantName} (account ${demo.tenantId}):`,
    ...demo.businesses.map((business) => `  ${business.name}  ${business.id}`),
    `API key (read-write, all businesses; id ${demo.keyId}):`,
    demo.key,
    `Daybook is listening on ${url}`,
    ...(clock ? [`Clock: fixed at ${clock} (--clock); the books are dated from that day`] : []),
    `Email (invoices sent, reminders): ${mail}`,
    ...cardPayments.lines,
    `The owner's console (keys, audit trail, Today, review queue): open this one-time sign-in link within ${DEMO_CONSOLE_LINK_MINUTES} minutes:`,
    consoleUrl,
    'Try:',
    curl,
    'In another terminal, this line sets up `daybook`, KEY, H and API for the guides in docs/:',
    shell,
  ]);
}

/** How long the demo's console sign-in link works: long enough to read the output first. */
const DEMO_CONSOLE_LINK_MINUTES = 60;

interface DemoOptions {
  port?: number;
  clock?: string;
  cardPayments?: boolean;
}

/**
 * Made-up secrets of the processor's shapes for the stand-in: the demo's books keep them as
 * real ones are kept, and the stand-in signs its webhooks with the second.
 */
function standInSecrets(): { secretKey: string; webhookSecret: string } {
  return { secretKey: `sk_test_demo${randomBytes(16).toString('hex')}`, webhookSecret: `whsec_demo${randomBytes(24).toString('hex')}` };
}

export async function demo(options: DemoOptions, context: CommandContext): Promise<void> {
  // Read before the books are touched: a bad --clock leaves the last demo's books as they were.
  const at = options.clock === undefined ? undefined : await clockOption(options.clock);
  // As `serve --ephemeral --clock` does: "now" stays at that instant while the demo serves, so the
  // same requests get the same answers on any day (time-driven state, such as the rate-limit
  // windows, does not move on either).
  const clock: Clock = at ? fixedClock(at) : context.io.clock;
  const day = todayUtc(clock);
  if (at && (day < DEMO_FIRST_DAY || day > DEMO_LAST_DAY)) {
    throw new UsageError(`--clock: the demo's dates reach two years back and a month ahead of its day: give a day from ${DEMO_FIRST_DAY} to ${DEMO_LAST_DAY}`);
  }
  const dbOption = context.globals.db;
  // Held from before the books are recreated until the server stops: no other demo or server
  // can serve, delete or reseed them meanwhile.
  const releaseLock = acquireServerLock(dbOption ?? DEMO_DB_PATH);
  let fake: FakeStripe | undefined;
  try {
    const path = freshDemoPath(dbOption ?? DEMO_DB_PATH, dbOption);
    const port = options.port ?? DEMO_PORT;
    // Pay links point at the demo itself unless DAYBOOK_SITE_URL says otherwise (port 0 is not known yet).
    const siteUrl = context.io.env.DAYBOOK_SITE_URL === undefined && port !== 0 ? { siteUrl: `http://localhost:${port}` } : {};
    // The demo books carry their own rates and are made fresh each run: no rate fetch (the demo
    // often runs offline) and no backups, unless the environment asks for them.
    const quietJobs = {
      ...(context.io.env.DAYBOOK_JOB_RATES === undefined ? { jobRates: null } : {}),
      ...(context.io.env.DAYBOOK_JOB_BACKUP === undefined ? { jobBackup: null } : {}),
    };
    if (options.cardPayments) {
      // The stand-in card processor, on loopback: loaded only when asked for.
      const { startFakeStripe } = await import('../../testing/fake-stripe.js');
      fake = await startFakeStripe();
      // Charges are dated on the demo's day, as its books are.
      fake.now = () => Math.floor(clock.now().getTime() / 1000);
    }
    const processor = fake ? { stripeApiUrl: fake.url, stripeCheckoutOrigin: fake.checkoutOrigin } : {};
    const config = loadConfig(context.io.env, { db: path, host: DEMO_HOST, port, ...siteUrl, ...quietJobs, ...processor });
    const served = { ...context, io: { ...context.io, clock } };
    const secrets = fake ? standInSecrets() : undefined;
    const { books, cards, endpointId, signIn } = await withBooksAt(path, context.actor, clock, (db) => {
      const books = seedDemo(db, clock, { siteUrl: config.siteUrl });
      // As `daybook console link` makes one, through the same command.
      const signIn = writeAsCli(db, served, createSignInLinkCommand, { tenantId: books.tenantId, minutes: DEMO_CONSOLE_LINK_MINUTES });
      if (!secrets) return { books, cards: undefined, endpointId: undefined, signIn };
      // As `daybook business set-payments` connects a business, through the same command.
      const { businessId, id, number } = books.unpaidInvoice;
      const connection = writeAsCli(db, served, setCardPayments, { businessId, secrets });
      const businessName = books.businesses.find((business) => business.id === businessId)!.name;
      return { books, cards: { businessId, businessName, invoiceId: id, invoiceNumber: number, token: payToken(db, id) }, endpointId: connection.connected ? connection.endpointId : undefined, signIn };
    });
    await serveUntilStopped(
      served,
      config,
      (server) => {
        if (fake && secrets && endpointId) fake.webhookTo = { url: `${server.url}/webhooks/stripe/${endpointId}`, secret: secrets.webhookSecret };
        // The link as the invoice's email gives it, or this server's own when the site's address is not known (--port 0).
        const site = siteUrl.siteUrl ?? (context.io.env.DAYBOOK_SITE_URL === undefined ? server.url : config.siteUrl);
        const shown = cards && { ...cards, payUrl: payUrl(site, cards.token) };
        printDemo(context, books, server.url, config, at, shown, signInUrl(site, signIn.token));
      },
      releaseLock,
    );
  } finally {
    releaseLock();
    await fake?.close();
  }
}

