/**
 * A CPU profile of Daybook under load (rate limits counted, under a budget never reached):
 * the built server runs over fresh small books (bench/fixture-books.ts) with --cpu-prof,
 * autocannon loads it for BENCH_SECONDS (default 10) at BENCH_CONNECTIONS (default 10), and the
 * profile lands in bench/results/profile/ (open it in Chrome's DevTools, Performance tab).
 * Prints where the server's time went, by source file. BENCH_PROFILE picks the request:
 * `read` (GET /api/v1/businesses, the default), `write` (POST /api/v1/expenses, a fresh
 * Idempotency-Key each) or `register` (GET /api/v1/transactions?limit=50 on the large books
 * BENCH_BOOKS names, made by `npm run bench`).
 *
 *   node --import tsx bench/profile-pipeline.ts
 *   BENCH_PROFILE=write BENCH_CONNECTIONS=50 node --import tsx bench/profile-pipeline.ts
 *   BENCH_PROFILE=register BENCH_CONNECTIONS=50 BENCH_BOOKS=bench/results/books/books-1000000-<hash>.sqlite \
 *     node --import tsx bench/profile-pipeline.ts
 */
import autocannon from 'autocannon';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock, todayUtc } from '../src/clock.js';
import { projectRoot } from '../src/paths.js';
import { buildDaybook, type FixtureBooks, makeFixtureBooks, setRateLimit, startDaybook, stopProcess } from './daybook-process.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const profiled = process.env.BENCH_PROFILE ?? 'read';
const dir = join(projectRoot, 'bench/results/profile');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

/** What to load, over which books: fresh small ones, or for `register` the large books BENCH_BOOKS names. */
function profiledRequest(url: string, fixture: FixtureBooks | null): autocannon.Options {
  if (profiled === 'register') {
    const { business, key } = JSON.parse(readFileSync(`${booksFile()}.json`, 'utf8')) as { business: string; key: string };
    return { url: `${url}/api/v1/transactions?entityId=${business}&limit=50`, headers: { authorization: `Bearer ${key}` } };
  }
  if (profiled === 'write') {
    return {
      url: `${url}/api/v1/expenses`,
      method: 'POST',
      headers: { authorization: `Bearer ${fixture!.writeKey}`, 'content-type': 'application/json', 'idempotency-key': 'profile-[<id>]' },
      body: JSON.stringify({ date: todayUtc(systemClock), amountCents: '4250', vendorId: fixture!.vendorId, accountId: fixture!.expenseAccountId, memo: 'Printer paper' }),
      idReplacement: true,
    };
  }
  return { url: `${url}/api/v1/businesses`, headers: { authorization: `Bearer ${fixture!.key}` } };
}

/** The large books of `register` (made by `npm run bench`, under bench/results/books/). */
function booksFile(): string {
  const books = process.env.BENCH_BOOKS;
  if (!books) throw new Error('BENCH_PROFILE=register needs BENCH_BOOKS=bench/results/books/books-<lines>-<hash>.sqlite');
  return books;
}

const fixture = profiled === 'register' ? null : makeFixtureBooks();
if (fixture) setRateLimit(fixture.db, fixture.tenantId, 'counted');
buildDaybook();
const daybook = await startDaybook(fixture?.db ?? booksFile(), ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
const result = await autocannon({ ...profiledRequest(daybook.url, fixture), connections, duration: seconds });
await stopProcess(daybook.child);
if (fixture) rmSync(fixture.dir, { recursive: true, force: true });
console.log(`${Math.round(result.requests.average)} req/s while profiled (${result.non2xx} not 2xx)`);

// The main thread's profile is the largest file.
const file = readdirSync(dir).map((name) => join(dir, name)).sort((a, b) => readFileSync(b).length - readFileSync(a).length)[0]!;
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const byPlace = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const { url, functionName } = nodes.get(id)!.callFrame;
  const place = url ? url.replace(/^.*?\/node_modules\/((@[^/]+\/)?[^/]+).*$/, 'node_modules/$1').replace(/^file:\/\/.*?\/(src|bench)\//, '$1/') : functionName;
  const micros = profile.timeDeltas[i] ?? 0;
  byPlace.set(place, (byPlace.get(place) ?? 0) + micros);
  total += micros;
});
for (const [place, micros] of [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.BENCH_PROFILE_ROWS ?? 15))) {
  console.log(`${((100 * micros) / total).toFixed(1).padStart(5)} %  ${place}`);
}
console.log(`profile: ${file}`);
