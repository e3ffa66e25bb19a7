/**
 * Fresh small books for the pipeline and write scenarios of bench/run.ts: one account (large
 * plan), one business, one vendor, a Read only key and a Read and write key, in a new SQLite
 * file migrated by the project's own migrations. Prints {key, writeKey, tenantId, businessId,
 * vendorId, expenseAccountId, db, dir} as one JSON line and exits; the caller serves the file
 * and removes `dir` when done.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_ACTOR } from '../src/store/audit.js';
import { createBusiness } from '../src/books/businesses.js';
import { systemAccountId } from '../src/books/chart.js';
import { createKey } from '../src/books/keys.js';
import { ensureServerSecrets } from '../src/store/secrets.js';
import { createTenant } from '../src/books/tenants.js';
import { findOrCreateVendor } from '../src/books/vendors.js';
import { systemClock } from '../src/clock.js';
import { inTransaction, openDb } from '../src/db/connection.js';
import { migrateLatest } from '../src/db/migrate.js';

const dir = mkdtempSync(join(tmpdir(), 'daybook-bench-'));
const dbPath = join(dir, 'bench.sqlite');
await migrateLatest(dbPath);
const db = openDb(dbPath);
ensureServerSecrets(db, systemClock);
const tenant = createTenant(db, systemClock, CLI_ACTOR, { name: 'Bench Firm', plan: 'large' });
const business = createBusiness(db, systemClock, CLI_ACTOR, { tenantId: tenant.id, name: 'Bench Business' });
const { key } = createKey(db, systemClock, CLI_ACTOR, { tenantId: tenant.id, name: 'bench', access: 'read' });
const { key: writeKey } = createKey(db, systemClock, CLI_ACTOR, { tenantId: tenant.id, name: 'bench writes', access: 'read_write' });
const { vendor } = inTransaction(db, () => findOrCreateVendor(db, systemClock, CLI_ACTOR, tenant.id, 'Bench Supplies Co.'));
const expenseAccountId = systemAccountId(db, business.id, 'uncategorized_expense');
db.close();
console.log(
  JSON.stringify({ key, writeKey, tenantId: tenant.id, businessId: business.id, vendorId: vendor.id, expenseAccountId, db: dbPath, dir }),
);
