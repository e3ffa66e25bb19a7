/**
 * The processes of the benchmarks. The server under measurement is the built `daybook serve`
 * (bin/daybook.js, as production runs it, without the TypeScript loader's memory and
 * start-up), on a free loopback port over a books file, logging at the level a firm runs
 * (`info`, an access line per request; BENCH_LOG_LEVEL changes it) into
 * bench/results/daybook-server.log, as a container's log driver would keep it;
 * `buildDaybook` makes dist/ from the current sources first (skipped with BENCH_NO_BUILD=1),
 * so what is measured is what is checked in. Baselines and helpers run from their sources.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { CLI_ACTOR } from '../src/store/audit.js';
import { updateTenant } from '../src/books/tenants.js';
import { systemClock } from '../src/clock.js';
import { openDb } from '../src/db/connection.js';
import { projectRoot } from '../src/paths.js';

/** Where the server under measurement logs (overwritten at each start). */
export const SERVER_LOG = join(projectRoot, 'bench/results/daybook-server.log');

/** How long a process may take to say it is ready, or to stop once asked. */
const PROCESS_DEADLINE_MS = 60_000;

export interface DaybookProcess {
  child: ChildProcess;
  url: string;
  pid: number;
}

/** Small fresh books made by bench/fixture-books.ts; `dir` is the caller's to remove. */
export interface FixtureBooks {
  key: string;
  writeKey: string;
  tenantId: string;
  businessId: string;
  vendorId: string;
  expenseAccountId: string;
  db: string;
  dir: string;
}

/** `root`: the checkout to build (this one unless given; another for a before/after comparison). */
export function buildDaybook(root: string = projectRoot): void {
  if (process.env.BENCH_NO_BUILD === '1') return;
  process.stderr.write(`building dist/ from the sources (npm run build)${root === projectRoot ? '' : ` in ${root}`}\n`);
  const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`npm run build failed (${built.status})`);
}

/** The first line `child` prints on stdout, or an error if it exits or stays silent first. */
async function firstLine(child: ChildProcess, what: string): Promise<string> {
  const lines = createInterface({ input: child.stdout! });
  const deadline = AbortSignal.timeout(PROCESS_DEADLINE_MS);
  try {
    const [line] = (await Promise.race([
      once(lines, 'line', { signal: deadline }),
      once(child, 'exit', { signal: deadline }).then(([code]) => {
        throw new Error(`${what} exited (${String(code)}) before it was ready`);
      }),
    ])) as [string];
    return line;
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    lines.close();
  }
}

/** Starts `script` (TypeScript, from the sources) in its own process and reads the JSON line it prints once ready. */
export async function startScript<T>(script: string, args: string[] = []): Promise<{ child: ChildProcess; ready: T }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'], cwd: projectRoot });
  return { child, ready: JSON.parse(await firstLine(child, script)) as T };
}

/**
 * Starts the built server over `booksPath`; `nodeArgs` go to node itself (`--cpu-prof`, say);
 * `root` is the checkout whose bin/daybook.js runs (this one unless given).
 */
export async function startDaybook(booksPath: string, nodeArgs: string[] = [], root: string = projectRoot): Promise<DaybookProcess> {
  const args = [...serverNodeFlags(root), ...nodeArgs, join(root, 'bin/daybook.js'), '--json', '--db', booksPath, 'serve', '--port', '0', '--host', '127.0.0.1'];
  mkdirSync(dirname(SERVER_LOG), { recursive: true });
  const log = openSync(SERVER_LOG, 'w');
  try {
    const env = { ...process.env, DAYBOOK_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' };
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', log], env });
    const { url } = JSON.parse(await firstLine(child, `daybook serve (its log: ${SERVER_LOG})`)) as { url: string };
    return { child, url, pid: child.pid! };
  } finally {
    closeSync(log);
  }
}

/**
 * The flags `npm start` gives node in `root` (package.json's start script, `node <flags>
 * bin/daybook.js serve`; the image's command has the same, test/unit/container.test.ts), so
 * the server is measured as a firm runs it.
 */
export function serverNodeFlags(root: string = projectRoot): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const words = (scripts.start ?? '').split(/\s+/);
  return words.slice(1, words.indexOf('bin/daybook.js')).filter((word) => word.startsWith('--'));
}

/** SIGTERM, then SIGKILL if the process has not stopped by the deadline. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), PROCESS_DEADLINE_MS);
  await exited;
  clearTimeout(timer);
}

/** `root`: the checkout whose bench/fixture-books.ts (and so whose migrations) makes the books; this one unless given. */
export function makeFixtureBooks(root: string = projectRoot): FixtureBooks {
  const made = spawnSync(process.execPath, ['--import', 'tsx', 'bench/fixture-books.ts'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`bench/fixture-books.ts failed (${made.status})`);
  return JSON.parse(made.stdout) as FixtureBooks;
}

/** Sets the account's budgets: counted (a budget no run reaches, so every request is counted) or off. */
export function setRateLimit(dbPath: string, tenantId: string, mode: 'off' | 'counted'): void {
  const db = openDb(dbPath);
  try {
    updateTenant(db, systemClock, CLI_ACTOR, tenantId, {
      rateLimit: mode === 'off' ? { mode: 'off' } : { mode: 'custom', readsPerWindow: 1_000_000_000, writesPerWindow: 1_000_000_000 },
    });
  } finally {
    db.close();
  }
}
