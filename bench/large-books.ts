/**
 * Large books for the report benchmark (bench/reports.ts) and the large-books scenarios of
 * bench/run.ts, in a fresh SQLite file migrated by the project's own migrations; what the
 * books hold and how they are written is bench/books-generator.ts's.
 *
 *   npm run bench:books -- --db /tmp/large.sqlite [--lines 1000000] [--invoices 10000]
 *                          [--paid-invoices 0] [--bills 2000] [--seed 1] [--end YYYY-MM-DD] [--force]
 *
 * The books end on --end (default today, UTC), so the agings' default asOf (today) sees due
 * dates from 150 days ago to 30 days ahead. Prints a summary, the business id and a read key
 * (rate limit off) on stdout (bench/run.ts reads the `business` and `key` lines), progress on
 * stderr.
 */
import { existsSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { systemClock, todayUtc } from '../src/clock.js';
import { isIsoDate } from '../src/dates.js';
import { databaseFiles, openDb } from '../src/db/connection.js';
import { migrateLatest } from '../src/db/migrate.js';
import { generateLargeBooks, type LargeBooksPlan } from './books-generator.js';

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      db: { type: 'string' },
      lines: { type: 'string', default: '1000000' },
      invoices: { type: 'string', default: '10000' },
      'paid-invoices': { type: 'string', default: '0' },
      bills: { type: 'string', default: '2000' },
      seed: { type: 'string', default: '1' },
      end: { type: 'string' },
      force: { type: 'boolean', default: false },
    },
  });
  if (!args.db) throw new Error('--db FILE is required: the books file to create');
  const dbPath = args.db;
  const plan: LargeBooksPlan = {
    lines: wholeNumber('lines', args.lines, 2),
    openInvoices: wholeNumber('invoices', args.invoices, 0),
    paidInvoices: wholeNumber('paid-invoices', args['paid-invoices'], 0),
    openBills: wholeNumber('bills', args.bills, 0),
    seed: wholeNumber('seed', args.seed, 0),
    endDate: args.end ?? todayUtc(systemClock),
  };
  if (!isIsoDate(plan.endDate)) throw new Error(`--end must be a date YYYY-MM-DD (got ${plan.endDate})`);

  const started = performance.now();
  if (existsSync(dbPath)) {
    if (!args.force) throw new Error(`${dbPath} exists: the books are generated into a fresh file (pass --force to replace it)`);
    for (const path of [...databaseFiles(dbPath), `${dbPath}.lock`]) rmSync(path, { force: true });
  }
  await migrateLatest(dbPath);
  // Settings of the generator's own connection only (the file stays WAL, as the server wants it):
  // no fsync (a crash here just means generating again), a page cache that holds the hot indexes,
  // and statement journals in memory: every INSERT into journal_lines keeps one, since its
  // triggers may abort it, and kept in a temporary file it made most of the run's system time.
  const db = openDb(dbPath, { synchronous: 'off' });
  db.pragma('cache_size = -262144');
  db.pragma('temp_store = MEMORY');
  const books = generateLargeBooks(db, plan, (note) => process.stderr.write(`  ${note}\n`));
  const generationSeconds = ((performance.now() - started) / 1000).toFixed(1);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();

  const count = (n: number) => n.toLocaleString('en-US');
  const percent = (n: number) => `${((100 * n) / books.lines).toFixed(0)} %`;
  const { both, accrual, cash } = books.linesByBasis;
  console.log(
    `generated ${count(books.lines)} journal lines in ${count(books.entries)} entries ` +
      `(${books.startDate} to ${books.endDate}; basis both ${percent(both)}, accrual ${percent(accrual)}, cash ${percent(cash)}), ` +
      `${books.chartAccounts} accounts, ${count(plan.openInvoices)} open invoices (${count(books.invoicesWithPayments)} partly paid), ` +
      (plan.paidInvoices > 0 ? `${count(plan.paidInvoices)} paid invoices, ` : '') +
      `${count(plan.openBills)} open bills (${count(books.billsWithPayments)} partly paid), ` +
      `${count(books.registerRows)} register rows, in ${generationSeconds} s (seed ${plan.seed})`,
  );
  console.log(`business ${books.businessId}`);
  console.log(`key ${books.key}`);
  console.log(`npm run bench:reports -- --db ${dbPath} --key ${books.key} --business ${books.businessId}`);
}

function wholeNumber(name: string, text: string, min: number): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be a whole number of at least ${min} (got ${text})`);
  return n;
}

await main();
