/**
 * Request-pipeline benchmark: autocannon against the real server on loopback.
 * Compares the bare Koa path (/healthz), an authenticated read with rate limiting off, and
 * the same read counted by the SQLite rate-limit store, so the cost of each step is visible.
 *
 *   npm run bench                 # 5 s per case
 *   BENCH_SECONDS=10 npm run bench
 */
import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { updateAccount } from '../src/books/accounts.js';
import { CLI_ACTOR } from '../src/books/audit.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { startServer } from '../src/server.js';
import { createAccount } from '../src/books/accounts.js';
import { createBusiness } from '../src/books/businesses.js';
import { createKey } from '../src/books/keys.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);

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

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'daybook-bench-'));
  const config = loadConfig(process.env, { db: join(dir, 'bench.sqlite'), port: 0, host: '127.0.0.1', logLevel: 'silent' });
  const server = await startServer(config, { log: createLogger('silent') });
  try {
    const account = createAccount(server.db, systemClock, CLI_ACTOR, { name: 'Bench Firm', plan: 'large' });
    createBusiness(server.db, systemClock, CLI_ACTOR, { accountId: account.id, name: 'Bench Business' });
    const { key } = createKey(server.db, systemClock, CLI_ACTOR, { accountId: account.id, name: 'bench', access: 'read' });
    console.log(`node ${process.version}, ${seconds}s per case, ${connections} connections, synchronous=${config.sqliteSynchronous}`);
    for (const benchCase of cases) {
      updateAccount(server.db, systemClock, CLI_ACTOR, account.id, {
        rateLimit: benchCase.rateLimit === 'off' ? { mode: 'off' } : { mode: 'custom', readsPerWindow: 1_000_000_000, writesPerWindow: 1_000_000 },
      });
      const result = await autocannon({
        url: `${server.url}${benchCase.path}`,
        connections,
        duration: seconds,
        headers: { authorization: `Bearer ${key}` },
      });
      const bad = result.non2xx + result.errors;
      console.log(
        `${benchCase.name.padEnd(45)} ${String(Math.round(result.requests.average)).padStart(7)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms${bad ? `  (${bad} failed)` : ''}`,
      );
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
