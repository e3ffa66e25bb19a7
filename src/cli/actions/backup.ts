import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { backupBooks, type BackupResult } from '../../db/backup.js';
import type { BackupCheck } from '../../db/backup-check.js';
import { BackupRefused } from '../../db/backup-refusal.js';
import { recordRestore } from '../../door/commands/installation.js';
import { openDb } from '../../db/connection.js';
import { lockBooksForRestore, restoreBooks } from '../../db/restore.js';
import { type CommandContext, migrateBooks, resolveDbPath, writeAsCli } from '../context.js';
import { CheckFailed, UsageError } from '../errors.js';

interface BackupOptions {
  to: string;
  force?: boolean;
}

interface RestoreOptions {
  from: string;
  yes?: boolean;
}

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

function describeContents(check: BackupCheck): string {
  const last = check.lastEntryDate === null ? '' : `, the last dated ${check.lastEntryDate}`;
  return `${plural(check.tenants, 'account', 'accounts')}, ${plural(check.businesses, 'business', 'businesses')}, ${plural(check.journalEntries, 'journal entry', 'journal entries')}${last}`;
}

/** The books file for commands that copy it whole: it must exist, and be a file. */
function existingBooks(context: CommandContext): string {
  const books = resolveDbPath(context.globals, context.io.env);
  if (books === ':memory:' || !existsSync(books)) throw new UsageError(`no books at ${books}: check --db (or DAYBOOK_DB)`);
  return books;
}

/** Refuses, before anything is copied, a FILE that cannot or should not be written. */
function checkDestination(to: string, force: boolean): void {
  let stats;
  try {
    stats = statSync(to);
  } catch {
    if (!existsSync(dirname(to))) throw new UsageError(`cannot write ${to}: no such folder`);
    return;
  }
  if (stats.isDirectory()) throw new UsageError(`cannot write ${to}: it is a folder`);
  if (!force) throw new UsageError(`${to} exists: add --force to replace it`);
}

export async function backup(options: BackupOptions, context: CommandContext): Promise<void> {
  const books = existingBooks(context);
  checkDestination(options.to, options.force === true);
  const db = openDb(books);
  let result: BackupResult;
  try {
    result = await backupBooks(db, options.to);
  } catch (error) {
    if (error instanceof BackupRefused) {
      if (error.code === 'damaged') throw new CheckFailed(`${error.message}; nothing was written to ${options.to}`);
      throw new UsageError(error.message);
    }
    throw error;
  } finally {
    db.close();
  }
  context.out.result({ file: options.to, bytes: result.bytes, integrity: result.integrity }, [
    `Backed up ${books} to ${options.to}: ${plural(result.bytes, 'byte', 'bytes')}, integrity_check ok.`,
  ]);
}

export async function restore(options: RestoreOptions, context: CommandContext): Promise<void> {
  const books = resolveDbPath(context.globals, context.io.env);
  if (books === ':memory:') throw new UsageError('restore needs a books file: --db (or DAYBOOK_DB) is :memory:');
  // Held until the restore is recorded: no server starts on the books before they are migrated.
  const releaseLock = refusalAsUsage(books, options.from, () => lockBooksForRestore(books));
  let result;
  let applied: string[];
  let schema: string | null;
  try {
    result = refusalAsUsage(books, options.from, () =>
      restoreBooks(options.from, books, {
        lockHeld: true,
        replaceExisting: options.yes === true,
        onChecked: (check) => context.out.note(`${options.from} is whole: ${describeContents(check)}; restoring it to ${books}`),
      }),
    );
    schema = result.check.migrations[result.check.migrations.length - 1] ?? null;
    // The restored books are brought to this version's schema at once, so the row that records
    // the restore can be written into them (it is the first thing their trail says afterwards).
    ({ applied } = await migrateBooks(books, context.actor, context.io.clock));
    recordRestoreIn(books, context, { from: options.from, bytes: result.bytes, replaced: result.replaced, schema, migrated: applied });
  } finally {
    releaseLock();
  }
  const { check } = result;
  context.out.result(
    {
      file: options.from,
      books,
      bytes: result.bytes,
      replaced: result.replaced,
      accounts: check.tenants,
      businesses: check.businesses,
      journalEntries: check.journalEntries,
      lastEntryDate: check.lastEntryDate,
      schema,
      migrated: applied,
    },
    [
      `Restored ${options.from} to ${books}${result.replaced ? ' (the books there were replaced)' : ''}: ${describeContents(check)}.`,
      applied.length === 0
        ? 'The books are at the latest schema; start the server.'
        : `Brought the books to the latest schema (${plural(applied.length, 'migration', 'migrations')} applied); start the server.`,
    ],
  );
}

/** A refusal of the restore, as the operator's error (exit 2). */
function refusalAsUsage<T>(books: string, from: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (!(error instanceof BackupRefused)) throw error;
    if (error.code === 'books_exist') throw new UsageError(`${books} holds books already: add --yes to replace them with ${from}`);
    throw new UsageError(error.message);
  }
}

/** The installation-wide audit row of a restore, written into the restored books. */
function recordRestoreIn(books: string, context: CommandContext, detail: { from: string; bytes: number; replaced: boolean; schema: string | null; migrated: readonly string[] }): void {
  const db = openDb(books);
  try {
    writeAsCli(db, context, recordRestore, detail);
  } finally {
    db.close();
  }
}

