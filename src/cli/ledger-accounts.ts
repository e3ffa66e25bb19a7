import type { Command } from 'commander';
import { id } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

const run = handlersIn(() => import('./actions/ledger-accounts.js'));

/** `ledger-account`, never `account`: that is the tenant (`daybook account create`). */
export function registerLedgerAccountCommands(program: Command, io: CliIo): void {
  const group = program.command('ledger-account').description("a business's chart of accounts (not `daybook account`, the tenant)");
  group
    .command('archive')
    .description('archive a ledger account; refused for system accounts, headings, and accounts used by invoices not yet paid or void')
    .requiredOption('--id <id>', 'ledger account id', id)
    .action(action(io, run('archive')));
  group
    .command('unarchive')
    .description('bring an archived ledger account back into GET /accounts')
    .requiredOption('--id <id>', 'ledger account id', id)
    .action(action(io, run('unarchive')));
}
