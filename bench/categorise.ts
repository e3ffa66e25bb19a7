/**
 * `npm run bench:categorise`: how well and how fast the review queue's categoriser places bank
 * lines, on books with a history of booked payments and a held-out statement it never saw,
 * both generated with frozen seeds (bench/support/expense-history.ts, bank-statement.ts).
 *
 * Quality, on the held-out statement (payments to the history's payees written as banks write
 * them, half without the vendor column, beside merchants never seen and lines that say
 * nothing): the precision of proposals at or above the review threshold (0.9, `highConfidence`),
 * the coverage of known payees' rows there, with and without the vendor column, how many
 * meaningless rows reach it, and for each confidence bucket of width 0.1 how often its
 * proposals are right.
 *
 * Speed: a 50,000-row statement imported into the same books, in the process
 * (`importBankStatement`, reading the file excluded) and as a whole `daybook import bank` call
 * (as built: `npm run build` first).
 *
 *   npm run bench:categorise
 *   BENCH_HISTORY=1500 BENCH_KNOWN=3000 BENCH_IMPORT_ROWS=50000 npm run bench:categorise
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { type Business, createBusiness } from '../src/books/businesses.js';
import { categoriserFor } from '../src/books/categorise/index.js';
import { listPostableAccounts } from '../src/books/chart.js';
import { importBankStatement } from '../src/books/import/bank-import.js';
import { recordExpense } from '../src/books/expenses.js';
import { parseStatement } from '../src/books/import/statement.js';
import { IMPORT_CACHE_KIB } from '../src/cli/actions/import.js';
import { createTenant } from '../src/books/tenants.js';
import { type Clock, fixedClock } from '../src/clock.js';
import { type Db, inTransaction, openDb } from '../src/db/connection.js';
import { addDays } from '../src/dates.js';
import { throwawayBooks } from '../src/db/throwaway-books.js';
import { projectRoot } from '../src/paths.js';
import { CLI_ACTOR } from '../src/store/audit.js';
import { generateHeldOutStatement, type HeldOutRow } from './support/bank-statement.js';
import { generateExpenseHistory, insertExpenseHistory } from './support/expense-history.js';
import { buildDaybook } from './daybook-process.js';

/** Frozen before any tuning: every figure in docs/performance.md comes from these. */
const HISTORY_SEED = 20261127;
const HELD_OUT_SEED = 20261128;
const IMPORT_SEED = 20261129;
const THRESHOLD = 0.9;

const historySize = Number(process.env.BENCH_HISTORY ?? 1500);
const knownRows = Number(process.env.BENCH_KNOWN ?? 3000);
const importRows = Number(process.env.BENCH_IMPORT_ROWS ?? 50_000);

interface Scored {
  row: HeldOutRow;
  confidence: number | null;
  right: boolean;
}

function share(part: number, whole: number): string {
  return whole === 0 ? '-' : `${(part / whole).toFixed(3)} (${part}/${whole})`;
}

/** How many of `scored` fall in each confidence bucket of 0.1, and how many of those were right. */
function printBuckets(what: string, scored: ReadonlyArray<{ confidence: number | null; right: boolean }>): void {
  console.log(`confidence bucket   ${what.padEnd(9)}   right`);
  for (let low = 0; low < 10; low++) {
    const inBucket = scored.filter((s) => s.confidence !== null && Math.min(9, Math.floor(s.confidence * 10 + 1e-9)) === low);
    if (inBucket.length === 0) continue;
    console.log(`[${(low / 10).toFixed(1)}, ${((low + 1) / 10).toFixed(1)}${low === 9 ? ']' : ')'}          ${String(inBucket.length).padStart(9)}   ${share(inBucket.filter((s) => s.right).length, inBucket.length)}`);
  }
}

/** A business with the bench's booked history (HISTORY_SEED), in `db`. */
function businessWithHistory(db: Db, clock: Clock): Business {
  const tenant = createTenant(db, clock, CLI_ACTOR, { name: 'Bench Firm', plan: 'large' });
  const business = createBusiness(db, clock, CLI_ACTOR, { tenantId: tenant.id, name: 'Bench Business' });
  insertExpenseHistory(db, business, generateExpenseHistory(HISTORY_SEED, historySize, '2024-11-01', 730));
  return business;
}

function reportQuality(scored: Scored[]): void {
  const confident = scored.filter((s) => s.confidence !== null && s.confidence >= THRESHOLD);
  const known = scored.filter((s) => s.row.kind === 'known');
  const coverage = (rows: Scored[]) => share(rows.filter((s) => s.confidence !== null && s.confidence >= THRESHOLD).length, rows.length);
  console.log(`held-out statement: ${scored.length} rows (${known.length} to known payees, ${scored.filter((s) => s.row.kind === 'unseen').length} to merchants never seen, ${scored.filter((s) => s.row.kind === 'meaningless').length} meaningless)`);
  console.log(`precision at ${THRESHOLD}:                  ${share(confident.filter((s) => s.right).length, confident.length)}`);
  console.log(`coverage of known payees at ${THRESHOLD}:    ${coverage(known)}`);
  console.log(`  with the vendor column:          ${coverage(known.filter((s) => s.row.vendorName !== null))}`);
  console.log(`  without it:                      ${coverage(known.filter((s) => s.row.vendorName === null))}`);
  console.log(`meaningless rows at ${THRESHOLD} or more:    ${confident.filter((s) => s.row.kind === 'meaningless').length}`);
  printBuckets('proposals', scored);
  console.log(`no proposal: ${scored.filter((s) => s.confidence === null).length}`);
}

/**
 * "Already recorded" proposals on the held-out statement: fresh books with the same history take
 * the statement into the review queue, then an expense is recorded for every tenth row to a
 * known payee (its amount, dated 0 to 3 days after the bank line, the line's vendor or a name of
 * its own when the line has none), as a bookkeeper entering receipts would. Each expense takes
 * the nearest waiting line of its amount (src/books/expenses.ts); it is right when that line is
 * the row it was recorded for (or one the same in date, amount and description).
 */
async function reportRecordedMatches(heldOut: readonly HeldOutRow[]): Promise<void> {
  const other = await throwawayBooks('daybook-bench-recorded-');
  const otherDb = openDb(other.path);
  try {
    const clock = fixedClock('2027-03-01T12:00:00.000Z');
    const business = businessWithHistory(otherDb, clock);
    const accountIds = new Map(listPostableAccounts(otherDb, business.id).map((account) => [account.name, account.id]));
    const rows = parseStatement(Buffer.from(statementCsv(heldOut)));
    importBankStatement(otherDb, clock, CLI_ACTOR, { businessId: business.id, fileName: 'held-out.csv', rows });
    const matched = otherDb.prepare(
      'SELECT q.confidence, t.txn_date, t.amount_cents, t.description FROM review_queue_items q JOIN transactions t ON t.id = q.transaction_id WHERE q.recorded_expense_id = ?',
    );
    const scored: Array<{ confidence: number; right: boolean }> = [];
    let unmatched = 0;
    heldOut.forEach((row, index) => {
      if (row.kind !== 'known' || index % 10 !== 0) return;
      const { expenseId } = inTransaction(otherDb, () =>
        recordExpense(otherDb, clock, CLI_ACTOR, {
          business,
          date: addDays(row.date, index % 4),
          amountCents: row.amountCents,
          vendor: { name: row.vendorName ?? `Receipt payee ${index}` },
          accountId: accountIds.get(row.accountName!)!,
        }),
      );
      const line = matched.get(expenseId) as { confidence: number; txn_date: string; amount_cents: bigint; description: string } | undefined;
      if (!line) unmatched += 1;
      else scored.push({ confidence: line.confidence, right: line.txn_date === row.date && line.description === row.description });
    });
    const byVendor = (named: boolean) => heldOut.filter((row, index) => row.kind === 'known' && index % 10 === 0 && (row.vendorName !== null) === named).length;
    console.log(`\n"already recorded": ${scored.length + unmatched} expenses recorded for queued lines (${byVendor(true)} naming the vendor, ${byVendor(false)} not); ${unmatched} found no line`);
    printBuckets('matches', scored);
  } finally {
    otherDb.close();
    other.remove();
  }
}

function statementCsv(rows: readonly HeldOutRow[]): string {
  const field = (text: string) => `"${text.replaceAll('"', '""')}"`;
  const amount = (cents: bigint) => `-${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;
  return ['date,description,amount,vendor', ...rows.map((row) => `${row.date},${field(row.description)},${amount(row.amountCents)},${row.vendorName === null ? '' : field(row.vendorName)}`)].join('\n') + '\n';
}

const books = await throwawayBooks('daybook-bench-categorise-');
const db = openDb(books.path);
// The page cache `daybook import bank` gives its connection.
db.pragma(`cache_size = -${IMPORT_CACHE_KIB}`);
try {
  const clock = fixedClock('2026-11-27T12:00:00.000Z');
  const business = businessWithHistory(db, clock);
  const accountIds = new Map(listPostableAccounts(db, business.id).map((account) => [account.name, account.id]));

  const buildStarted = performance.now();
  const categoriser = categoriserFor(db, business.id);
  const buildMs = performance.now() - buildStarted;
  const heldOut = generateHeldOutStatement({ seed: HELD_OUT_SEED, known: knownRows, unseen: Math.round(knownRows / 20), meaningless: Math.round(knownRows / 20), startDate: '2026-11-01', days: 90 });
  const proposeStarted = performance.now();
  const scored: Scored[] = heldOut.map((row) => {
    const proposal = categoriser.propose({ description: row.description, vendorName: row.vendorName, amountCents: row.amountCents });
    const truth = row.accountName === null ? undefined : accountIds.get(row.accountName);
    return { row, confidence: proposal.confidence, right: truth !== undefined && proposal.accountId === truth };
  });
  const proposeMs = performance.now() - proposeStarted;
  console.log(`history: ${historySize} booked payments (seed ${HISTORY_SEED}); held-out seed ${HELD_OUT_SEED}; categoriser built in ${buildMs.toFixed(1)} ms; ${heldOut.length} proposals in ${proposeMs.toFixed(0)} ms`);
  reportQuality(scored);
  await reportRecordedMatches(heldOut);

  // Speed: the import, in the process and as a whole command, into books with the same history.
  const statement = generateHeldOutStatement({ seed: IMPORT_SEED, known: importRows - 2 * Math.round(importRows / 22), unseen: Math.round(importRows / 22), meaningless: Math.round(importRows / 22), startDate: '2026-11-01', days: 90 });
  const csv = statementCsv(statement.slice(0, importRows));
  const rows = parseStatement(Buffer.from(csv));
  // The import as `daybook import bank` runs it: the built code (dist/), not these sources.
  buildDaybook();
  const built = (await import(pathToFileURL(join(projectRoot, 'dist/src/books/import/bank-import.js')).href)) as { importBankStatement: typeof importBankStatement };
  const importStarted = performance.now();
  const imported = built.importBankStatement(db, clock, CLI_ACTOR, { businessId: business.id, fileName: 'bench.csv', rows });
  const importSeconds = (performance.now() - importStarted) / 1000;
  console.log(`\nimport of ${rows.length} rows in the process: ${importSeconds.toFixed(2)} s, ${Math.round(rows.length / importSeconds).toLocaleString('en-US')} rows/s (${imported.queued} queued)`);

  const other = await throwawayBooks('daybook-bench-import-');
  try {
    const otherDb = openDb(other.path);
    const otherBusiness = businessWithHistory(otherDb, clock);
    otherDb.close();
    const file = join(dirname(other.path), 'bench.csv');
    writeFileSync(file, csv);
    const started = performance.now();
    const run = spawnSync(process.execPath, [join(projectRoot, 'bin/daybook.js'), '--json', '--db', other.path, 'import', 'bank', '--business', otherBusiness.id, '--file', file], { encoding: 'utf8', env: { ...process.env, DAYBOOK_LOG_LEVEL: 'silent' } });
    const seconds = (performance.now() - started) / 1000;
    if (run.status !== 0) throw new Error(`daybook import bank exited ${run.status}: ${run.stderr}`);
    console.log(`import of ${rows.length} rows, the whole \`daybook import bank\` call: ${seconds.toFixed(2)} s, ${Math.round(rows.length / seconds).toLocaleString('en-US')} rows/s`);
  } finally {
    other.remove();
  }
} finally {
  db.close();
  books.remove();
}
