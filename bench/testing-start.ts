/**
 * How fast `daybook/testing` gives a test suite a server, and whether SQLite in memory would
 * beat the temporary books file it uses.
 *
 * 1. startDaybook: call to first answered request (the first start, which makes the migrated
 *    template, then later ones), two at once, the demo fixture, and 200 writes over HTTP.
 * 2. The storage underneath, without the server: a copy of the migrated template opened as a
 *    file (WAL, synchronous=normal, as startDaybook serves it) against the same template loaded
 *    into memory, then the same customer writes, one transaction each, on both.
 *
 * `BENCH_STARTS` (20) and `BENCH_WRITES` (2000) change the run. Figures: docs/decisions.md.
 */
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLI_ACTOR } from '../src/store/audit.js';
import { findOrCreateCustomer } from '../src/books/customers.js';
import { createTenant } from '../src/books/tenants.js';
import { fixedClock } from '../src/clock.js';
import { applyPragmas, type Db, inTransaction, openDb } from '../src/db/connection.js';
import { migrateLatest } from '../src/db/migrate.js';
import { startDaybook, type RunningDaybook } from '../src/testing/index.js';

const STARTS = Number(process.env.BENCH_STARTS ?? 20);
const WRITES = Number(process.env.BENCH_WRITES ?? 2000);
const HTTP_WRITES = 200;

async function firstAnswer(daybook: RunningDaybook): Promise<void> {
  const res = await fetch(`${daybook.url}/api/v1/businesses`, { headers: { authorization: `Bearer ${daybook.keys[0]!.key}` } });
  if (res.status !== 200) throw new Error(`GET /businesses answered ${res.status}`);
  await res.arrayBuffer();
}

/** Milliseconds from the call to startDaybook to its first answered request. */
async function timedStart(options: Parameters<typeof startDaybook>[0] = {}): Promise<{ ms: number; daybook: RunningDaybook }> {
  const started = performance.now();
  const daybook = await startDaybook({ at: '2026-03-01', ...options });
  await firstAnswer(daybook);
  return { ms: performance.now() - started, daybook };
}

async function httpWrites(daybook: RunningDaybook): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < HTTP_WRITES; i++) {
    const res = await fetch(`${daybook.url}/api/v1/customers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${daybook.keys[0]!.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Customer ${i}` }),
    });
    if (res.status !== 201) throw new Error(`POST /customers answered ${res.status}`);
    await res.arrayBuffer();
  }
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}

async function measureStarts(): Promise<void> {
  const first = await timedStart();
  await first.daybook.close();
  const later: number[] = [];
  const writes: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const { ms: took, daybook } = await timedStart();
    later.push(took);
    if (i < 5) writes.push(await httpWrites(daybook));
    await daybook.close();
  }
  const pairStarted = performance.now();
  const pair = await Promise.all([timedStart(), timedStart()]);
  const pairMs = performance.now() - pairStarted;
  await Promise.all(pair.map(({ daybook }) => daybook.close()));
  const demo = await timedStart({ fixture: 'demo' });
  await demo.daybook.close();
  console.log('startDaybook, call to first answered request');
  const rows: Array<[string, string]> = [
    ['first start in the process (makes the template)', ms(first.ms)],
    [`later starts, median of ${STARTS}`, `${ms(median(later))} (slowest ${ms(Math.max(...later))})`],
    ['two at once, both answered', ms(pairMs)],
    ['demo fixture', ms(demo.ms)],
    [`${HTTP_WRITES} POST /customers one at a time, median of 5`, ms(median(writes))],
  ];
  for (const [what, figure] of rows) console.log(`  ${what.padEnd(52)} ${figure}`);
}

/** The migrated template as SQLite's serialised form, marked as a rollback-journal file so it loads into memory. */
function inMemoryFrom(template: string): Db {
  const image = readFileSync(template);
  // Bytes 18 and 19 of the header say WAL (2) or rollback journal (1); a WAL image cannot be deserialised.
  image[18] = 1;
  image[19] = 1;
  const db = new Database(image);
  applyPragmas(db, 'normal');
  db.defaultSafeIntegers(true);
  return db;
}

function customerWrites(db: Db): number {
  const clock = fixedClock('2026-03-01T00:00:00.000Z');
  const tenant = createTenant(db, clock, CLI_ACTOR, { name: 'Bench', plan: 'large' });
  const started = performance.now();
  for (let i = 0; i < WRITES; i++) inTransaction(db, () => findOrCreateCustomer(db, clock, CLI_ACTOR, tenant.id, { name: `Customer ${i}` }));
  return performance.now() - started;
}

async function measureStorage(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'daybook-bench-testing-'));
  try {
    const template = join(dir, 'template.sqlite');
    await migrateLatest(template);
    const results = { file: { open: [] as number[], writes: [] as number[] }, memory: { open: [] as number[], writes: [] as number[] } };
    for (let round = 0; round < 5; round++) {
      let started = performance.now();
      const copy = join(dir, `books-${round}.sqlite`);
      copyFileSync(template, copy);
      const file = openDb(copy, { synchronous: 'normal' });
      results.file.open.push(performance.now() - started);
      results.file.writes.push(customerWrites(file));
      file.close();
      started = performance.now();
      const memory = inMemoryFrom(template);
      results.memory.open.push(performance.now() - started);
      results.memory.writes.push(customerWrites(memory));
      memory.close();
    }
    console.log(`\nstorage under the server, median of 5 (${WRITES} customer writes, one transaction each)`);
    console.log(`  temporary file: copy + open ${ms(median(results.file.open))}, writes ${ms(median(results.file.writes))}`);
    console.log(`  in memory:      load + open ${ms(median(results.memory.open))}, writes ${ms(median(results.memory.writes))}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await measureStarts();
await measureStorage();
