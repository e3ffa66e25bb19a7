import type { Command } from 'commander';
import { action, type CliIo, type CommandContext, migrateBooks, resolveDbPath } from './context.js';

async function migrate(_options: unknown, context: CommandContext): Promise<void> {
  const db = resolveDbPath(context.globals, context.io.env);
  const { applied } = await migrateBooks(db);
  const summary = applied.length === 0 ? 'already up to date' : `applied ${applied.length}: ${applied.join(', ')}`;
  context.out.result({ db, applied }, [`Migrated ${db}: ${summary}`]);
}

export function registerMigrateCommand(program: Command, io: CliIo): void {
  program.command('migrate').description('bring the database up to the latest schema').action(action(io, migrate));
}
