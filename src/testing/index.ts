import { createAccount, createBusinessCommand, createKeyCommand, updateAccount } from '../door/commands/accounts.js';
import { type Command, type Writer, writeNow } from '../door/door.js';
import { INSTALLATION_REACH } from '../door/reach.js';
import { CLI_ACTOR } from '../store/audit.js';
import { type Basis, type Business } from '../books/businesses.js';
import { type KeyAccess } from '../books/keys.js';
import type { Plan } from '../books/plans.js';
import { fixedClock } from '../clock.js';
import { isIsoDate } from '../dates.js';
import { ConfigError, type LogLevel } from '../config.js';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { guardBookWrites, openDb } from '../db/connection.js';
import { FaultQueue, faultFor, type TestFailure } from '../http/faults.js';
import { CapturingMailer, type Outbox } from '../email/captured-outbox.js';
import { type ControlHandlers, RefusedInput } from '../http/control.js';
import { createLogger } from '../log.js';
import { seedDemo } from '../seeds/demo.js';
import { checkFixture, type Fixture, loadFixture } from './fixture.js';
import { removedOnExit } from './removed-on-exit.js';
import { startServer } from '../server.js';
import { JOBS_OFF, throwawayBooks, throwawayConfig } from '../db/throwaway-books.js';

/**
 * Daybook as a throwaway server inside another product's test suite (`daybook/testing`): the
 * real engine on a free loopback port, over books of its own in a temporary folder, with an
 * account, businesses and keys made as asked, a clock the test sets, and the emails it would
 * have sent kept in an outbox instead. Nothing is shared between two of them.
 */

export type { Fixture } from './fixture.js';
export type { CapturedAttachment, CapturedEmail, Outbox } from '../email/captured-outbox.js';
export type { TestFailure } from '../http/faults.js';

export interface StartDaybookOptions {
  /** The clock's start, an ISO date or instant (default: now). */
  at?: string;
  /** The account's name (default "Test Account"). */
  accountName?: string;
  /** The businesses to create, by name (default one, "Test Business"). */
  businesses?: string[];
  /** The keys to create (default one Read and write key for every business). */
  keys?: TestKeyOptions[];
  /** The account's plan (default large). */
  plan?: Plan;
  /** Whether the plan's request budgets apply (default false: a test suite is no abuse). */
  rateLimits?: boolean;
  /**
   * The site address every link Daybook writes is made under: pay links in emails and PDFs,
   * `payUrl`/`webUrl` in API answers, Today's evidence links (default: the server's own url;
   * `payUrl` in the outbox always points at this server).
   */
  siteUrl?: string;
  /** The server's log level (default silent). */
  logLevel?: LogLevel;
  /** Serve the control surface under /__daybook (`serve --ephemeral --control`; default off). */
  control?: boolean;
  /**
   * Books to start from instead of an empty account: a fixture (docs/testing-with-daybook.md;
   * a bad one is refused with the path of the bad field), or 'demo', the demo's books (two
   * businesses, two years of history dated back from the clock, invoices in every state, a
   * review queue) with their own account and one Read and write key.
   */
  fixture?: 'demo' | Fixture;
}

export interface TestKeyOptions {
  /** Default "test key N". */
  name?: string;
  /** Default read_write. */
  access?: KeyAccess;
  /** Names of businesses the key is limited to (default: not limited). */
  businesses?: string[];
  /** The last day it works (YYYY-MM-DD), if it should expire. */
  expiresOn?: string;
}

export interface TestKey {
  id: string;
  name: string;
  access: KeyAccess;
  /** The key to send as `Authorization: Bearer <key>`. */
  key: string;
}

export interface RunningDaybook {
  /** Base address, e.g. http://127.0.0.1:41234; the API is under /api/v1. */
  url: string;
  accountId: string;
  businesses: Array<{ id: string; name: string }>;
  keys: TestKey[];
  /** Everything that depends on "now" follows it: clock.set('2027-01-31'), clock.advanceDays(45). */
  clock: TestClock;
  outbox: Outbox;
  /**
   * The next `count` requests under /api/v1 fail as asked, with the spec's error bodies:
   * `{status: 429, retryAfterSeconds}` (rate_limited), `{status: 500}` (internal_error, the
   * request does not run), or `{stallMs}` (answered normally, that much later).
   */
  failNext(count: number, failure: TestFailure): void;
  /** Runs a job now (overdue, outbox, rates, backup, housekeeping); none runs on a timer. */
  runJob(name: 'overdue' | 'outbox' | 'rates' | 'backup' | 'housekeeping'): Promise<void>;
  /** Stops the server and removes its books (which go anyway when the process ends). */
  close(): Promise<void>;
}

export async function startDaybook(options: StartDaybookOptions = {}): Promise<RunningDaybook> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      // The free port chosen for the site address was taken before the server bound it: start again on another.
      if (options.siteUrl || attempt >= PORT_ATTEMPTS || !(error instanceof ConfigError && error.message.includes('already in use'))) throw error;
    }
  }
}

/** How many free ports startDaybook tries when another program takes the one it chose first. */
const PORT_ATTEMPTS = 5;

/**
 * A loopback port free now: the server binds it a moment later. Chosen before the books are
 * made, so that every link Daybook writes (emails, PDFs, API answers, Today) is under the
 * server's own address, the fixture's included.
 */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, LOOPBACK, () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

const LOOPBACK = '127.0.0.1';

async function startOnce(options: StartDaybookOptions): Promise<RunningDaybook> {
  const port = options.siteUrl ? 0 : await freeLoopbackPort();
  // Removed by close(), and by the process ending any other way (src/testing/removed-on-exit.ts).
  const books = removedOnExit(await throwawayBooks('daybook-testing-'));
  try {
    const clock = testClock(options.at ?? new Date());
    const outbox = new CapturingMailer();
    const faults = new FaultQueue();
    const config = throwawayConfig(books.path, {
      logLevel: options.logLevel ?? 'silent',
      host: LOOPBACK,
      port,
      siteUrl: options.siteUrl || `http://${LOOPBACK}:${port}`,
      ...JOBS_OFF,
    });
    const made = options.fixture === 'demo' ? demoAccount(books.path, clock, options, config.siteUrl) : makeAccount(books.path, clock, options, config.siteUrl);
    let runJob: (name: string) => Promise<void> = () => Promise.reject(new Error('the server is starting'));
    const control: ControlHandlers = {
      setClock: (at) => (clock.set(at), clock.now()),
      advanceDays: (days) => (clock.advanceDays(days), clock.now()),
      runJob: (name) => runJob(name),
      outbox: () => outbox.messages(),
      failNext: (count, failure) => faults.add(count, faultFor(count, failure as TestFailure)),
    };
    const server = await startServer(config, { clock, log: createLogger(config.logLevel), mailer: outbox, faults, ...(options.control ? { control } : {}) });
    runJob = (name) => server.runJob(name);
    outbox.payPagesAt(server.url);
    let closed = false;
    return {
      url: server.url,
      ...made,
      clock,
      outbox,
      failNext: control.failNext,
      runJob: (name) => server.runJob(name),
      async close() {
        if (closed) return;
        closed = true;
        await server.close();
        books.remove();
      },
    };
  } catch (error) {
    books.remove();
    throw error;
  }
}

/**
 * The server's clock: set to a day (YYYY-MM-DD, its midnight UTC) or an instant, or moved on,
 * by at most MAX_ADVANCE_DAYS at a time and never outside the years 0000 to 9999 (the books
 * write dates as YYYY-MM-DD). A move it refuses throws and leaves the clock where it was.
 */
export interface TestClock {
  now(): Date;
  set(at: string | Date): void;
  advanceMs(ms: number): void;
  advanceDays(days: number): void;
}

/** The most days one advanceDays may move the clock, either way: a century. */
export const MAX_ADVANCE_DAYS = 36_500;

const DAY_MS = 86_400_000;
const EARLIEST_MS = Date.parse('0000-01-01T00:00:00.000Z');
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z');

const ISO_INSTANT = /^([0-9]{4}-[0-9]{2}-[0-9]{2})T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,3})?)?(Z|[+-][0-9]{2}:[0-9]{2})$/;

/**
 * A day or an ISO 8601 instant, refused when it is neither, names a day that does not exist
 * (2027-02-30), or falls outside the years 0000 to 9999.
 */
export function clockInstant(at: string | Date): Date {
  return withinClockYears(parsedInstant(at), at);
}

function parsedInstant(at: string | Date): Date {
  if (at instanceof Date) {
    if (Number.isNaN(at.getTime())) throw new Error('clock: an invalid Date');
    return new Date(at.getTime());
  }
  if (isIsoDate(at)) return new Date(`${at}T00:00:00.000Z`);
  const day = ISO_INSTANT.exec(at)?.[1];
  if (day === undefined || !isIsoDate(day) || Number.isNaN(Date.parse(at))) {
    throw new Error(`clock: "${at}" is not a day (YYYY-MM-DD) or an ISO 8601 instant (2027-01-31T09:00:00Z)`);
  }
  return new Date(at);
}

/** An instant with a UTC offset can land a day past 9999-12-31 though it names that day. */
function withinClockYears(instant: Date, at: string | Date): Date {
  if (instant.getTime() < EARLIEST_MS || instant.getTime() > LATEST_MS) {
    throw new Error(`clock: ${at instanceof Date ? instant.toISOString() : `"${at}"`} is outside the years 0000 to 9999 (UTC)`);
  }
  return instant;
}

function testClock(at: string | Date): TestClock {
  const clock = fixedClock(clockInstant(at));
  const moveBy = (field: 'advanceDays' | 'advanceMs', ms: number): void => {
    const from = clock.now().getTime();
    if (from + ms < EARLIEST_MS || from + ms > LATEST_MS) {
      throw new RefusedInput('clock', field, `would take the clock from ${clock.now().toISOString()} outside the years 0000 to 9999`);
    }
    clock.advanceMs(ms);
  };
  return {
    now: () => clock.now(),
    set: (next) => clock.set(clockInstant(next)),
    advanceMs: (ms) => moveBy('advanceMs', finiteNumber('advanceMs', ms)),
    advanceDays: (days) => {
      if (Math.abs(finiteNumber('advanceDays', days)) > MAX_ADVANCE_DAYS) {
        throw new RefusedInput('clock', 'advanceDays', `must be from -${MAX_ADVANCE_DAYS} to ${MAX_ADVANCE_DAYS} days (got ${days})`);
      }
      moveBy('advanceDays', days * DAY_MS);
    },
  };
}

function finiteNumber(field: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new RefusedInput('clock', field, `must be a finite number (got ${String(value)})`);
  return value;
}

type MadeAccount = Pick<RunningDaybook, 'accountId' | 'businesses' | 'keys'>;

/** The test double writes as the server's operator would, through the write door. */
const AS_OPERATOR: Writer = { actor: CLI_ACTOR, reach: INSTALLATION_REACH };

function demoAccount(dbPath: string, clock: TestClock, options: StartDaybookOptions, siteUrl: string): MadeAccount {
  for (const option of ['accountName', 'businesses', 'keys', 'plan'] as const) {
    if (options[option] !== undefined) throw new Error(`startDaybook: the demo fixture makes its own account, businesses and key; leave out ${option}`);
  }
  const db = openDb(dbPath);
  try {
    guardBookWrites(db);
    const demo = seedDemo(db, clock, { siteUrl });
    if (!options.rateLimits) writeNow({ db, clock }, AS_OPERATOR, updateAccount, { id: demo.tenantId, changes: { rateLimit: { mode: 'off' } } });
    return { accountId: demo.tenantId, businesses: demo.businesses, keys: [{ id: demo.keyId, name: 'demo key', access: 'read_write', key: demo.key }] };
  } finally {
    db.close();
  }
}

function makeAccount(dbPath: string, clock: TestClock, options: StartDaybookOptions, siteUrl: string): MadeAccount {
  const fixture = options.fixture === undefined || options.fixture === 'demo' ? undefined : checkFixture(options.fixture);
  if (fixture?.accountName !== undefined && options.accountName !== undefined) throw new Error('startDaybook: the fixture names the account; leave out accountName');
  if (fixture?.businesses !== undefined && options.businesses !== undefined) throw new Error('startDaybook: the fixture names the businesses; leave out businesses');
  const db = openDb(dbPath);
  try {
    guardBookWrites(db);
    const write = <I, R>(command: Command<I, R, undefined>, input: I): R => writeNow({ db, clock }, AS_OPERATOR, command, input);
    const tenant = write(createAccount, { name: fixture?.accountName ?? options.accountName ?? 'Test Account', plan: options.plan ?? 'large' });
    if (!options.rateLimits) write(updateAccount, { id: tenant.id, changes: { rateLimit: { mode: 'off' } } });
    const asked: Array<{ name: string; basis?: Basis }> = fixture?.businesses ?? (options.businesses ?? ['Test Business']).map((name) => ({ name }));
    const businesses: Business[] = asked.map(({ name, basis }) => write(createBusinessCommand, { tenantId: tenant.id, name, ...(basis ? { basis } : {}) }));
    if (fixture) loadFixture(db, clock, tenant.id, businesses, fixture, siteUrl);
    const byName = (name: string): string => {
      const found = businesses.find((business) => business.name === name);
      if (!found) throw new Error(`startDaybook: key limited to "${name}", which is not one of the businesses (${businesses.map((b) => b.name).join(', ')})`);
      return found.id;
    };
    const keys = (options.keys ?? [{}]).map((key, index) => {
      const created = write(createKeyCommand, {
        tenantId: tenant.id,
        name: key.name ?? `test key ${index + 1}`,
        access: key.access ?? 'read_write',
        ...(key.businesses ? { businessIds: key.businesses.map(byName) } : {}),
        ...(key.expiresOn ? { expiresOn: key.expiresOn } : {}),
      });
      return { id: created.id, name: created.name, access: created.access, key: created.key };
    });
    return { accountId: tenant.id, businesses: businesses.map(({ id, name }) => ({ id, name })), keys };
  } finally {
    db.close();
  }
}
