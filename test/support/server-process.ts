import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

/**
 * `daybook serve` in a process of its own, over a books file, for the tests that stop it the
 * hard way (SIGKILL) or the polite way (SIGTERM) and then look at what the books hold.
 */
export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Resolves when the process has ended: its exit code, or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it wrote to stderr so far (its log). */
  stderr(): string;
}

/** How long a start may take, migrations included, on a slow machine. */
const START_TIMEOUT_MS = 30_000;

/** The settings every such process gets: no rate fetch or backup on their schedules, nothing logged below warn. */
const QUIET_ENV: NodeJS.ProcessEnv = { DAYBOOK_LOG_LEVEL: 'warn', DAYBOOK_JOB_RATES: 'off', DAYBOOK_JOB_BACKUP: 'off' };

export interface ServerProcessOptions {
  /**
   * Run under `ulimit -S -f`: no file it writes may grow past this many 512-byte blocks. Only
   * the soft limit is set, so it can be lifted again while the server runs (`prlimit`).
   */
  fileSizeLimitBlocks?: number;
}

/** Starts `daybook --json serve` on a free loopback port and resolves once it listens. */
export function startServerProcess(dbPath: string, env: NodeJS.ProcessEnv = {}, options: ServerProcessOptions = {}): Promise<ServerProcess> {
  const command = [process.execPath, '--import', 'tsx', join(projectRoot, 'src/cli/run.ts'), '--db', dbPath, '--json', 'serve', '--port', '0', '--host', '127.0.0.1'];
  const limited = options.fileSizeLimitBlocks === undefined ? command : ['/bin/sh', '-c', `ulimit -S -f ${options.fileSizeLimitBlocks} && exec "$@"`, 'sh', ...command];
  const child = spawn(limited[0]!, limited.slice(1), {
    cwd: projectRoot,
    env: { ...process.env, ...QUIET_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  // 'close', not 'exit': the process has ended and everything it wrote to stdout and stderr is read.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  let out = '';
  return new Promise((resolve, reject) => {
    // A server that never says it listens fails the test instead of hanging it, and is not left running.
    const startup = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not listen within ${START_TIMEOUT_MS / 1000} s; stderr: ${stderr}`));
    }, START_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.endsWith('\n')) return;
      clearTimeout(startup);
      resolve({ url: (JSON.parse(out) as { url: string }).url, child, exited, stderr: () => stderr });
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(startup);
      reject(new Error(`the server ended (${code ?? signal}) before it listened; stderr: ${stderr}`));
    });
  });
}
