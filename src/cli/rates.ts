import type { Command } from 'commander';
import { setRateCommand } from '../door/commands/installation.js';
import { FOREIGN_CURRENCIES } from '../money.js';
import { choiceOption, isoDate } from './args.js';
import { action, type CliIo, type CommandContext, withBooks, writeAsCli } from './context.js';

interface SetOptions {
  currency: string;
  date: string;
  usdPerUnit: string;
}

async function set(options: SetOptions, context: CommandContext): Promise<void> {
  const rate = await withBooks(
    context,
    (db) => writeAsCli(db, context, setRateCommand, { currency: options.currency, date: options.date, usdPerUnit: options.usdPerUnit }),
    'create',
  );
  context.out.result({ ...rate }, [`Rate set: 1 ${rate.currency} = ${rate.usdPerUnit} USD on ${rate.date} (${rate.source})`]);
}

export function registerRateCommands(program: Command, io: CliIo): void {
  const group = program.command('rate').description('exchange rates set by hand');
  group
    .command('set')
    .description('store (or replace) the USD value of one unit of a currency on a date')
    .addOption(choiceOption('--currency <code>', 'foreign currency', FOREIGN_CURRENCIES).makeOptionMandatory())
    .requiredOption('--date <YYYY-MM-DD>', 'the date the rate applies from', isoDate)
    .requiredOption('--usd-per-unit <rate>', 'USD per unit, a decimal with at most 10 places (e.g. 1.085)')
    .action(action(io, set));
}
