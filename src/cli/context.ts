import type { Command } from 'commander';
import { INSTALLATION_REACH } from '../door/reach.js';
import { type Command as WriteCommand, writeNow } from '../door/door.js';
import { existsSync, writeSync } from 'node:fs';
import { CommandFailed, fileErrorReason, OutputClosed, UsageError } from './errors.js';
import { type Actor, cliActor } from '../store/audit.js';
import { recordMigration } from '../door/commands/installation.js';
import { type Clock, systemClock } from '../clock.js';
import { loadDefaults } from '../config.js';
import { type Db, guardBookWrites, openDb } from '../db/connection.js';
import { ensureWritableBooksFolder } from '../db/books-folder.js';
import type { MigrateResult } from '../db/migrate.js';
import { createOutput, type Output } from './output.js';

/** Everything the CLI touches outside itself, so tests can run it in-process. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  /** Ends `serve` / `demo` like SIGTERM does (tests use it; signals still work). */
  stop?: AbortSignal;
  /** Starts reading stdin: `closed` resolves when it ends (`serve --ephemeral` stops then); `dispose` stops reading. */
  watchStdin: () => { closed: Promise<void>; dispose(): void };
  /** `stderr` is the process's own (not a test's capture): the server may then write its logs to it asynchronously. */
  stderrIsTheProcess?: boolean;
}

const AWAIT_READER = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes to stdout synchronously, so a failure is known at the write that met it rather than
 * after the command has finished: a reader that stops early (`daybook export ledger | head`)
 * ends the command quietly at once, as it does any Unix tool, and a full disk stops it with
 * the reason before it claims to have written anything.
 */
function writeStdout(text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let written = 0;
  while (written < bytes.length) {
    try {
      written += writeSync(1, bytes, written);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A pipe left non-blocking by another process: wait for the reader, then go on.
      if (code === 'EAGAIN') Atomics.wait(AWAIT_READER, 0, 0, 5);
      else if (code === 'EPIPE') throw new OutputClosed('the reader of standard output has gone');
      else throw new CommandFailed(`cannot write to standard output: ${fileErrorReason(error)}`);
    }
  }
}

export function defaultIo(overrides: Partial<CliIo> = {}): CliIo {
  return {
    stdout: writeStdout,
    stderr: (text) => void process.stderr.write(text),
    env: process.env,
    clock: systemClock,
    watchStdin: () => ({
      closed: new Promise<void>((resolve) => {
        process.stdin.once('end', resolve).once('close', resolve).resume();
      }),
      // An open stdin would keep the process alive after a signal stopped the server.
      dispose: () => process.stdin.destroy(),
    }),
    stderrIsTheProcess: overrides.stderr === undefined,
    ...overrides,
  };
}

/** Options every command accepts (declared on the program). */
export interface GlobalOptions {
  db?: string;
  json?: boolean;
}

/** What a command's handler gets besides its own options. */
export interface CommandContext {
  io: CliIo;
  out: Output;
  globals: GlobalOptions;
  /** The command's positional arguments, as commander checked them (`jobs run NAME`). */
  args: readonly string[];
  /** Who the audit trail names for this command's writes: the OS user and the command. */
  actor: Actor;
}

/** Runs `command` through the write door as this command's writer: the OS user, reaching every record. */
export function writeAsCli<I, R>(db: Db, context: CommandContext, command: WriteCommand<I, R, undefined>, input: I): R {
  return writeNow({ db, clock: context.io.clock }, { actor: context.actor, reach: INSTALLATION_REACH }, command, input);
}

/** `daybook key create`: the command's name and its parents'. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/** The books file: --db, else DAYBOOK_DB, else config/default.json's `db`. */
export function resolveDbPath(globals: GlobalOptions, env: NodeJS.ProcessEnv): string {
  if (globals.db) return globals.db;
  if (env.DAYBOOK_DB) return env.DAYBOOK_DB;
  return String(loadDefaults().db ?? './data/daybook.sqlite');
}

/** Wraps a handler as a commander action: commander passes (options, command) last. */
export function action<O>(io: CliIo, handler: (options: O, context: CommandContext) => unknown) {
  return async (...args: unknown[]): Promise<void> => {
    const command = args[args.length - 1] as Command;
    const globals = command.optsWithGlobals<GlobalOptions>();
    await handler(command.opts() as O, {
      io,
      out: createOutput(io, globals.json === true),
      globals,
      args: command.processedArgs as string[],
      actor: cliActor(commandPath(command)),
    });
  };
}

/**
 * The handlers of a command's action module, each imported when its command runs: declaring
 * the commands (names, options, help) loads none of them, so a command loads only what it runs.
 */
export function handlersIn<M>(load: () => Promise<M>) {
  return <K extends keyof M>(name: K): M[K] =>
    (async (...args: unknown[]) => ((await load())[name] as (...args: unknown[]) => unknown)(...args)) as M[K];
}

/**
 * Brings the books file up to the latest schema, creating it when missing. Its folder is
 * checked and the file opened first, so a bad path fails with one clean line (knex would log
 * its own stack trace). Migrations applied are recorded in the installation's audit trail
 * under `actor`.
 */
export async function migrateBooks(path: string, actor: Actor, clock: Clock): Promise<MigrateResult> {
  ensureWritableBooksFolder(path);
  openDb(path).close();
  // Loaded when a command opens books, not when the commands are declared (--help).
  const { migrateLatest } = await import('../db/migrate.js');
  const result = await migrateLatest(path);
  if (result.applied.length > 0) {
    const db = openDb(path);
    try {
      writeNow({ db, clock }, { actor, reach: INSTALLATION_REACH }, recordMigration, { applied: result.applied });
    } finally {
      db.close();
    }
  }
  return result;
}

/**
 * Migrates the books file at `path` (so a fresh file just works), opens it, runs `work`, closes
 * it; work that awaits keeps the books open until it has settled.
 */
export async function withBooksAt<T>(path: string, actor: Actor, clock: Clock, work: (db: Db) => T): Promise<Awaited<T>> {
  await migrateBooks(path, actor, clock);
  const db = openDb(path);
  guardBookWrites(db);
  try {
    return await work(db);
  } finally {
    db.close();
  }
}

/**
 * withBooksAt the file chosen by --db / DAYBOOK_DB / config. Commands that only refer to
 * records made earlier (`existing`) refuse a file that is not there, rather than leave a new
 * empty one behind a typo in --db.
 */
export function withBooks<T>(context: CommandContext, work: (db: Db) => T, books: 'create' | 'existing' = 'existing'): Promise<Awaited<T>> {
  const path = resolveDbPath(context.globals, context.io.env);
  if (books === 'existing' && path !== ':memory:' && !existsSync(path)) {
    throw new UsageError(`no books at ${path}: check --db (or DAYBOOK_DB), or create an account first`);
  }
  return withBooksAt(path, context.actor, context.io.clock, work);
}
