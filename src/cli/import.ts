import type { Command } from 'commander';
import { id } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';
import { MAX_PROBLEM_LINES } from './settings.js';

const HELP_AFTER = `
The file is CSV (RFC 4180: a field in double quotes may hold commas, line breaks and quotes
written twice; LF or CRLF line ends; an optional UTF-8 byte order mark), valid UTF-8, with
the header row

  date,description,amount            or   date,description,amount,vendor

(names in any case, in this order). date is YYYY-MM-DD; amount is in the bank's units with up
to 2 decimals, negative for money out (-23.45), without thousands separators or a currency
symbol, never 0; description is 1 to 2000 characters, with no control character but tab and
line breaks and no bidirectional override; vendor (optional) follows the name rule, with no
invisible character (a zero-width space, a soft hyphen) either.

All rows or none: if any row is bad, nothing is imported and each bad row is named on stderr
(at most ${MAX_PROBLEM_LINES}), as "row N: ...", where N counts the data rows from 1 (the header
is not counted). Exit 2.

Money out (negative amounts) becomes a pending transaction with a review item holding the
categoriser's proposal; its vendor is found by exact name or created. Money in (positive
amounts) is recorded as an uncategorized transaction, without a review item or vendor, for
reconciliation. Nothing is posted to the journal until a review item is accepted.

Rows already imported (the same statement again, or an overlapping one) are counted as
duplicates and skipped: a row is known by its date, amount, description (case and spacing
aside) and its place among the file's rows with that same date, amount and description, so
two identical purchases on one day are both kept.

Money out that matches an expense already recorded through the API (same amount, dated
within 5 days either side, same vendor when the file names one) is counted as already
recorded and not queued: accepting it would book the expense twice.

A new money-out row dated in a closed period (daybook period lock) could never be booked:
the file is refused, naming each such row.

Example:
  daybook import bank --business 85cb938c-... --file march.csv
  # Imported 412 rows into Lakeside Bakery: 396 new (369 in the review queue, 27 money in), 14 already imported, 2 already recorded as expenses.
--json: {"imported", "duplicates", "alreadyRecorded", "queued"}`;

const run = handlersIn(() => import('./actions/import.js'));

export function registerImportCommands(program: Command, io: CliIo): void {
  const group = program.command('import').description('import data into the books');
  group
    .command('bank')
    .description('import a bank statement (CSV): money out into the review queue, categorised; money in recorded for reconciliation; all rows or none')
    .requiredOption('--business <id>', 'business id', id)
    .requiredOption('--file <path>', 'the statement, a CSV file (see below)')
    .addHelpText('after', HELP_AFTER)
    .action(action(io, run('importBank')));
}
