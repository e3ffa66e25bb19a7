/**
 * Request-pipeline benchmark: autocannon against the real server, which runs in its own
 * process (bench/fixture-server.ts) on loopback over a fresh SQLite file. It compares the bare
 * Koa path (/healthz), an authenticated read with rate limiting off, and the same read counted
 * by the SQLite rate-limit store, so the cost of each step is visible.
 *
 *   npm run bench                 # 5 s per case, 10 connections
 *   BENCH_SECONDS=10 BENCH_CONNECTIONS=20 npm run bench
 */
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { updateTenant } from '../src/books/tenants.js';
import { CLI_ACTOR } from '../src/books/audit.js';
import { systemClock } from '../src/clock.js';
import { openDb } from '../src/db/connection.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);

interface Fixture {
  url: string;
  key: string;
  tenantId: string;
  db: string;
  synchronous: string;
}

interface Case {
  name: string;
  path: string;
  rateLimit: 'off' | 'counted';
}

const cases: Case[] = [
  { name: 'GET /healthz (no key, no database)', path: '/healthz', rateLimit: 'off' },
  { name: 'GET /api/v1/businesses, rate limit off', path: '/api/v1/businesses', rateLimit: 'off' },
  { name: 'GET /api/v1/businesses, counted', path: '/api/v1/businesses', rateLimit: 'counted' },
  { name: 'GET /api/v1/accounts, counted', path: '/api/v1/accounts', rateLimit: 'counted' },
];

async function startFixture() {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/fixture-server.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  return { child, fixture: JSON.parse(line) as Fixture };
}

async function main(): Promise<void> {
  const { child, fixture } = await startFixture();
  const db = openDb(fixture.db);
  try {
    console.log(`node ${process.version}, ${seconds}s per case, ${connections} connections, synchronous=${fixture.synchronous}`);
    for (const benchCase of cases) {
      updateTenant(db, systemClock, CLI_ACTOR, fixture.tenantId, {
        rateLimit: benchCase.rateLimit === 'off' ? { mode: 'off' } : { mode: 'custom', readsPerWindow: 1_000_000_000, writesPerWindow: 1_000_000 },
      });
      const result = await autocannon({
        url: `${fixture.url}${benchCase.path}`,
        connections,
        duration: seconds,
        headers: { authorization: `Bearer ${fixture.key}` },
      });
      const failed = result.non2xx + result.errors;
      console.log(
        `${benchCase.name.padEnd(45)} ${String(Math.round(result.requests.average)).padStart(7)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms${failed ? `  (${failed} failed)` : ''}`,
      );
    }
  } finally {
    db.close();
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

await main();
