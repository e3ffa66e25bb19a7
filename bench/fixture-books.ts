/**
 * Starts Daybook over a fresh SQLite file with one account, business and Read only key, and
 * prints {url, key, tenantId, db} as one JSON line; serves until SIGTERM. bench/run.ts runs it
 * in its own process so the load generator does not share its event loop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTenant } from '../src/books/tenants.js';
import { CLI_ACTOR } from '../src/books/audit.js';
import { createBusiness } from '../src/books/businesses.js';
import { createKey } from '../src/books/keys.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { startServer } from '../src/server.js';

const dir = mkdtempSync(join(tmpdir(), 'daybook-bench-'));
const db = join(dir, 'bench.sqlite');
const config = loadConfig(process.env, { db, port: 0, host: '127.0.0.1', logLevel: 'silent' });
const server = await startServer(config, { log: createLogger('silent') });
const tenant = createTenant(server.db, systemClock, CLI_ACTOR, { name: 'Bench Firm', plan: 'large' });
createBusiness(server.db, systemClock, CLI_ACTOR, { tenantId: tenant.id, name: 'Bench Business' });
const { key } = createKey(server.db, systemClock, CLI_ACTOR, { tenantId: tenant.id, name: 'bench', access: 'read' });
console.log(JSON.stringify({ url: server.url, key, tenantId: tenant.id, db, synchronous: config.sqliteSynchronous }));

process.once('SIGTERM', () => {
  void server.close().then(() => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
});
