/**
 * The server under measurement: the built `daybook serve` (bin/daybook.js, as production runs
 * it, without the TypeScript loader's memory and start-up), in its own process, on a free
 * loopback port over a books file, silent. `buildDaybook` makes dist/ from the current sources
 * first, so what is measured is what is checked in.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot } from '../src/paths.js';

export interface DaybookProcess {
  child: ChildProcess;
  url: string;
  pid: number;
}

export function buildDaybook(): void {
  process.stderr.write('building dist/ from the sources (npm run build)\n');
  const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`npm run build failed (${built.status})`);
}

/** Starts the built server over `booksPath`; `nodeArgs` go to node itself (`--cpu-prof`, say). */
export async function startDaybook(booksPath: string, nodeArgs: string[] = []): Promise<DaybookProcess> {
  const args = [...nodeArgs, join(projectRoot, 'bin/daybook.js'), '--json', '--db', booksPath, 'serve', '--port', '0', '--host', '127.0.0.1'];
  const child = spawn(process.execPath, args, { cwd: projectRoot, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, DAYBOOK_LOG_LEVEL: 'silent' } });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const { url } = JSON.parse(line) as { url: string };
  return { child, url, pid: child.pid! };
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}
