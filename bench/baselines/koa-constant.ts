/**
 * The pipeline baseline: bare Koa 3 answering every request with one constant JSON body (the
 * bytes Daybook's GET /businesses answers for the bench account), no router, no database.
 * Prints {url} as one JSON line and serves until SIGTERM.
 *
 *   node --import tsx bench/baselines/koa-constant.ts '<body>'
 */
import Koa from 'koa';
import type { AddressInfo } from 'node:net';

const body = process.argv[2] ?? '{}';
const app = new Koa();
app.use((ctx) => {
  ctx.type = 'application/json';
  ctx.body = body;
});
const server = app.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
