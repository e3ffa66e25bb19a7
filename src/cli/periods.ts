import type { Command } from 'commander';
import { id, isoDate } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

const run = handlersIn(() => import('./actions/periods.js'));

export function registerPeriodCommands(program: Command, io: CliIo): void {
  const group = program.command('period').description('close accounting periods');
  group
    .command('lock')
    .description('lock every period through a date (locks only move forward)')
    .requiredOption('--business <id>', 'business id', id)
    .requiredOption('--through <YYYY-MM-DD>', 'last locked date', isoDate)
    .action(action(io, run('lock')));
}
