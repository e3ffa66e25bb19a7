import { closeSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Basis } from '../../books/businesses.js';
import { findBusiness } from '../../books/businesses.js';
import { LEDGER_CLI_FIRST_DATE, type LedgerExportSummary, writeLedgerJournal } from '../../books/reports/ledger-export.js';
import { createPrivateFile, keepStricterMode } from '../../db/private-files.js';
import { type CommandContext, withBooks } from '../context.js';
import { fileErrorReason, UsageError } from '../errors.js';

interface ExportOptions {
  business: string;
  basis?: Basis;
  to?: string;
}

/**
 * Runs `produce` with a writer into a new file beside `path`, then renames it over `path`:
 * a failed export leaves `path` as it was and no partial file behind. The journal names every
 * customer and amount, so the file is 0600 (or stricter, as the file it replaces was).
 */
function writeFileAtomically<T>(path: string, produce: (write: (chunk: string) => void) => T): T {
  try {
    if (statSync(path).isDirectory()) throw new UsageError(`cannot write ${path}: it is a folder`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
  }
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number;
  try {
    fd = createPrivateFile(temporary);
  } catch (error) {
    throw new UsageError(`cannot write ${path}: ${fileErrorReason(error)}`);
  }
  let done = false;
  try {
    const result = produce((chunk) => {
      const bytes = Buffer.from(chunk, 'utf8');
      let offset = 0;
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    });
    closeSync(fd);
    done = true;
    keepStricterMode(temporary, path);
    renameSync(temporary, path);
    return result;
  } catch (error) {
    if (!done) closeSync(fd);
    try {
      unlinkSync(temporary);
    } catch {
      // Already renamed or never written: nothing to clean.
    }
    // A failed system call on the file (full disk, ...) is the operator's to fix; anything else goes up as it is.
    throw typeof (error as NodeJS.ErrnoException).syscall === 'string' ? new UsageError(`cannot write ${path}: ${fileErrorReason(error)}`) : error;
  }
}

function describe(summary: LedgerExportSummary): string {
  const entries = `${summary.entries} ${summary.entries === 1 ? 'entry' : 'entries'}`;
  const lines = `${summary.lines} ${summary.lines === 1 ? 'line' : 'lines'}`;
  return `${entries} (${lines}, ${summary.basis} basis) of ${summary.businessName}`;
}

export async function exportLedger(options: ExportOptions, context: CommandContext): Promise<void> {
  if (context.out.json && options.to === undefined) {
    throw new UsageError('--json needs --to FILE: without it the journal itself is written to stdout');
  }
  const summary = await withBooks(context, (db) => {
    // The id the operator typed, before any file is touched.
    if (!findBusiness(db, options.business)) throw new UsageError(`no business with id ${options.business}`);
    const exportTo = (write: (chunk: string) => void) =>
      writeLedgerJournal(db, options.business, write, {
        ...(options.basis ? { basis: options.basis } : {}),
        onProgress: (lines) => context.out.note(`${lines} lines written…`),
      });
    return options.to === undefined ? exportTo((chunk) => context.io.stdout(chunk)) : writeFileAtomically(options.to, exportTo);
  });
  if (summary.firstDate !== null && summary.firstDate < LEDGER_CLI_FIRST_DATE) {
    context.out.warn(`the journal has entries dated before ${LEDGER_CLI_FIRST_DATE} (the first on ${summary.firstDate}): hledger reads them, ledger-cli cannot`);
  }
  if (options.to === undefined) {
    context.out.note(`exported ${describe(summary)}`);
    return;
  }
  context.out.result(
    {
      businessId: summary.businessId,
      basis: summary.basis,
      entries: summary.entries,
      lines: summary.lines,
      file: options.to,
      firstDate: summary.firstDate,
      lastDate: summary.lastDate,
    },
    [`Exported ${describe(summary)} to ${options.to}.`],
  );
}

