import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FixedClock, fixedClock } from '../../src/clock.js';
import { main } from '../../src/cli/main.js';
import { type Db, openDb } from '../../src/db/connection.js';

/** What one in-process run of `daybook` printed and returned. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  stop?: AbortSignal;
  /** Leave out the harness's --db (to test DAYBOOK_DB and the defaults). */
  withoutDb?: boolean;
}

/** A running `daybook` whose output can be read while it serves. */
export interface LiveRun {
  stdout(): string;
  stderr(): string;
  done: Promise<CliResult>;
}

export const CLOCK_START = '2026-03-15T12:00:00.000Z';

/** A temporary books file, a fixed clock, and `daybook` run in-process against them. */
/**
 * The environment commands run with unless a test gives its own: quiet, and no job that would
 * reach outside the machine (the rate fetch) or write beside the books on a real schedule (backups).
 */
export const CLI_TEST_ENV: NodeJS.ProcessEnv = { DAYBOOK_LOG_LEVEL: 'silent', DAYBOOK_JOB_RATES: 'off', DAYBOOK_JOB_BACKUP: 'off' };

export class CliHarness {
  readonly dir = mkdtempSync(join(tmpdir(), 'daybook-cli-'));
  readonly dbPath = join(this.dir, 'books.sqlite');
  readonly clock: FixedClock = fixedClock(CLOCK_START);

  start(args: string[], options: RunOptions = {}): LiveRun {
    let stdout = '';
    let stderr = '';
    const dbArgs = options.withoutDb ? [] : ['--db', this.dbPath];
    const done = main(['node', 'daybook', ...dbArgs, ...args], {
      stdout: (text) => void (stdout += text),
      stderr: (text) => void (stderr += text),
      env: options.env ?? CLI_TEST_ENV,
      clock: this.clock,
      ...(options.stop ? { stop: options.stop } : {}),
    }).then((code) => ({ code, stdout, stderr }));
    return { stdout: () => stdout, stderr: () => stderr, done };
  }

  run(args: string[], options: RunOptions = {}): Promise<CliResult> {
    return this.start(args, options).done;
  }

  /** Runs with --json, expects success, and returns the one object printed. */
  async json<T = Record<string, unknown>>(args: string[]): Promise<T> {
    const result = await this.run(['--json', ...args]);
    expectOk(result);
    return parseOneObject<T>(result.stdout);
  }

  async createAccount(extra: string[] = []): Promise<string> {
    return (await this.json<{ id: string }>(['account', 'create', '--name', 'Test Firm', ...extra])).id;
  }

  async createBusiness(accountId: string, extra: string[] = []): Promise<string> {
    return (await this.json<{ id: string }>(['business', 'create', '--account', accountId, '--name', 'Test Business', ...extra])).id;
  }

  async createKey(accountId: string, extra: string[] = []): Promise<{ id: string; key: string }> {
    return this.json(['key', 'create', '--account', accountId, '--name', 'test key', '--access', 'read', ...extra]);
  }

  /** Opens the books file to check what the command wrote; the caller closes it. */
  withDb<T>(read: (db: Db) => T): T {
    const db = openDb(this.dbPath);
    try {
      return read(db);
    } finally {
      db.close();
    }
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export function parseOneObject<T>(stdout: string): T {
  expect(stdout.endsWith('\n'), 'stdout ends with a newline').to.equal(true);
  expect(stdout.trimEnd().split('\n'), 'exactly one line on stdout').to.have.length(1);
  const parsed: unknown = JSON.parse(stdout);
  expect(parsed).to.be.an('object').and.not.be.an('array');
  return parsed as T;
}

export function expectOk(result: CliResult): void {
  expect(result.code, `exit code (stderr: ${result.stderr})`).to.equal(0);
}

/** Exit 2, nothing on stdout, one `daybook: ` line on stderr and no stack frames. */
export function expectBadArguments(result: CliResult, messagePattern?: RegExp): void {
  expect(result.code, `exit code (stderr: ${result.stderr})`).to.equal(2);
  expect(result.stdout).to.equal('');
  expectOneErrorLine(result.stderr);
  if (messagePattern) expect(result.stderr).to.match(messagePattern);
}

export function expectOneErrorLine(stderr: string): void {
  expect(stderr).to.match(/^daybook: [^\n]+\n$/);
  expect(stderr).not.to.match(/\bat .+:\d+:\d+/);
}

/** Resolves once `predicate` holds for the live output, polling briefly. */
export async function waitFor(live: LiveRun, predicate: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    const settled = await Promise.race([live.done.then((result) => result), new Promise((resolve) => setTimeout(resolve, 25, null))]);
    if (settled) throw new Error(`daybook ended before ${what}: ${JSON.stringify(settled)}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stderr: ${live.stderr()}`);
  }
}

export const UNKNOWN_ID = '0b8e1f5e-1111-4111-8111-111111111111';
