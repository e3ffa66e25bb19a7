import type { Command } from 'commander';
import { dirname } from 'node:path';
import { exposureWarning } from '../db/private-files.js';
import { action, type CliIo, type CommandContext, migrateBooks, resolveDbPath } from './context.js';

async function migrate(_options: unknown, context: CommandContext): Promise<void> {
  const db = resolveDbPath(context.globals, context.io.env);
  const { applied } = await migrateBooks(db, context.actor, context.io.clock);
  warnOfExposedBooks(db, context);
  const summary = applied.length === 0 ? 'already up to date' : `applied ${applied.length}: ${applied.join(', ')}`;
  context.out.result({ db, applied }, [`Migrated ${db}: ${summary}`]);
}

/**
 * What Daybook creates is the owner's alone, but a folder (or books) that was there before keeps
 * its permissions: Daybook never changes those, so it says where they are open.
 */
function warnOfExposedBooks(db: string, context: CommandContext): void {
  if (db === ':memory:') return;
  for (const [path, what] of [[dirname(db), 'the books folder'], [db, 'the books file']] as const) {
    const warning = exposureWarning(path, what);
    if (warning !== null) context.out.warn(warning);
  }
}

export function registerMigrateCommand(program: Command, io: CliIo): void {
  program.command('migrate').description('bring the database up to the latest schema').action(action(io, migrate));
}
