/**
 * `npm run bench:pdf` (`node --import tsx bench/pdf-stall.ts`): does drawing invoice PDFs stall
 * the server's other requests? Reported, never asserted.
 *
 * Fresh small books (bench/fixture-books.ts), the key's rate limit off, the built server
 * started. Through the API: one worst-case invoice (500 lines, descriptions of 2,000 down to
 * 1,900 characters: 500 × 2,000 with each line's other fields is more than the 1 MiB a request
 * body may be) and 100 small ones (1 to 3 lines), all sent, each one's pay link read from
 * GET /invoices/{id}. Then for BENCH_SECONDS (20), at once:
 *
 * - the probe: GET /healthz every 10 ms, one at a time on its own kept-alive connection, each
 *   latency recorded;
 * - the worst-case loop: the large invoice's PDF (GET /pay/{token}/invoice.pdf), again and again
 *   (BENCH_PDF_PATTERN=loops, the default), or once after each full rotation of the churn
 *   (BENCH_PDF_PATTERN=rounds: 100 small, then the large one, and again);
 * - the churn loop: the 100 small invoices' PDFs in rotation.
 *
 * With `loops` the large PDF is asked for between almost every two small ones, so a cache that
 * keeps the most recently used renders (v1.0.0 kept 64) keeps it; `rounds` is the order that
 * pushes it out of such a cache every round.
 *
 * Each PDF fetch comes from the next loopback address of 127.0.0.2 … 127.0.0.250 (any 127.x is
 * this machine), so the pay page's budget per client address (300 per 10 minutes) is not what
 * is measured. Prints the probe's p50 / p99 / max, the fetches and their statuses, and writes
 * the same as JSON under bench/results/ (ignored by git).
 *
 *   BENCH_SECONDS=20 npm run bench:pdf
 *   BENCH_DAYBOOK_ROOT=/tmp/daybook-v1 npm run bench:pdf   # another checkout, for before/after
 *
 * BENCH_DAYBOOK_ROOT serves that checkout's bin/daybook.js (cwd there) over books made by its
 * own bench/fixture-books.ts (so by its migrations); the API calls are the same. That checkout
 * is built first like this one (`npm run build` there), unless BENCH_NO_BUILD=1.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { projectRoot } from '../src/paths.js';
import { buildDaybook, makeFixtureBooks, setRateLimit, startDaybook, stopProcess } from './daybook-process.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 20);
/**
 * How the worst-case loop runs beside the churn: `loops`, fetching again as soon as its last
 * fetch is answered; `rounds`, once after each full rotation of the churn (100 small PDFs, then
 * the large one, and again), which pushes the large PDF out of a cache of fewer than 100.
 */
const pattern = process.env.BENCH_PDF_PATTERN ?? 'loops';
if (pattern !== 'loops' && pattern !== 'rounds') throw new Error(`BENCH_PDF_PATTERN is loops or rounds, not ${pattern}`);
/** The checkout whose server is measured: this one, or BENCH_DAYBOOK_ROOT's. */
const root = process.env.BENCH_DAYBOOK_ROOT ? resolve(process.env.BENCH_DAYBOOK_ROOT) : projectRoot;

const RESULTS_DIR = join(projectRoot, 'bench/results');
const PROBE_INTERVAL_MS = 10;
const WORST_LINES = 500;
/** Line i's description has WORST_DESCRIPTION_CHARS - (i % 101) characters: 2,000 down to 1,900, about 975,000 in all. */
const WORST_DESCRIPTION_CHARS = 2000;
const SMALL_INVOICES = 100;
/** The source addresses PDF fetches rotate through. */
const CLIENT_ADDRESSES = Array.from({ length: 249 }, (_, i) => `127.0.0.${i + 2}`);
/** A request not answered by then counts as an error (the loops must end). */
const REQUEST_TIMEOUT_MS = 120_000;
/** Probe latencies over this count as stalled. */
const STALL_MS = 100;

/** The HTTP status, or `error <code>` for a request that got none (a reset, a timeout). */
type Status = number | string;

interface Fetched {
  /** When the request started, in ms from the start of the measurement. */
  at: number;
  status: Status;
  ms: number;
  bytes: number;
}

interface LoopFigures {
  fetches: number;
  statuses: Record<string, number>;
  non200: number;
  medianMs: number | null;
  maxMs: number | null;
  medianBytes: number | null;
  /** The fetches over STALL_MS or not 200, in order: when each started, its time and status. */
  slowOrFailed: Fetched[];
}

interface ProbeFigures {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  over100Ms: number;
  non200: number;
  /** The probes over STALL_MS or not 200, in order. */
  slowOrFailed: Fetched[];
}

/** One GET, the body read and dropped; when it started (ms after `origin`), the status, the time to its last byte and its size. */
function timedGet(origin: number, url: string, agent: Agent | false, localAddress?: string): Promise<Fetched> {
  return new Promise((done) => {
    const started = performance.now();
    let bytes = 0;
    let settled = false;
    const finish = (status: Status) => {
      if (settled) return;
      settled = true;
      done({ at: Math.round(started - origin), status, ms: performance.now() - started, bytes });
    };
    const failed = (error: NodeJS.ErrnoException) => finish(`error ${error.code ?? error.message}`);
    const request = httpGet(url, { agent, localAddress, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => finish(res.statusCode ?? 'error no status'));
      res.on('error', failed);
    });
    request.on('timeout', () => request.destroy(Object.assign(new Error('timed out'), { code: 'TIMEOUT' })));
    request.on('error', failed);
  });
}

const slowOrFailed = (results: Fetched[]) => results.filter((r) => r.ms > STALL_MS || r.status !== 200).map((r) => ({ ...r, ms: Math.round(r.ms * 10) / 10 }));

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function statusCounts(results: Fetched[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { status } of results) counts[String(status)] = (counts[String(status)] ?? 0) + 1;
  return counts;
}

function loopFigures(results: Fetched[]): LoopFigures {
  const ms = results.map((r) => r.ms).sort((a, b) => a - b);
  const bytes = results.filter((r) => r.status === 200).map((r) => r.bytes).sort((a, b) => a - b);
  return {
    fetches: results.length,
    statuses: statusCounts(results),
    non200: results.filter((r) => r.status !== 200).length,
    medianMs: ms.length ? percentile(ms, 50) : null,
    maxMs: ms.at(-1) ?? null,
    medianBytes: bytes.length ? percentile(bytes, 50) : null,
    slowOrFailed: slowOrFailed(results),
  };
}

/** A call to the API that must answer `expected`; its JSON body. */
async function api<T>(base: string, key: string, method: 'GET' | 'POST', path: string, expected: number, body?: unknown, idempotencyKey?: string): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  const res = await fetch(`${base}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status !== expected) throw new Error(`${method} ${path}: ${res.status} ${(await res.text()).slice(0, 500)}`);
  return (await res.json()) as T;
}

const WORDS =
  'consulting hours for the quarterly review of accounts receivable, reconciliation of the ledger, preparation of schedules, ' +
  'meetings with the finance team, travel to the client site, and follow-up notes on the open items raised during the audit; ';

/** A description of exactly `length` characters, different for each line. */
function description(line: number, length: number): string {
  const head = `Line ${line + 1}: `;
  return (head + WORDS.repeat(Math.ceil(length / WORDS.length) + 1)).slice(0, length);
}

interface Invoices {
  worstPdf: string;
  smallPdfs: string[];
  worstDescriptionChars: number;
  setupSeconds: number;
}

/** Creates and sends the worst-case invoice and the small ones; their PDFs' paths on the server. */
async function makeInvoices(base: string, writeKey: string, businessId: string): Promise<Invoices> {
  const started = performance.now();
  const { accounts } = await api<{ accounts: { id: string; name: string }[] }>(base, writeKey, 'GET', `/accounts?entityId=${businessId}&type=revenue`, 200);
  const accountId = (accounts.find((a) => a.name === 'Sales') ?? accounts[0])?.id;
  if (!accountId) throw new Error('the business has no revenue account');
  const customer = await api<{ id: string }>(base, writeKey, 'POST', '/customers', 201, { name: 'Bench Customer Ltd', email: 'ap@bench-customer.example', addressLine1: '1 Ledger Lane', city: 'Portland' }, 'bench-pdf-customer');

  const create = async (name: string, lines: { description: string; quantity: string; unitPriceCents: string; accountId: string }[]) => {
    const made = await api<{ invoiceId: string }>(base, writeKey, 'POST', '/invoices', 201, { entityId: businessId, customerId: customer.id, lines }, `bench-pdf-create-${name}`);
    return made.invoiceId;
  };
  const worstLines = Array.from({ length: WORST_LINES }, (_, i) => ({ description: description(i, WORST_DESCRIPTION_CHARS - (i % 101)), quantity: String((i % 7) + 1), unitPriceCents: String(1000 + i * 37), accountId }));
  const worstId = await create('worst', worstLines);
  const worstDescriptionChars = worstLines.reduce((sum, line) => sum + line.description.length, 0);
  const smallIds: string[] = [];
  for (let n = 0; n < SMALL_INVOICES; n++) {
    const lines = Array.from({ length: (n % 3) + 1 }, (_, i) => ({ description: `Pastry trays, order ${n + 1}, item ${i + 1}`, quantity: String(i + 1), unitPriceCents: String(2500 + n * 10 + i), accountId }));
    smallIds.push(await create(`small-${n}`, lines));
  }

  const pdfPath = async (id: string) => {
    await api(base, writeKey, 'POST', `/invoices/${id}/send`, 200, undefined, `bench-pdf-send-${id}`);
    const { payUrl } = await api<{ payUrl: string }>(base, writeKey, 'GET', `/invoices/${id}`, 200);
    // The link names the configured site; the token is what matters here.
    return `${new URL(payUrl).pathname}/invoice.pdf`;
  };
  const worstPdf = await pdfPath(worstId);
  const smallPdfs: string[] = [];
  for (const id of smallIds) smallPdfs.push(await pdfPath(id));
  return { worstPdf, smallPdfs, worstDescriptionChars, setupSeconds: (performance.now() - started) / 1000 };
}

interface Measured {
  probe: ProbeFigures;
  worst: LoopFigures;
  churn: LoopFigures;
  /** Seconds from the start until the last loop's last request ended (a slow PDF finishes after the deadline). */
  elapsedSeconds: number;
}

async function measure(base: string, invoices: Invoices): Promise<Measured> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const probeAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  let nextAddress = 0;
  const address = () => CLIENT_ADDRESSES[nextAddress++ % CLIENT_ADDRESSES.length];

  const probe = async (): Promise<Fetched[]> => {
    const results: Fetched[] = [];
    let next = performance.now();
    while (performance.now() < deadline) {
      results.push(await timedGet(started, `${base}/healthz`, probeAgent));
      next += PROBE_INTERVAL_MS;
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
      // After a stall, probe again at once and keep the 10 ms rhythm from there.
      else next = performance.now();
    }
    return results;
  };
  // A new connection per PDF fetch, as from many customers (kept-alive sockets left idle about
  // as long as the server's keep-alive timeout meet it closing them: resets, not answers).
  const pdf = (path: string) => timedGet(started, `${base}${path}`, false, address());

  // The churn's fetches so far; in `rounds`, the worst-case loop waits for each full rotation.
  let churned = 0;
  let wake: (() => void) | null = null;
  const afterChurned = (count: number) =>
    new Promise<void>((resolve) => {
      wake = () => {
        if (churned < count && performance.now() < deadline) return;
        wake = null;
        resolve();
      };
      wake();
    });
  const churnLoop = async (): Promise<Fetched[]> => {
    const results: Fetched[] = [];
    for (let i = 0; performance.now() < deadline; i++) {
      results.push(await pdf(invoices.smallPdfs[i % invoices.smallPdfs.length]!));
      churned++;
      wake?.();
    }
    wake?.();
    return results;
  };
  const worstLoop = async (): Promise<Fetched[]> => {
    const results: Fetched[] = [];
    while (performance.now() < deadline) {
      if (pattern === 'rounds') {
        await afterChurned(churned + invoices.smallPdfs.length);
        if (performance.now() >= deadline) break;
      }
      results.push(await pdf(invoices.worstPdf));
    }
    return results;
  };

  try {
    const [probed, worst, churn] = await Promise.all([probe(), worstLoop(), churnLoop()]);
    const ms = probed.map((r) => r.ms).sort((a, b) => a - b);
    return {
      probe: {
        count: probed.length,
        p50Ms: percentile(ms, 50),
        p99Ms: percentile(ms, 99),
        maxMs: ms.at(-1)!,
        over100Ms: ms.filter((v) => v > STALL_MS).length,
        non200: probed.filter((r) => r.status !== 200).length,
        slowOrFailed: slowOrFailed(probed),
      },
      worst: loopFigures(worst),
      churn: loopFigures(churn),
      elapsedSeconds: (performance.now() - started) / 1000,
    };
  } finally {
    probeAgent.destroy();
  }
}

/** What is measured: the checkout, its package version and (read-only) its commit, if it is a git checkout. */
function describeRoot(): { root: string; version: string; commit: string | null } {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const head = spawnSync('git', ['-C', root, 'rev-parse', '--show-toplevel', 'HEAD'], { encoding: 'utf8' });
  const [toplevel, commit] = head.status === 0 ? head.stdout.trim().split('\n') : [];
  return { root, version, commit: toplevel && resolve(toplevel) === root ? (commit ?? null) : null };
}

const f = (value: number | null, digits = 1) => (value === null ? '-' : value.toFixed(digits));
const statuses = (figures: { statuses: Record<string, number> }) =>
  Object.entries(figures.statuses)
    .map(([status, n]) => `${status}×${n}`)
    .join(' ');

/** The three longest of `results` as `ms @ s from the start`. */
const longest = (results: Fetched[]) =>
  [...results]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 3)
    .map((r) => `${f(r.ms, 0)} @ ${f(r.at / 1000)}`)
    .join(', ') || '-';

function print(measured: Measured): void {
  const { probe, worst, churn } = measured;
  const rows: [string, string][] = [
    ['probe GET /healthz p50 / p99 / max (ms)', `${f(probe.p50Ms)} / ${f(probe.p99Ms)} / ${f(probe.maxMs)}`],
    ['probe count (one every 10 ms when answered)', `${probe.count}`],
    [`probes over ${STALL_MS} ms`, `${probe.over100Ms}`],
    ['longest probes (ms @ s from the start)', longest(probe.slowOrFailed)],
    ['worst-case PDF fetches, median / max (ms)', `${worst.fetches}, ${f(worst.medianMs)} / ${f(worst.maxMs)}`],
    ['churn PDF fetches (100 small), median / max (ms)', `${churn.fetches}, ${f(churn.medianMs)} / ${f(churn.maxMs)}`],
    ['PDF bytes, worst-case / small (median)', `${worst.medianBytes ?? '-'} / ${churn.medianBytes ?? '-'}`],
    ['non-200: probe / worst-case / churn', `${probe.non200} / ${worst.non200} / ${churn.non200}`],
    ['statuses: worst-case | churn', `${statuses(worst)} | ${statuses(churn)}`],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  console.log();
  for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
}

async function main(): Promise<void> {
  const about = describeRoot();
  buildDaybook(root);
  const setting =
    `node ${process.version}, ${cpus().length} cores, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, ${seconds} s, pattern ${pattern}, ` +
    `daybook ${about.version} at ${about.root}${about.commit ? ` (HEAD ${about.commit.slice(0, 10)}, working tree as it is)` : ''}`;
  console.log(setting);
  const fixture = makeFixtureBooks(root);
  try {
    setRateLimit(fixture.db, fixture.tenantId, 'off');
    const server = await startDaybook(fixture.db, [], root);
    let measured: Measured;
    let setup: { setupSeconds: number; worstDescriptionChars: number };
    try {
      const invoices = await makeInvoices(server.url, fixture.writeKey, fixture.businessId);
      setup = { setupSeconds: invoices.setupSeconds, worstDescriptionChars: invoices.worstDescriptionChars };
      console.log(
        `set up in ${setup.setupSeconds.toFixed(1)} s: 1 invoice of ${WORST_LINES} lines × ${WORST_DESCRIPTION_CHARS - 100}–${WORST_DESCRIPTION_CHARS} characters ` +
          `(${setup.worstDescriptionChars.toLocaleString('en-US')} in all) and ${SMALL_INVOICES} of 1 to 3 lines, all sent; measuring for ${seconds} s`,
      );
      measured = await measure(server.url, invoices);
    } finally {
      await stopProcess(server.child);
    }
    print(measured);
    mkdirSync(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `pdf-stall-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    const json = { setting, node: process.version, cores: cpus().length, seconds, pattern, daybook: about, ...setup, ...measured };
    writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
    console.log(`\nfigures written to ${file}`);
  } finally {
    rmSync(fixture.dir, { recursive: true, force: true });
  }
}

await main();
