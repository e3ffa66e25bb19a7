import type { Command } from 'commander';
import { importStatementCommand } from '../door/commands/spending.js';
import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { describeProblem, MAX_STATEMENT_BYTES, parseStatement, type StatementRow, StatementRefused } from '../books/import/statement.js';
import { ApiError } from '../errors.js';
import { id } from './args.js';
import { action, type CliIo, type CommandContext, withBooks, writeAsCli } from './context.js';
import { UsageError } from './errors.js';

/** The page cache of the import's connection, in KiB. */
const IMPORT_CACHE_KIB = 64 * 1024;

/** The most bad rows named on stderr; the rest are counted in one more line. */
export const MAX_PROBLEM_LINES = 50;

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

/** The file's bytes, or one clear line (exit 2) when it cannot be read. */
function readStatementFile(path: string, maxBytes: number): Uint8Array {
  try {
    const stat = statSync(path);
    if (stat.isDirectory()) throw new UsageError(`cannot read ${path}: it is a folder`);
    if (stat.size > maxBytes) throw new UsageError(`${path}: the file is over ${maxBytes / 1024 / 1024} MiB; split the statement`);
    return readFileSync(path);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (code ?? 'unreadable');
    throw new UsageError(`cannot read ${path}: ${why}`);
  }
}

/** The stderr lines for a refused statement: one per bad row, at most MAX_PROBLEM_LINES, then a count of the rest. */
export function refusalLines(lines: readonly string[]): string[] {
  if (lines.length <= MAX_PROBLEM_LINES) return [...lines];
  const rest = lines.length - MAX_PROBLEM_LINES;
  return [...lines.slice(0, MAX_PROBLEM_LINES), `… and ${rest} more bad ${rest === 1 ? 'row' : 'rows'}`];
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/**
 * A refused statement (bad rows, or rows the books cannot take) as stderr lines: every line
 * but the last is written here; the last is the UsageError main() prints (exit 2). The
 * messages quote values already made safe to show. Any other error is returned as it is.
 */
function refusal(error: unknown, file: string, context: CommandContext): unknown {
  if (!(error instanceof StatementRefused)) return error;
  const lines = refusalLines(error.problems.map((problem) => (problem.row === null ? `${file}: ${problem.message}` : describeProblem(problem))));
  for (const line of lines.slice(0, -1)) context.io.stderr(`daybook: ${line}\n`);
  return new UsageError(lines[lines.length - 1]!);
}

async function importBank(options: { business: string; file: string }, context: CommandContext): Promise<void> {
  const bytes = readStatementFile(options.file, MAX_STATEMENT_BYTES);
  let rows: StatementRow[];
  try {
    rows = parseStatement(bytes);
  } catch (error) {
    throw refusal(error, options.file, context);
  }
  const result = await withBooks(context, (db) => {
    // A big statement is one transaction: a larger page cache keeps its index pages in memory
    // (this connection only; it closes after the import).
    db.pragma(`cache_size = -${IMPORT_CACHE_KIB}`);
    try {
      return writeAsCli(db, context, importStatementCommand, {
        statement: { businessId: options.business, fileName: basename(options.file), rows },
        options: { onProgress: (done, total) => context.out.note(`${done} of ${total} rows…`) },
      });
    } catch (error) {
      // The books say "No such business."; the operator is better served by the id they typed.
      if (error instanceof ApiError && error.code === 'not_found') {
        throw new UsageError(`no business with id ${options.business}`);
      }
      throw refusal(error, options.file, context);
    }
  });
  context.out.result({ imported: result.imported, duplicates: result.duplicates, alreadyRecorded: result.alreadyRecorded, queued: result.queued }, [
    `Imported ${plural(result.rows, 'row', 'rows')} into ${result.businessName}: ${result.imported} new ` +
      `(${result.queued} in the review queue, ${result.moneyIn} money in), ${result.duplicates} already imported` +
      (result.alreadyRecorded > 0 ? `, ${result.alreadyRecorded} already recorded as expenses.` : '.'),
  ]);
}

export function registerImportCommands(program: Command, io: CliIo): void {
  const group = program.command('import').description('import data into the books');
  group
    .command('bank')
    .description('import a bank statement (CSV): money out into the review queue, categorised; money in recorded for reconciliation; all rows or none')
    .requiredOption('--business <id>', 'business id', id)
    .requiredOption('--file <path>', 'the statement, a CSV file (see below)')
    .addHelpText('after', HELP_AFTER)
    .action(action(io, importBank));
}
