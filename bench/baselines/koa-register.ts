/**
 * The read-path baseline: bare Koa 3 answering every request with the first 50 rows of a
 * business's register, read with one prepared statement (the register's own SELECT, from
 * src/books/transactions.ts) and written as JSON. No router, no authentication, no paging
 * cursor, no money formatting. Prints {url} as one JSON line and serves until SIGTERM.
 *
 *   node --import tsx bench/baselines/koa-register.ts FILE BUSINESS_ID
 */
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { registerQuery } from '../../src/books/transactions.js';
import { openDb } from '../../src/db/connection.js';

const [dbPath, businessId] = process.argv.slice(2);
if (!dbPath || !businessId) throw new Error('usage: koa-register.ts FILE BUSINESS_ID');
const db = openDb(dbPath, { bigints: false });
const query = registerQuery(businessId, {}, null, 50);
const page = db.prepare(query.sql);
const app = new Koa();
app.use((ctx) => {
  ctx.type = 'application/json';
  ctx.body = JSON.stringify({ data: page.all(...query.params) });
});
const server = app.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
