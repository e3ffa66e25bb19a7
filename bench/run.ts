/**
 * `npm run bench`: Daybook against baselines measured in the same run on the same machine,
 * reported as ratios (absolute figures drift on shared machines; ratios much less). Every
 * server runs in its own process; autocannon, the load generator, runs in this one. Each
 * measurement is repeated (Daybook and its baseline alternating) and the median kept. The
 * tables go to stdout and the same figures, as JSON, to bench/results/ (ignored by git).
 *
 * Scenarios: the pipeline (GET /businesses at 10 and at 50 connections vs bare Koa running the
 * same SELECT and JSON, and vs bare Koa answering the same bytes), the write path (POST
 * /expenses with an Idempotency-Key at 50 connections vs a bare better-sqlite3 loop committing
 * the same rows one transaction each, and alone on one connection), and on large books (bench/large-books.ts, made once per size and kept under
 * bench/results/books/) the read path (GET /transactions?limit=50 vs bare Koa running the same
 * SELECT), the five reports' latency, the server's peak memory, and how both grow with the
 * books. Daybook's rate limit is on, lifted to a budget no run reaches, so it still counts.
 *
 *   npm run bench
 *   BENCH_SECONDS=10 BENCH_REPEATS=5 BENCH_CONNECTIONS=10 BENCH_READ_CONNECTIONS=50 BENCH_WRITE_CONNECTIONS=50 \
 *     BENCH_LINES=10000,100000,1000000 BENCH_REPORT_RUNS=100 BENCH_WARMUP_SECONDS=3 \
 *     BENCH_SCENARIOS=small,large npm run bench
 *
 * Daybook runs as built (bench/daybook-process.ts: `npm run build` first, unless
 * BENCH_NO_BUILD=1), from BENCH_DAYBOOK_ROOT when given (another checkout, for a before and
 * after; its own migrations make the small books); the baselines and the books generator run
 * from this checkout's sources.
 */
import autocannon from 'autocannon';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { systemClock, todayUtc } from '../src/clock.js';
import { addDays } from '../src/dates.js';
import { openDb } from '../src/db/connection.js';
import { loadConfig } from '../src/config.js';
import { projectRoot } from '../src/paths.js';
import {
  buildDaybook,
  type FixtureBooks,
  makeFixtureBooks,
  setRateLimit,
  startDaybook,
  startScript,
  stopProcess,
} from './daybook-process.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const repeats = Number(process.env.BENCH_REPEATS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const readConnections = Number(process.env.BENCH_READ_CONNECTIONS ?? 50);
const writeConnections = Number(process.env.BENCH_WRITE_CONNECTIONS ?? 50);
const bookSizes = (process.env.BENCH_LINES ?? '10000,100000,1000000').split(',').map(Number).sort((a, b) => a - b);
const reportRuns = Number(process.env.BENCH_REPORT_RUNS ?? 100);
/** Load before the measured runs, discarded: the first seconds of a fresh process run code the JIT has not yet compiled. */
const warmUpSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
/** The checkout whose Daybook is measured (this one unless given: another for a before and after); baselines and books come from this one. */
const daybookRoot = process.env.BENCH_DAYBOOK_ROOT ?? projectRoot;
/** Which scenarios to run: `small` (pipeline and write path) and `large` (the large books). */
const scenarios = new Set((process.env.BENCH_SCENARIOS ?? 'small,large').split(','));

const RESULTS_DIR = join(projectRoot, 'bench/results');
/** The server's peak resident memory under load on the largest books. */
const RSS_TARGET_MB = 150;
/** The server's durability setting (DAYBOOK_SQLITE_SYNCHRONOUS, default full); the write baseline uses the same. */
const synchronous = loadConfig(process.env).sqliteSynchronous;

interface Measured {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  failed: number;
}

interface RatioRow {
  scenario: string;
  daybook: Measured;
  baseline: Measured | null;
  ratio: number | null;
  target: number | null;
  /** A bound on Daybook's p99, where the issue sets one. */
  p99TargetMs?: number;
}

interface LatencyRow {
  report: string;
  lines: number;
  medianMs: number;
  p99Ms: number;
  targetMs: number | null;
}

interface GrowthRow {
  lines: number;
  registerRows: number;
  read: Measured;
}

/** Runs `work` with the process `start` starts (Daybook or a baseline), stopping it afterwards however `work` ends. */
async function withRunning<P extends { child: ChildProcess }, R>(start: Promise<P>, work: (running: P) => Promise<R>): Promise<R> {
  const running = await start;
  try {
    return await work(running);
  } finally {
    await stopProcess(running.child);
  }
}

type LoadOptions = Omit<autocannon.Options, 'url' | 'duration'>;

async function load(url: string, options: LoadOptions = {}): Promise<Measured> {
  const result = await autocannon({ url, connections, duration: seconds, ...options });
  return { requestsPerSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, failed: result.non2xx + result.errors + result.timeouts };
}

async function warmUp(url: string, options: LoadOptions = {}): Promise<void> {
  if (warmUpSeconds > 0) await autocannon({ url, connections, ...options, duration: warmUpSeconds });
}

function median(runs: Measured[]): Measured {
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function times(count: number, measure: () => Promise<Measured>): Promise<Measured[]> {
  const runs: Measured[] = [];
  for (let i = 0; i < count; i++) runs.push(await measure());
  return runs;
}

/** Runs Daybook's load and the baseline's load `repeats` times each, alternating, and keeps the medians. */
async function alternate(daybook: () => Promise<Measured>, baseline: () => Promise<Measured>): Promise<{ daybook: Measured; baseline: Measured }> {
  const ours: Measured[] = [];
  const theirs: Measured[] = [];
  for (let i = 0; i < repeats; i++) {
    ours.push(await daybook());
    theirs.push(await baseline());
  }
  return { daybook: median(ours), baseline: median(theirs) };
}

function ratioRow(scenario: string, measured: { daybook: Measured; baseline: Measured }, target: number | null, p99TargetMs?: number): RatioRow {
  return { scenario, ...measured, ratio: measured.daybook.requestsPerSecond / measured.baseline.requestsPerSecond, target, ...(p99TargetMs ? { p99TargetMs } : {}) };
}

async function pipelineScenarios(fixture: FixtureBooks, daybookUrl: string): Promise<RatioRow[]> {
  const auth = { authorization: `Bearer ${fixture.key}` };
  const url = `${daybookUrl}/api/v1/businesses`;
  const body = await (await fetch(url, { headers: auth })).text();
  const sameWork = startScript<{ url: string }>('bench/baselines/koa-businesses.ts', [fixture.db, fixture.tenantId]);
  return withRunning(sameWork, ({ ready: koa }) =>
    withRunning(startScript<{ url: string }>('bench/baselines/koa-constant.ts', [body]), async ({ ready: bare }) => {
      if ((await (await fetch(koa.url)).text()) !== body) throw new Error('the GET /businesses baseline answers other bytes than Daybook');
      setRateLimit(fixture.db, fixture.tenantId, 'counted');
      const rows: RatioRow[] = [];
      for (const conns of [connections, readConnections]) {
        const at = { connections: conns };
        await warmUp(url, { ...at, headers: auth });
        await warmUp(koa.url, at);
        const counted = await alternate(() => load(url, { ...at, headers: auth }), () => load(koa.url, at));
        const constant = median(await times(repeats, () => load(bare.url, at)));
        rows.push(
          ratioRow(`Pipeline: GET /businesses, ${conns} conns, vs bare Koa + the same SELECT`, counted, 0.8),
          { scenario: '  (vs bare Koa answering the same bytes)', daybook: counted.daybook, baseline: constant, ratio: counted.daybook.requestsPerSecond / constant.requestsPerSecond, target: null },
        );
      }
      setRateLimit(fixture.db, fixture.tenantId, 'off');
      const uncounted = median(await times(repeats, () => load(url, { headers: auth })));
      setRateLimit(fixture.db, fixture.tenantId, 'counted');
      const reference = rows[0]!.baseline!;
      rows.push({ scenario: `  (${connections} conns with the rate limit off)`, daybook: uncounted, baseline: reference, ratio: uncounted.requestsPerSecond / reference.requestsPerSecond, target: null });
      return rows;
    }),
  );
}

/** The bare better-sqlite3 loop (bench/baselines/sqlite-writes.ts), in its own process, for one run's length. */
async function sqliteWriteLoop(fixture: FixtureBooks, expenseId: string, templateKey: string): Promise<Measured> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/baselines/sqlite-writes.ts', fixture.db, expenseId, templateKey, String(seconds), synchronous], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: projectRoot,
  });
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(line));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`the write baseline exited with ${code}`);
  const { commitsPerSecond } = JSON.parse(lines.at(-1)!) as { commitsPerSecond: number };
  // A loop in one process has no request latency to report.
  return { requestsPerSecond: commitsPerSecond, p50: Number.NaN, p99: Number.NaN, failed: 0 };
}

async function writeScenarios(fixture: FixtureBooks, daybookUrl: string): Promise<RatioRow[]> {
  const url = `${daybookUrl}/api/v1/expenses`;
  const body = JSON.stringify({ date: todayUtc(systemClock), amountCents: '4250', vendorId: fixture.vendorId, accountId: fixture.expenseAccountId, memo: 'Printer paper' });
  const headers = { authorization: `Bearer ${fixture.writeKey}`, 'content-type': 'application/json' };
  const templateKey = 'bench-template-expense';
  const template = await fetch(url, { method: 'POST', headers: { ...headers, 'idempotency-key': templateKey }, body });
  if (template.status !== 201) throw new Error(`the template expense was refused: ${template.status} ${await template.text()}`);
  const { expenseId } = (await template.json()) as { expenseId: string };
  // Every request its own Idempotency-Key: autocannon puts a fresh id in place of [<id>].
  const posts: LoadOptions = { method: 'POST', headers: { ...headers, 'idempotency-key': 'bench-[<id>]' }, body, idReplacement: true, connections: writeConnections };
  await warmUp(url, posts);
  const measured = await alternate(
    () => load(url, posts),
    () => sqliteWriteLoop(fixture, expenseId, templateKey),
  );
  const alone = median(await times(repeats, () => load(url, { ...posts, connections: 1 })));
  return [
    ratioRow(`Write: POST /expenses, ${writeConnections} conns (synchronous=${synchronous}) vs bare better-sqlite3 loop`, measured, 1.0, 50),
    { scenario: '  (one connection: a lone writer)', daybook: alone, baseline: null, ratio: null, target: null },
  ];
}

interface LargeBooks {
  lines: number;
  db: string;
  business: string;
  key: string;
  tenantId: string;
  registerRows: number;
}

/** The generator's files: a change to either makes new books. */
const GENERATOR_FILES = ['bench/large-books.ts', 'bench/books-generator.ts'];

/**
 * Large books of `lines` journal lines, made by bench/large-books.ts the first time and kept
 * under bench/results/books/, named by the generator's own hash so a changed generator makes
 * new books. Open invoices and bills scale with the lines (10,000 and 2,000 at a million).
 */
function largeBooks(lines: number): LargeBooks {
  const hasher = createHash('sha256');
  for (const file of GENERATOR_FILES) hasher.update(readFileSync(join(projectRoot, file)));
  const hash = hasher.digest('hex').slice(0, 10);
  const dir = join(RESULTS_DIR, 'books');
  const db = join(dir, `books-${lines}-${hash}.sqlite`);
  const about = `${db}.json`;
  if (!existsSync(about)) {
    mkdirSync(dir, { recursive: true });
    console.log(`making books of ${lines.toLocaleString('en-US')} journal lines at ${db} (kept for later runs)`);
    const args = ['--import', 'tsx', 'bench/large-books.ts', '--db', db, '--force', '--lines', String(lines)];
    args.push('--invoices', String(Math.round(lines / 100)), '--bills', String(Math.round(lines / 500)));
    const made = spawnSync(process.execPath, args, { cwd: projectRoot, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`bench/large-books.ts failed (${made.status})`);
    const field = (name: string) => new RegExp(`^${name} (\\S+)$`, 'm').exec(made.stdout)?.[1] ?? '';
    writeFileSync(about, JSON.stringify({ business: field('business'), key: field('key') }));
  }
  const { business, key } = JSON.parse(readFileSync(about, 'utf8')) as { business: string; key: string };
  const books = openDb(db);
  try {
    const tenantId = (books.prepare('SELECT tenant_id FROM businesses WHERE id = ?').get(business) as { tenant_id: string }).tenant_id;
    const registerRows = Number((books.prepare('SELECT count(*) AS n FROM transactions WHERE business_id = ?').get(business) as { n: bigint }).n);
    return { lines, db, business, key, tenantId, registerRows };
  } finally {
    books.close();
  }
}

/** Median and nearest-rank p99 of `runs` sequential requests over one kept-alive connection. */
async function sequentialLatency(url: string, key: string, runs: number): Promise<{ medianMs: number; p99Ms: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const request = () =>
    new Promise<number>((resolve, reject) => {
      const started = performance.now();
      httpGet(url, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`${url}: ${res.statusCode}`))));
      }).on('error', reject);
    });
  try {
    for (let i = 0; i < Math.ceil(runs / 10); i++) await request();
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) samples.push(await request());
    samples.sort((a, b) => a - b);
    return { medianMs: samples[Math.floor(samples.length / 2)]!, p99Ms: samples[Math.max(0, Math.ceil(0.99 * samples.length) - 1)]! };
  } finally {
    agent.destroy();
  }
}

/** The five reports, with the parameters that cost most on these books, and the reports issue's targets. */
function reportCases(books: LargeBooks): { report: string; path: string; targetMs: number }[] {
  const today = todayUtc(systemClock);
  const lastYear = String(Number(today.slice(0, 4)) - 1);
  const query = (extra: Record<string, string>) => new URLSearchParams({ entityId: books.business, ...extra }).toString();
  return [
    { report: 'Trial balance (today)', path: `/api/v1/reports/trial-balance?${query({ asOf: today })}`, targetMs: 20 },
    { report: 'Balance sheet (today)', path: `/api/v1/reports/balance-sheet?${query({ asOf: today })}`, targetMs: 20 },
    { report: `Profit and loss (${lastYear}-01-02 to a month's second-last day)`, path: `/api/v1/reports/profit-and-loss?${query({ periodStart: `${lastYear}-01-02`, periodEnd: addDays(`${today.slice(0, 7)}-01`, -2) })}`, targetMs: 20 },
    { report: 'AR aging (today)', path: `/api/v1/reports/ar-aging?${query({})}`, targetMs: 10 },
    { report: 'AP aging (today)', path: `/api/v1/reports/ap-aging?${query({})}`, targetMs: 50 },
  ];
}

/** Peak resident memory of a process so far (Linux: VmHWM), in MB. */
function peakRssMb(pid: number): number | null {
  const status = existsSync(`/proc/${pid}/status`) ? readFileSync(`/proc/${pid}/status`, 'utf8') : '';
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  return kb ? Number(kb) / 1024 : null;
}

interface LargeBooksResults {
  ratios: RatioRow[];
  latency: LatencyRow[];
  growth: GrowthRow[];
  peakRssMb: number | null;
}

/** Read path, reports and memory on the largest books; the paged read and the reports at every size. */
async function largeBooksScenarios(): Promise<LargeBooksResults> {
  const results: LargeBooksResults = { ratios: [], latency: [], growth: [], peakRssMb: null };
  const largest = bookSizes.at(-1)!;
  for (const lines of bookSizes) {
    const books = largeBooks(lines);
    setRateLimit(books.db, books.tenantId, 'counted');
    const readUrl = (base: string) => `${base}/api/v1/transactions?entityId=${books.business}&limit=50`;
    const readLoad = (base: string, headers: Record<string, string> = {}) => load(readUrl(base), { connections: readConnections, headers });
    await withRunning(startDaybook(books.db, [], daybookRoot), async (server) => {
      const auth = { authorization: `Bearer ${books.key}` };
      if (lines === largest) {
        const measured = await withRunning(startScript<{ url: string }>('bench/baselines/koa-register.ts', [books.db, books.business]), async ({ ready: bare }) => {
          await warmUp(readUrl(server.url), { connections: readConnections, headers: auth });
          await warmUp(readUrl(bare.url), { connections: readConnections });
          return alternate(() => readLoad(server.url, auth), () => readLoad(bare.url));
        });
        results.ratios.push(ratioRow(`Read: GET /transactions?limit=50, ${lines.toLocaleString('en-US')} lines, ${readConnections} conns, vs bare Koa + SELECT`, measured, 0.8, 25));
        results.growth.push({ lines, registerRows: books.registerRows, read: measured.daybook });
      } else {
        await warmUp(readUrl(server.url), { connections: readConnections, headers: auth });
        results.growth.push({ lines, registerRows: books.registerRows, read: median(await times(repeats, () => readLoad(server.url, auth))) });
      }
      for (const { report, path, targetMs } of reportCases(books)) {
        const timing = await sequentialLatency(`${server.url}${path}`, books.key, reportRuns);
        results.latency.push({ report, lines, ...timing, targetMs: lines === largest ? targetMs : null });
      }
      if (lines === largest) results.peakRssMb = peakRssMb(server.pid);
    });
  }
  return results;
}

const ms = (value: number) => (Number.isNaN(value) ? '-' : String(value)).padStart(3);
const rate = (m: Measured) => `${String(Math.round(m.requestsPerSecond)).padStart(7)}/s p50 ${ms(m.p50)} ms p99 ${ms(m.p99)} ms`;

function printRatios(rows: RatioRow[]): void {
  console.log(`\n${'scenario'.padEnd(84)} ${'Daybook'.padEnd(33)} ${'baseline'.padEnd(33)} ratio  target`);
  for (const row of rows) {
    const ratio = row.ratio === null ? '' : row.ratio.toFixed(2);
    const failed = row.daybook.failed + (row.baseline?.failed ?? 0);
    const met = failed === 0 && row.ratio !== null && row.target !== null && row.ratio >= row.target && (row.p99TargetMs === undefined || row.daybook.p99 < row.p99TargetMs);
    const target = row.target === null ? '' : `${row.target.toFixed(2)}${row.p99TargetMs === undefined ? '' : `, p99 < ${row.p99TargetMs} ms`}`;
    const verdict = row.target === null ? '' : `${target} ${met ? 'met' : 'NOT met'}`;
    console.log(`${row.scenario.padEnd(84)} ${rate(row.daybook)} ${row.baseline ? rate(row.baseline) : ''.padEnd(33)} ${ratio.padStart(5)}  ${verdict}${failed ? `  (${failed} failed requests)` : ''}`);
  }
}

function printLargeBooks(results: LargeBooksResults): void {
  console.log(`\n${'report, one request at a time'.padEnd(60)} ${'lines'.padStart(10)} ${'median ms'.padStart(10)} ${'p99 ms'.padStart(8)}  target`);
  for (const row of results.latency) {
    const verdict = row.targetMs === null ? '' : `${row.targetMs} ms median ${row.medianMs <= row.targetMs ? 'met' : 'NOT met'}`;
    console.log(`${row.report.padEnd(60)} ${row.lines.toLocaleString('en-US').padStart(10)} ${row.medianMs.toFixed(2).padStart(10)} ${row.p99Ms.toFixed(2).padStart(8)}  ${verdict}`);
  }
  console.log(`\n${'growth: GET /transactions?limit=50'.padEnd(36)} ${'register rows'.padStart(14)}  Daybook`);
  for (const row of results.growth) {
    console.log(`${`${row.lines.toLocaleString('en-US')} journal lines`.padEnd(36)} ${row.registerRows.toLocaleString('en-US').padStart(14)}  ${rate(row.read)}${row.read.failed ? `  (${row.read.failed} failed)` : ''}`);
  }
  const rss = results.peakRssMb;
  console.log(`\npeak RSS of the server over ${bookSizes.at(-1)!.toLocaleString('en-US')} lines, after the read load and the reports: ${rss === null ? 'unknown' : `${rss.toFixed(0)} MB`} (target under ${RSS_TARGET_MB} MB${rss === null ? '' : rss < RSS_TARGET_MB ? ', met' : ', NOT met'})`);
}

/** Fresh small books (bench/fixture-books.ts) for the pipeline and the write path. */
async function smallBooksScenarios(): Promise<RatioRow[]> {
  const fixture = makeFixtureBooks(daybookRoot);
  try {
    return await withRunning(startDaybook(fixture.db, [], daybookRoot), async (daybook) => [...(await pipelineScenarios(fixture, daybook.url)), ...(await writeScenarios(fixture, daybook.url))]);
  } finally {
    rmSync(fixture.dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const setting =
    `node ${process.version}, ${cpus().length} cores, ${connections} connections (reads on large books: ${readConnections}), ` +
    `${warmUpSeconds} s warm-up, ${seconds} s per run, median of ${repeats}, synchronous=${synchronous}`;
  buildDaybook(daybookRoot);
  console.log(daybookRoot === projectRoot ? setting : `${setting}, Daybook from ${daybookRoot}`);
  const small = scenarios.has('small') ? await smallBooksScenarios() : [];
  const large = scenarios.has('large') ? await largeBooksScenarios() : { ratios: [], latency: [], growth: [], peakRssMb: null };
  const ratios = [...small, ...large.ratios];
  printRatios(ratios);
  if (scenarios.has('large')) printLargeBooks(large);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ setting, node: process.version, cores: cpus().length, connections, readConnections, seconds, repeats, ratios, latency: large.latency, growth: large.growth, peakRssMb: large.peakRssMb }, null, 2)}\n`);
  console.log(`\nfigures written to ${file}`);
}

await main();
