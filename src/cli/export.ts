import type { Command } from 'commander';
import { choiceOption, id } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

const HELP_AFTER = `
Writes the business's journal as plain-text accounting that hledger and ledger-cli both read,
so an independent engine can recompute every balance. One transaction per journal entry (date
order, then the order entries were written) holding the entry's lines of the chosen basis
(default: the business's own); an entry with no line in that basis is left out. Each posting
is the account's full path (chart names from the top down, joined by ":") and an amount such
as USD 1234.56 (debits positive, credits negative).

Without --to the journal is all that goes to stdout (a summary goes to stderr); with --to
FILE it is written to FILE (replaced whole, or left as it was if the export fails) and a
summary is printed. --json needs --to.

Check the books:
  daybook export ledger --business 85cb938c-... --to books.journal
  hledger -f books.journal --strict balance --flat -e 2027-01-01   # -e is exclusive: through 2026-12-31
  ledger -f books.journal --pedantic balance --flat
--json: {"businessId", "basis", "entries", "lines", "file", "firstDate", "lastDate"}`;

const run = handlersIn(() => import('./actions/export.js'));

export function registerExportCommands(program: Command, io: CliIo): void {
  const group = program.command('export').description('export the books for other tools');
  group
    .command('ledger')
    .description("write a business's journal as an hledger / ledger-cli journal, to check every figure with an independent engine")
    .requiredOption('--business <id>', 'business id', id)
    .addOption(choiceOption('--basis <basis>', "the view to export (default: the business's basis)", ['cash', 'accrual']))
    .option('--to <file>', 'write the journal to FILE instead of stdout')
    .addHelpText('after', HELP_AFTER)
    .action(action(io, run('exportLedger')));
}
