/**
 * A CPU profile of Daybook serving GET /api/v1/businesses under load (rate limits counted,
 * under a budget never reached): the built server runs over fresh small books
 * (bench/fixture-books.ts) with --cpu-prof, autocannon loads it
 * for BENCH_SECONDS (default 10), and the profile lands in bench/results/profile/ (open it in
 * Chrome's DevTools, Performance tab). Prints where the server's time went, by source file.
 *
 *   node --import tsx bench/profile-pipeline.ts
 */
import autocannon from 'autocannon';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../src/paths.js';
import { buildDaybook, makeFixtureBooks, setRateLimit, startDaybook, stopProcess } from './daybook-process.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const dir = join(projectRoot, 'bench/results/profile');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

const fixture = makeFixtureBooks();
setRateLimit(fixture.db, fixture.tenantId, 'counted');
buildDaybook();
const daybook = await startDaybook(fixture.db, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
const result = await autocannon({ url: `${daybook.url}/api/v1/businesses`, connections: 10, duration: seconds, headers: { authorization: `Bearer ${fixture.key}` } });
await stopProcess(daybook.child);
rmSync(fixture.dir, { recursive: true, force: true });
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
for (const [place, micros] of [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
  console.log(`${((100 * micros) / total).toFixed(1).padStart(5)} %  ${place}`);
}
console.log(`profile: ${file}`);
