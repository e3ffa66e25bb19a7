import type { Command } from 'commander';
import { FOREIGN_CURRENCIES } from '../money.js';
import { choiceOption, isoDate } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

const run = handlersIn(() => import('./actions/rates.js'));

export function registerRateCommands(program: Command, io: CliIo): void {
  const group = program.command('rate').description('exchange rates set by hand');
  group
    .command('set')
    .description('store (or replace) the USD value of one unit of a currency on a date')
    .addOption(choiceOption('--currency <code>', 'foreign currency', FOREIGN_CURRENCIES).makeOptionMandatory())
    .requiredOption('--date <YYYY-MM-DD>', 'the date the rate applies from', isoDate)
    .requiredOption('--usd-per-unit <rate>', 'USD per unit, a decimal with at most 10 places (e.g. 1.085)')
    .action(action(io, run('set')));
}
