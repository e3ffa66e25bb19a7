/**
 * `npm run bench`: Daybook against baselines measured in the same run on the same machine,
 * reported as ratios (absolute figures drift on shared machines; ratios much less). Every
 * server runs in its own process; autocannon, the load generator, runs in this one. Each
 * measurement is repeated (Daybook and its baseline alternating) and the median kept. The
 * table goes to stdout and the same figures, as JSON, to bench/results/ (ignored by git).
 *
 *   npm run bench
 *   BENCH_SECONDS=10 BENCH_REPEATS=5 BENCH_CONNECTIONS=10 npm run bench
 */
import autocannon from 'autocannon';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { updateTenant } from '../src/books/tenants.js';
import { CLI_ACTOR } from '../src/books/audit.js';
import { systemClock } from '../src/clock.js';
import { openDb } from '../src/db/connection.js';
import { projectRoot } from '../src/paths.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const repeats = Number(process.env.BENCH_REPEATS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);

interface Fixture {
  url: string;
  key: string;
  tenantId: string;
  db: string;
  synchronous: string;
}

interface Measured {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  failed: number;
}

interface Row {
  scenario: string;
  daybook: Measured;
  baseline: Measured | null;
  ratio: number | null;
  target: number | null;
}

/** Starts `script` in its own process and reads the JSON line it prints once ready. */
async function startProcess<T>(script: string, args: string[] = []): Promise<{ child: ChildProcess; ready: T }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'], cwd: projectRoot });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { child, ready: JSON.parse(line) as T };
}

async function stopProcess(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await once(child, 'exit');
}

async function load(url: string, headers: Record<string, string> = {}): Promise<Measured> {
  const result = await autocannon({ url, connections, duration: seconds, headers });
  return { requestsPerSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, failed: result.non2xx + result.errors };
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

async function pipelineScenarios(): Promise<Row[]> {
  const { child, ready: fixture } = await startProcess<Fixture>('bench/fixture-server.ts');
  const db = openDb(fixture.db);
  const auth = { authorization: `Bearer ${fixture.key}` };
  try {
    const body = await (await fetch(`${fixture.url}/api/v1/businesses`, { headers: auth })).text();
    const { child: koa, ready: bare } = await startProcess<{ url: string }>('bench/baselines/koa-constant.ts', [body]);
    try {
      const setLimits = (mode: 'off' | 'counted') =>
        updateTenant(db, systemClock, CLI_ACTOR, fixture.tenantId, {
          // Counted: a budget no run reaches, so the limiter counts every request but never refuses.
          rateLimit: mode === 'off' ? { mode: 'off' } : { mode: 'custom', readsPerWindow: 1_000_000_000, writesPerWindow: 1_000_000 },
        });
      setLimits('counted');
      const counted = await alternate(() => load(`${fixture.url}/api/v1/businesses`, auth), () => load(bare.url));
      setLimits('off');
      const uncounted = median(await times(repeats, () => load(`${fixture.url}/api/v1/businesses`, auth)));
      return [
        { scenario: 'Pipeline: GET /businesses vs bare Koa 3', ...counted, ratio: counted.daybook.requestsPerSecond / counted.baseline.requestsPerSecond, target: 0.5 },
        { scenario: '  (the same with the rate limit off)', daybook: uncounted, baseline: counted.baseline, ratio: uncounted.requestsPerSecond / counted.baseline.requestsPerSecond, target: null },
      ];
    } finally {
      await stopProcess(koa);
    }
  } finally {
    db.close();
    await stopProcess(child);
  }
}

function printTable(rows: Row[]): void {
  const figures = (m: Measured | null) => (m ? `${String(Math.round(m.requestsPerSecond)).padStart(7)} req/s p50 ${String(m.p50).padStart(3)} ms p99 ${String(m.p99).padStart(3)} ms` : ''.padEnd(37));
  console.log(`${'scenario'.padEnd(44)} ${'Daybook'.padEnd(37)} ${'baseline'.padEnd(37)} ratio  target`);
  for (const row of rows) {
    const ratio = row.ratio === null ? '' : row.ratio.toFixed(2);
    const verdict = row.target === null ? '' : `${row.target.toFixed(2)} ${row.ratio !== null && row.ratio >= row.target ? 'met' : 'NOT met'}`;
    const failed = row.daybook.failed + (row.baseline?.failed ?? 0);
    console.log(`${row.scenario.padEnd(44)} ${figures(row.daybook)} ${figures(row.baseline)} ${ratio.padStart(5)}  ${verdict}${failed ? `  (${failed} failed requests)` : ''}`);
  }
}

async function main(): Promise<void> {
  const setting = `node ${process.version}, ${cpus().length} cores, ${connections} connections, ${seconds} s per run, median of ${repeats}`;
  console.log(setting);
  const rows = [...(await pipelineScenarios())];
  printTable(rows);
  const dir = join(projectRoot, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ setting, node: process.version, cores: cpus().length, connections, seconds, repeats, rows }, null, 2)}\n`);
  console.log(`figures written to ${file}`);
}

await main();
