/**
 * Report latency over large books (made by bench/large-books.ts): the real server runs in its
 * own process (built, as bench/daybook-process.ts starts it) on a free loopback port over the books file, and
 * this process times each report with sequential requests, one at a time, over one kept-alive
 * connection: latency, not throughput. Every answer must be 200 and hold together (trial
 * balance debits = credits, assets = liabilities + equity, buckets sum to the grand total, the
 * agings' totals equal the receivable and payable balances).
 *
 * Then the same reports are timed inside this process (the books functions alone, no HTTP), to
 * show where the time goes, and the books are exported as a ledger journal
 * (`daybook export ledger`, run from the sources) to time `ledger balance` and
 * `hledger balance` on the same lines against Daybook's trial balance.
 *
 *   npm run bench:reports -- --db FILE --key KEY --business ID [--runs 200] [--warmup 20]
 *                            [--journal /tmp/large.journal] [--no-export] [--hledger-timeout 600]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { buildDaybook, startDaybook, stopProcess } from './daybook-process.js';

const mode = process.argv[2];
if (mode === '--daybook-cli') await daybookCli(process.argv.slice(3));
else await benchmark();

/** Child mode: the `daybook` command from the current sources (bin/daybook.js runs the last build). */
async function daybookCli(argv: string[]): Promise<void> {
  const { main } = await import('../src/cli/main.js');
  process.exitCode = await main([process.execPath, 'daybook', ...argv]);
}

interface Timing {
  medianMs: number;
  p99Ms: number;
}

/** Median (mean of the middle two for an even count) and nearest-rank p99. */
function summarise(samplesMs: number[]): Timing {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const medianMs = sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  const p99Ms = sorted[Math.max(0, Math.ceil(0.99 * sorted.length) - 1)]!;
  return { medianMs, p99Ms };
}

interface Reply {
  status: number;
  body: string;
  ms: number;
}

interface MoneyJson {
  cents: string;
}

/** The fields the checks read; the server validates the full shape itself. */
interface ReportJson {
  basis?: string;
  rows?: { account: string; isTotal?: boolean; amount?: MoneyJson; prior?: MoneyJson; debit?: MoneyJson; credit?: MoneyJson }[];
  totals?: Record<string, MoneyJson>;
  prior?: Record<string, MoneyJson>;
  buckets?: Record<string, MoneyJson>;
  grandTotal?: MoneyJson;
  items?: { balance: MoneyJson }[];
  asOf?: string;
}

interface Case {
  report: string;
  label: string;
  path: string;
  inProcess: () => unknown;
  check: (body: ReportJson) => string | null;
}

async function benchmark(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      db: { type: 'string' },
      key: { type: 'string' },
      business: { type: 'string' },
      runs: { type: 'string', default: '200' },
      warmup: { type: 'string', default: '20' },
      journal: { type: 'string', default: '/tmp/large.journal' },
      'no-export': { type: 'boolean', default: false },
      'hledger-timeout': { type: 'string', default: '600' },
      'ledger-runs': { type: 'string', default: '3' },
    },
  });
  if (!args.db || !args.key || !args.business) throw new Error('usage: npm run bench:reports -- --db FILE --key KEY --business ID [--runs 200]');
  if (!existsSync(args.db)) throw new Error(`no books at ${args.db}: make them with npm run bench:books`);
  const dbPath = args.db;
  const businessId = args.business;
  const runs = Number(args.runs);
  const warmup = Number(args.warmup);

  const { openDb } = await import('../src/db/connection.js');
  const { getBusiness } = await import('../src/books/businesses.js');
  const { balanceSheet, profitAndLoss, trialBalance } = await import('../src/books/reports/statements.js');
  const { payablesAging, receivablesAging } = await import('../src/books/reports/aging.js');
  const { addDays, monthEnd, monthStart } = await import('../src/dates.js');
  const { systemClock, todayUtc } = await import('../src/clock.js');

  // A connection of this process, for the books' shape and the in-process timings.
  const db = openDb(dbPath);
  const business = getBusiness(db, businessId);
  const count = (sql: string) => Number((db.prepare(sql).get(businessId) as { n: bigint }).n);
  const shape = db
    .prepare('SELECT min(entry_date) AS first, max(entry_date) AS last, count(*) AS entries FROM journal_entries WHERE business_id = ?')
    .get(businessId) as { first: string; last: string; entries: bigint };
  const lines = count('SELECT count(*) AS n FROM journal_lines WHERE business_id = ?');
  const accounts = count('SELECT count(*) AS n FROM ledger_accounts WHERE business_id = ?');
  const openInvoices = count('SELECT count(*) AS n FROM invoices WHERE business_id = ? AND closed_on IS NULL AND journal_entry_id IS NOT NULL');
  const openBills = count('SELECT count(*) AS n FROM bills WHERE business_id = ? AND closed_on IS NULL');

  const today = todayUtc(systemClock);
  const latest = shape.last;
  const year = Number(latest.slice(0, 4));
  const lastYear = String(latest.endsWith('-12-31') ? year : year - 1);
  const lastMonthStart = monthStart(addDays(monthStart(latest), -1));
  // A date inside a month, inside a year: the most runs of stored sums a report reads.
  const midDate = `${addDays(latest, -160).slice(0, 7)}-17`;
  const oddStart = `${lastYear}-03-15`;
  // The most stored rows a range can need read: it starts just after a month begins and ends just before one ends.
  const hardStart = `${lastYear}-01-02`;
  const hardEnd = addDays(monthEnd(lastMonthStart), -1);

  const rest = (path: string, query: Record<string, string>) =>
    `/api/v1/reports/${path}?${new URLSearchParams({ entityId: businessId, ...query }).toString()}`;
  const cents = (money: MoneyJson | undefined) => BigInt(money?.cents ?? 'NaN');

  const checkTrialBalance = (body: ReportJson) => {
    if (cents(body.totals?.debit) !== cents(body.totals?.credit)) return `debits ${body.totals?.debit?.cents} != credits ${body.totals?.credit?.cents}`;
    if ((body.rows?.length ?? 0) < 100) return `only ${body.rows?.length} rows`;
    const debits = body.rows!.reduce((sum, row) => sum + cents(row.debit), 0n);
    if (debits !== cents(body.totals?.debit)) return 'rows do not add up to the debit total';
    return null;
  };
  const checkBalanceSheet = (body: ReportJson) => {
    const { assets, liabilities, equity } = body.totals ?? {};
    if (cents(assets) !== cents(liabilities) + cents(equity)) return `assets ${assets?.cents} != liabilities ${liabilities?.cents} + equity ${equity?.cents}`;
    if (!body.rows?.some((row) => row.account === 'Current Year Earnings')) return 'no Current Year Earnings row';
    if (cents(assets) <= 0n) return 'no assets';
    return null;
  };
  const checkProfitAndLoss = (body: ReportJson) => {
    const { revenue, expenses, netIncome } = body.totals ?? {};
    if (cents(revenue) - cents(expenses) !== cents(netIncome)) return 'net income is not revenue less expenses';
    if (cents(body.prior?.revenue) - cents(body.prior?.expenses) !== cents(body.prior?.netIncome)) return 'prior net income is not revenue less expenses';
    if ((body.rows?.length ?? 0) < 50) return `only ${body.rows?.length} rows`;
    if (cents(revenue) <= 0n || cents(body.prior?.revenue) <= 0n) return 'no revenue in the period or the prior month';
    return null;
  };
  const checkAging = (expectedOpen: number) => (body: ReportJson) => {
    const bucketSum = Object.values(body.buckets ?? {}).reduce((sum, money) => sum + cents(money), 0n);
    if (bucketSum !== cents(body.grandTotal)) return `buckets sum to ${bucketSum}, grand total ${body.grandTotal?.cents}`;
    const items = body.items ?? [];
    if (items.length !== Math.min(25, expectedOpen)) return `${items.length} items`;
    if (items.some((item, index) => index > 0 && cents(item.balance) > cents(items[index - 1]!.balance))) return 'items not largest first';
    if (expectedOpen > 0 && cents(body.grandTotal) <= 0n) return 'nothing owed';
    return null;
  };

  const cases: Case[] = [
    { report: 'trial balance', label: `asOf ${latest} (latest)`, path: rest('trial-balance', { asOf: latest }), inProcess: () => trialBalance(db, business, latest), check: checkTrialBalance },
    { report: 'trial balance', label: `asOf ${lastYear}-12-31`, path: rest('trial-balance', { asOf: `${lastYear}-12-31` }), inProcess: () => trialBalance(db, business, `${lastYear}-12-31`), check: checkTrialBalance },
    { report: 'trial balance', label: `asOf ${midDate}`, path: rest('trial-balance', { asOf: midDate }), inProcess: () => trialBalance(db, business, midDate), check: checkTrialBalance },
    { report: 'balance sheet', label: `asOf ${latest} (latest)`, path: rest('balance-sheet', { asOf: latest }), inProcess: () => balanceSheet(db, business, latest), check: checkBalanceSheet },
    { report: 'balance sheet', label: `asOf ${lastYear}-12-31`, path: rest('balance-sheet', { asOf: `${lastYear}-12-31` }), inProcess: () => balanceSheet(db, business, `${lastYear}-12-31`), check: checkBalanceSheet },
    { report: 'balance sheet', label: `asOf ${midDate}`, path: rest('balance-sheet', { asOf: midDate }), inProcess: () => balanceSheet(db, business, midDate), check: checkBalanceSheet },
    {
      report: 'profit and loss',
      label: `${lastYear} (full year)`,
      path: rest('profit-and-loss', { periodStart: `${lastYear}-01-01`, periodEnd: `${lastYear}-12-31` }),
      inProcess: () => profitAndLoss(db, business, `${lastYear}-01-01`, `${lastYear}-12-31`),
      check: checkProfitAndLoss,
    },
    {
      report: 'profit and loss',
      label: `${lastMonthStart.slice(0, 7)} (a month)`,
      path: rest('profit-and-loss', { periodStart: lastMonthStart, periodEnd: monthEnd(lastMonthStart) }),
      inProcess: () => profitAndLoss(db, business, lastMonthStart, monthEnd(lastMonthStart)),
      check: checkProfitAndLoss,
    },
    {
      report: 'profit and loss',
      label: `${year}-01-01..${latest} (to latest)`,
      path: rest('profit-and-loss', { periodStart: `${year}-01-01`, periodEnd: latest }),
      inProcess: () => profitAndLoss(db, business, `${year}-01-01`, latest),
      check: checkProfitAndLoss,
    },
    {
      report: 'profit and loss',
      label: `${oddStart}..${midDate}`,
      path: rest('profit-and-loss', { periodStart: oddStart, periodEnd: midDate }),
      inProcess: () => profitAndLoss(db, business, oddStart, midDate),
      check: checkProfitAndLoss,
    },
    {
      report: 'profit and loss',
      label: `${hardStart}..${hardEnd}`,
      path: rest('profit-and-loss', { periodStart: hardStart, periodEnd: hardEnd }),
      inProcess: () => profitAndLoss(db, business, hardStart, hardEnd),
      check: checkProfitAndLoss,
    },
    { report: 'AR aging', label: `default asOf (${today})`, path: rest('ar-aging', {}), inProcess: () => receivablesAging(db, businessId, today), check: checkAging(openInvoices) },
    {
      report: 'AR aging',
      label: `asOf ${addDays(today, -60)}`,
      path: rest('ar-aging', { asOf: addDays(today, -60) }),
      inProcess: () => receivablesAging(db, businessId, addDays(today, -60)),
      check: checkAging(Math.min(25, openInvoices)),
    },
    { report: 'AP aging', label: `default asOf (${today})`, path: rest('ap-aging', {}), inProcess: () => payablesAging(db, businessId, today), check: checkAging(openBills) },
  ];

  buildDaybook();
  const { child, url } = await startDaybook(dbPath);
  const synchronous = (await import('../src/config.js')).loadConfig(process.env, { db: dbPath }).sqliteSynchronous;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const request = (path: string): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const req = httpGet(`${url}${path}`, { agent, headers: { authorization: `Bearer ${args.key}` } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
        res.on('error', reject);
      });
      req.on('error', reject);
    });
  const fetchJson = async (path: string): Promise<ReportJson> => {
    const reply = await request(path);
    if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${reply.body}`);
    return JSON.parse(reply.body) as ReportJson;
  };

  const failures: string[] = [];
  const results: { benchCase: Case; http: Timing; inProcess?: Timing; bytes: number }[] = [];
  try {
    console.log(
      `node ${process.version}, ${lines.toLocaleString('en-US')} journal lines in ${Number(shape.entries).toLocaleString('en-US')} entries ` +
        `(${shape.first} to ${latest}), ${accounts} accounts, ${openInvoices.toLocaleString('en-US')} open invoices, ${openBills.toLocaleString('en-US')} open bills; ` +
        `${business.basis} basis; ${runs} sequential requests per report after ${warmup} warm-up; server synchronous=${synchronous}`,
    );

    // The agings' grand totals are the receivable and payable balances on the same day.
    const tbToday = await fetchJson(rest('trial-balance', { asOf: today }));
    const arAging = await fetchJson(rest('ar-aging', {}));
    const apAging = await fetchJson(rest('ap-aging', {}));
    const balanceOf = (name: string, side: 'debit' | 'credit') => cents(tbToday.rows?.find((row) => row.account === name)?.[side] ?? { cents: '0' });
    if (balanceOf('Accounts Receivable', 'debit') !== cents(arAging.grandTotal)) {
      failures.push(`AR aging ${arAging.grandTotal?.cents} != Accounts Receivable ${balanceOf('Accounts Receivable', 'debit')} on ${today}`);
    }
    if (balanceOf('Accounts Payable', 'credit') !== cents(apAging.grandTotal)) {
      failures.push(`AP aging ${apAging.grandTotal?.cents} != Accounts Payable ${balanceOf('Accounts Payable', 'credit')} on ${today}`);
    }

    for (const benchCase of cases) {
      for (let i = 0; i < warmup; i += 1) await request(benchCase.path);
      const samples: number[] = [];
      let bytes = 0;
      for (let i = 0; i < runs; i += 1) {
        const reply = await request(benchCase.path);
        samples.push(reply.ms);
        bytes = reply.body.length;
        if (reply.status !== 200) {
          failures.push(`${benchCase.report} ${benchCase.label}: status ${reply.status}: ${reply.body.slice(0, 200)}`);
          break;
        }
        // Every answer is checked, after its time is taken.
        if (i === 0 || i === runs - 1) {
          const problem = benchCase.check(JSON.parse(reply.body) as ReportJson);
          if (problem) failures.push(`${benchCase.report} ${benchCase.label}: ${problem}`);
        }
      }
      results.push({ benchCase, http: summarise(samples), bytes });
    }
  } finally {
    agent.destroy();
    await stopProcess(child);
  }

  // The same reports inside this process: the books functions alone, with the server stopped.
  for (const result of results) {
    for (let i = 0; i < warmup; i += 1) result.benchCase.inProcess();
    const samples: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      const started = performance.now();
      result.benchCase.inProcess();
      samples.push(performance.now() - started);
    }
    result.inProcess = summarise(samples);
  }
  db.close();

  const ms = (n: number) => n.toFixed(2).padStart(8);
  console.log('');
  console.log(`${'report'.padEnd(16)} ${'parameters'.padEnd(34)} ${'median ms'.padStart(9)} ${'p99 ms'.padStart(8)} ${'books fn median'.padStart(16)} ${'bytes'.padStart(8)}`);
  for (const { benchCase, http, inProcess, bytes } of results) {
    console.log(
      `${benchCase.report.padEnd(16)} ${benchCase.label.padEnd(34)} ${ms(http.medianMs).padStart(9)} ${ms(http.p99Ms)} ${ms(inProcess!.medianMs).padStart(16)} ${String(bytes).padStart(8)}`,
    );
  }

  const trialBalanceMs = results[0]!.http.medianMs;
  if (!args['no-export']) {
    console.log('');
    exportAndCompare(dbPath, businessId, args.journal, trialBalanceMs, Number(args['ledger-runs']), Number(args['hledger-timeout']), failures);
  }

  console.log('');
  if (failures.length > 0) {
    for (const failure of failures) console.log(`FAILED: ${failure}`);
    process.exitCode = 1;
  } else {
    console.log('every answer was 200 and held together');
  }
}

/** Wall-clock seconds of a command run to completion; its output is kept for checks. */
function timed(command: string, commandArgs: string[], timeoutSeconds: number): { seconds: number; status: number | null; stdout: string; stderr: string; timedOut: boolean } {
  const started = performance.now();
  const result = spawnSync(command, commandArgs, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, timeout: timeoutSeconds * 1000 });
  const seconds = (performance.now() - started) / 1000;
  const timedOut = (result.error as { code?: string } | undefined)?.code === 'ETIMEDOUT';
  return { seconds, status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '', timedOut };
}

/**
 * Exports the books as a ledger journal with `daybook export ledger` (from the sources), then
 * times `ledger balance` and `hledger balance` on it against Daybook's trial balance.
 */
function exportAndCompare(dbPath: string, businessId: string, journalPath: string, trialBalanceMs: number, ledgerRuns: number, hledgerTimeout: number, failures: string[]): void {
  const exported = timed(
    process.execPath,
    ['--import', 'tsx', 'bench/reports.ts', '--daybook-cli', '--db', dbPath, 'export', 'ledger', '--business', businessId, '--to', journalPath],
    1800,
  );
  if (exported.status !== 0) {
    failures.push(`daybook export ledger failed (${exported.status}): ${exported.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    return;
  }
  const journalBytes = statSync(journalPath).size;
  const postings = readFileSync(journalPath, 'utf8').split('\n').filter((text) => /^\s+\S/.test(text)).length;
  console.log(`daybook export ledger: ${journalPath}, ${(journalBytes / 1e6).toFixed(1)} MB, ${postings.toLocaleString('en-US')} postings, in ${exported.seconds.toFixed(1)} s`);

  const tools: { name: string; command: string; runs: number; timeout: number }[] = [
    { name: 'ledger', command: '/usr/bin/ledger', runs: ledgerRuns, timeout: 1800 },
    { name: 'hledger', command: '/usr/bin/hledger', runs: ledgerRuns, timeout: hledgerTimeout },
  ];
  for (const tool of tools) {
    if (!existsSync(tool.command)) {
      console.log(`${tool.name}: not installed at ${tool.command}`);
      continue;
    }
    const samples: number[] = [];
    for (let i = 0; i < tool.runs; i += 1) {
      const run = timed(tool.command, ['-f', journalPath, 'balance'], tool.timeout);
      if (run.timedOut) {
        console.log(`${tool.name} -f ${journalPath} balance: gave up after ${tool.timeout} s`);
        break;
      }
      if (run.status !== 0) {
        failures.push(`${tool.name} balance failed (${run.status}): ${run.stderr.trim().split('\n').slice(0, 3).join(' | ')}`);
        break;
      }
      // The last line of the report is the grand total: zero when the journal balances.
      const total = run.stdout.trim().split('\n').at(-1)?.trim();
      if (total !== '0') failures.push(`${tool.name} balance: the grand total is ${total}, not 0`);
      samples.push(run.seconds * 1000);
      // One run is enough to show a tool that takes minutes.
      if (run.seconds > 60) break;
    }
    if (samples.length === 0) continue;
    const { medianMs } = summarise(samples);
    console.log(
      `${tool.name} -f ${journalPath} balance: median ${(medianMs / 1000).toFixed(2)} s of ${samples.length} run(s) ` +
        `(${samples.map((s) => (s / 1000).toFixed(2)).join(', ')} s); ${Math.round(medianMs / trialBalanceMs).toLocaleString('en-US')} x Daybook's trial balance median (${trialBalanceMs.toFixed(2)} ms)`,
    );
  }
}
