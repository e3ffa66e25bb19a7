/**
 * The pipeline baseline that does the same work as Daybook's GET /businesses, less the key's
 * look-up: bare Koa 3 reading the account's businesses with the same SELECT
 * (src/books/businesses.ts listBusinesses, one prepared statement) and the account's name, and
 * answering the same JSON. No router, no authentication, no rate count, no input checks.
 * Prints {url} as one JSON line and serves until SIGTERM.
 *
 *   node --import tsx bench/baselines/koa-businesses.ts FILE TENANT_ID
 */
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { listBusinesses } from '../../src/books/businesses.js';
import { findTenant } from '../../src/books/tenants.js';
import { openDb } from '../../src/db/connection.js';

const [dbPath, tenantId] = process.argv.slice(2);
if (!dbPath || !tenantId) throw new Error('usage: koa-businesses.ts FILE TENANT_ID');
const db = openDb(dbPath);
const accountName = findTenant(db, tenantId)?.name;
if (accountName === undefined) throw new Error(`no account ${tenantId} in ${dbPath}`);
const app = new Koa();
app.use((ctx) => {
  const businesses = listBusinesses(db, tenantId).map(({ id, name }) => ({ id, name }));
  ctx.type = 'application/json';
  ctx.body = JSON.stringify({ accountName, businesses });
});
const server = app.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
