import { dirname } from 'node:path';
import { exposureWarning } from '../../db/private-files.js';
import { type CommandContext, migrateBooks, resolveDbPath } from '../context.js';

export async function migrate(_options: unknown, context: CommandContext): Promise<void> {
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

