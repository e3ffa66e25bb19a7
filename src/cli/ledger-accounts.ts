import type { Command } from 'commander';
import { archiveLedgerAccount } from '../door/commands/parties.js';
import { id } from './args.js';
import { action, type CliIo, type CommandContext, withBooks, writeAsCli } from './context.js';

function archiveCommand(archived: boolean) {
  return async (options: { id: string }, context: CommandContext): Promise<void> => {
    const account = await withBooks(context, (db) => writeAsCli(db, context, archiveLedgerAccount, { id: options.id, archived }));
    context.out.result({ ...account }, [
      archived
        ? `Ledger account ${account.code} ${account.name} is archived: GET /accounts no longer lists it and nothing new posts to it; its history stays in every report.`
        : `Ledger account ${account.code} ${account.name} is no longer archived: GET /accounts lists it again.`,
    ]);
  };
}

/** `ledger-account`, never `account`: that is the tenant (`daybook account create`). */
export function registerLedgerAccountCommands(program: Command, io: CliIo): void {
  const group = program.command('ledger-account').description("a business's chart of accounts (not `daybook account`, the tenant)");
  group
    .command('archive')
    .description('archive a ledger account; refused for system accounts, headings, and accounts used by invoices not yet paid or void')
    .requiredOption('--id <id>', 'ledger account id', id)
    .action(action(io, archiveCommand(true)));
  group
    .command('unarchive')
    .description('bring an archived ledger account back into GET /accounts')
    .requiredOption('--id <id>', 'ledger account id', id)
    .action(action(io, archiveCommand(false)));
}
