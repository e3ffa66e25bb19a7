import type { Command } from 'commander';
import { id, integerIn, isoDate, name } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 100_000;

const HELP_AFTER = `
Every write to the books appends a row: under the API key's name, the OS user and admin
command for the CLI, or the job's name. Rows are listed newest first. Exchange rates,
restores and migrations belong to no account: list them with --installation.

Examples:
  daybook audit list --account ACCOUNT_ID --since 2026-11-01
  daybook audit list --account ACCOUNT_ID --key "Bookkeeping app" --json
  daybook audit list --installation
`;

const run = handlersIn(() => import('./actions/audit.js'));

export function registerAuditCommands(program: Command, io: CliIo): void {
  const group = program.command('audit').description('the audit trail: who wrote what, and when');
  group
    .command('list')
    .description('list audit rows, newest first')
    .option('--account <id>', "the account whose trail to list", id)
    .option('--installation', 'list the installation-wide rows instead: exchange rates, restores, migrations')
    .option('--business <id>', 'only rows about this business', id)
    .option('--since <YYYY-MM-DD>', 'only rows written on or after this day (UTC)', isoDate)
    .option('--key <name>', 'only writes made with API keys of this name', name)
    .option('--limit <n>', `at most this many rows (default ${DEFAULT_LIMIT})`, integerIn(1, MAX_LIMIT))
    .addHelpText('after', HELP_AFTER)
    .action(action(io, run('list')));
}
