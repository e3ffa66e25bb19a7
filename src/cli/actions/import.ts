import { importStatementCommand } from '../../door/commands/spending.js';
import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { describeProblem, MAX_STATEMENT_BYTES, parseStatement, type StatementRow, StatementRefused } from '../../books/import/statement.js';
import { ApiError } from '../../errors.js';
import { type CommandContext, withBooks, writeAsCli } from '../context.js';
import { UsageError } from '../errors.js';
import { MAX_PROBLEM_LINES } from '../settings.js';

/** The page cache of the import's connection, in KiB. */
export const IMPORT_CACHE_KIB = 64 * 1024;

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

export async function importBank(options: { business: string; file: string }, context: CommandContext): Promise<void> {
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

