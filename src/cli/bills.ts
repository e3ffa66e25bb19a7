import type { Command } from 'commander';
import { cents, id, isoDate, name } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

const run = handlersIn(() => import('./actions/bills.js'));

export function registerBillCommands(program: Command, io: CliIo): void {
  const group = program.command('bill').description('bills from vendors (payables, for AP aging); US dollars');
  group
    .command('create')
    .description('record a bill: owed from its issue date (accrual); an expense once paid (cash)')
    .requiredOption('--business <id>', 'business id', id)
    .requiredOption('--vendor <name>', "the vendor's exact name (created when new)", name)
    .requiredOption('--number <text>', "the vendor's bill number", name)
    .requiredOption('--issue-date <YYYY-MM-DD>', 'date on the bill', isoDate)
    .requiredOption('--due-date <YYYY-MM-DD>', 'when it must be paid', isoDate)
    .requiredOption('--amount-cents <cents>', 'the amount in whole cents', cents)
    .requiredOption('--account <id>', 'the expense (or asset) account it is for', id)
    .action(action(io, run('create')));
  group
    .command('pay')
    .description('pay a bill in part or whole from the bank account')
    .requiredOption('--id <id>', 'bill id', id)
    .requiredOption('--amount-cents <cents>', 'the amount paid in whole cents', cents)
    .option('--date <YYYY-MM-DD>', 'the payment date (default: today, UTC)', isoDate)
    .action(action(io, run('pay')));
}
