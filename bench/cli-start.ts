/**
 * How fast a `daybook` command starts: each command is run as a whole process
 * (`node bin/daybook.js ...`, as built: `npm run build` first), one after another, and the
 * median wall time of the runs is printed, with the median of `node -e 0` as the floor every
 * Node.js process pays. The books are made once, migrated and current, in a temporary folder.
 *
 * `daybook serve` is timed from the spawn to its first answered request (`GET /healthz`, 200),
 * then stopped with SIGTERM.
 *
 * `BENCH_RUNS` (15) changes how many runs each command gets, after one run not counted;
 * `BENCH_DAYBOOK_ROOT` times another checkout's build.
 * Figures: docs/performance.md ("How fast a command starts").
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { projectRoot } from '../src/paths.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
/** The checkout whose `daybook` is timed: this one, or BENCH_DAYBOOK_ROOT (built) for a before and after. */
const BIN = join(process.env.BENCH_DAYBOOK_ROOT ?? projectRoot, 'bin/daybook.js');

/** Runs `args` once as its own process and returns its wall time in milliseconds. */
function timedRun(args: string[], env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const run = spawnSync(process.execPath, args, { cwd: projectRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = performance.now() - started;
  if (run.status !== 0) throw new Error(`${args.join(' ')} exited ${run.status}: ${run.stderr.toString()}`);
  return ms;
}

/** `daybook serve` on the books, from the spawn to its first answered GET /healthz; stopped afterwards. */
async function timedServe(env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, '--json', 'serve', '--port', '0', '--host', '127.0.0.1'], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    const { url } = JSON.parse(line) as { url: string };
    const answer = await fetch(`${url}/healthz`);
    if (answer.status !== 200) throw new Error(`GET /healthz answered ${answer.status}`);
    return performance.now() - started;
  } finally {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function report(name: string, times: number[]): void {
  console.log(`${name.padEnd(30)} ${median(times).toFixed(0).padStart(5)} ms   (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)})`);
}

const dir = mkdtempSync(join(tmpdir(), 'daybook-cli-start-'));
try {
  const books = join(dir, 'books.sqlite');
  const env = { ...process.env, DAYBOOK_DB: books, DAYBOOK_LOG_LEVEL: 'silent' };
  const daybook = (...args: string[]) => execFileSync(process.execPath, [BIN, '--json', ...args], { cwd: projectRoot, env, encoding: 'utf8' });
  daybook('migrate');
  const { id: account } = JSON.parse(daybook('account', 'create', '--name', 'Bench Firm')) as { id: string };

  const commands: [string, string[]][] = [
    ['node -e 0 (the floor)', ['-e', '0']],
    ['daybook --help', [BIN, '--help']],
    ['daybook rate set', [BIN, 'rate', 'set', '--currency', 'EUR', '--date', '2026-11-20', '--usd-per-unit', '1.08']],
    ['daybook key list', [BIN, 'key', 'list', '--account', account]],
    ['daybook jobs list', [BIN, 'jobs', 'list']],
  ];
  console.log(`Whole-process wall time, median of ${RUNS} runs each (books current, ${process.platform}, Node.js ${process.versions.node})`);
  for (const [name, args] of commands) {
    timedRun(args, env);
    const times = Array.from({ length: RUNS }, () => timedRun(args, env));
    report(name, times);
  }
  await timedServe(env);
  const serves: number[] = [];
  for (let i = 0; i < RUNS; i++) serves.push(await timedServe(env));
  report('daybook serve (to 1st answer)', serves);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
