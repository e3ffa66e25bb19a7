import type { Command } from 'commander';
import { action, handlersIn, type CliIo } from './context.js';

const run = handlersIn(() => import('./actions/migrate.js'));

export function registerMigrateCommand(program: Command, io: CliIo): void {
  program.command('migrate').description('bring the database up to the latest schema').action(action(io, run('migrate')));
}
