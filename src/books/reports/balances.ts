import { addDays, daysBetween, FIRST_DATE, isIsoDate, monthEnd, monthStart, yearEnd, yearStart } from '../../dates.js';
import type { Db } from '../../db/connection.js';
import { all } from '../../db/statements.js';

/**
 * Account activity over any range of dates, read from the stored sums in `ledger_balances`
 * (kept by a trigger on journal_lines, migration 0007) rather than from every line. A range
 * is cut into at most five runs of whole years, whole months and single days, so a report
 * reads a few thousand stored rows however many lines the books hold; and where a range
 * starts or ends late in a month (or a year), it is cheaper still to read the whole month
 * (year) and take away the days (months) outside the range.
 */

/** How stored sums are grouped; the ledger_balances CHECK list holds the same names. */
export const BALANCE_SPANS = ['day', 'month', 'year'] as const;
export type BalanceSpan = (typeof BALANCE_SPANS)[number];

/** A report's view of the lines: the basis lines of its own and those of both. */
export type View = 'accrual' | 'cash';

/** Stored rows of one span whose period starts between `from` and `to`, inclusive. */
export interface SpanRun {
  span: BalanceSpan;
  from: string;
  to: string;
}

/**
 * The runs of whole years, whole months and days that cover `from` to `to` (inclusive)
 * exactly once each: leading days up to a month start, months up to a year start, whole
 * years, then the months and days of the end. At most five runs.
 */
export function spanRuns(from: string, to: string): SpanRun[] {
  if (!isIsoDate(from) || !isIsoDate(to)) throw new Error(`spanRuns: not dates: ${from}, ${to}`);
  if (from > to) throw new Error(`spanRuns: ${from} is after ${to}`);
  const runs: SpanRun[] = [];
  let cursor = from;
  for (;;) {
    let run: SpanRun;
    let end: string;
    if (cursor === yearStart(cursor) && yearEnd(cursor) <= to) {
      const lastYear = yearEnd(to) === to ? yearStart(to) : `${String(Number(to.slice(0, 4)) - 1).padStart(4, '0')}-01-01`;
      run = { span: 'year', from: cursor, to: lastYear };
      end = yearEnd(lastYear);
    } else if (cursor === monthStart(cursor) && monthEnd(cursor) <= to) {
      const lastWholeMonth = monthEnd(to) === to ? monthStart(to) : monthStart(addDays(monthStart(to), -1));
      const lastInYear = `${cursor.slice(0, 4)}-12-01`;
      const last = lastWholeMonth < lastInYear ? lastWholeMonth : lastInYear;
      run = { span: 'month', from: cursor, to: last };
      end = monthEnd(last);
    } else {
      end = monthEnd(cursor) < to ? monthEnd(cursor) : to;
      run = { span: 'day', from: cursor, to: end };
    }
    runs.push(run);
    if (end >= to) return runs;
    cursor = addDays(end, 1);
  }
}

/** Runs whose sums are added, and runs (outside the range) whose sums are taken away. */
export interface ReadPlan {
  add: SpanRun[];
  subtract: SpanRun[];
}

/**
 * Roughly how many stored rows one period of each span holds, relative to a day: a month or a
 * year holds a row per account and basis that moved in it, and most accounts move in every
 * month, so a month or a year costs about what two busy days do.
 */
const PERIOD_WEIGHT: Record<BalanceSpan, number> = { day: 1, month: 2, year: 2 };

function periodsOfRun(run: SpanRun): number {
  if (run.span === 'day') return daysBetween(run.from, run.to) + 1;
  const months = (date: string) => Number(date.slice(0, 4)) * 12 + Number(date.slice(5, 7));
  if (run.span === 'month') return months(run.to) - months(run.from) + 1;
  return Number(run.to.slice(0, 4)) - Number(run.from.slice(0, 4)) + 1;
}

/** The plan's estimated rows read, in busy days' worth. */
export function planCost(plan: ReadPlan): number {
  return [...plan.add, ...plan.subtract].reduce((cost, run) => cost + PERIOD_WEIGHT[run.span] * periodsOfRun(run), 0);
}

/**
 * The cheapest way to read `from` to `to` (inclusive): the range itself cut into spanRuns, or
 * the range widened to the start of its month or year and the end of its month or year, less
 * the days and months the widening added. Every day of the range is added exactly once and
 * every day outside it added and taken away alike, so the sums are exact either way.
 */
export function readPlan(from: string, to: string): ReadPlan {
  let best: { plan: ReadPlan; cost: number } | undefined;
  for (const start of new Set([from, monthStart(from), yearStart(from)])) {
    for (const end of new Set([to, monthEnd(to), yearEnd(to)])) {
      const plan: ReadPlan = {
        add: spanRuns(start, end),
        subtract: [...(start < from ? spanRuns(start, addDays(from, -1)) : []), ...(end > to ? spanRuns(addDays(to, 1), end) : [])],
      };
      const cost = planCost(plan);
      if (!best || cost < best.cost) best = { plan, cost };
    }
  }
  return best!.plan;
}

/** What was posted to one account over a range, in one view: both sides, never netted. */
export interface Activity {
  debitCents: bigint;
  creditCents: bigint;
}

/** Activity by account id; an account with no line in the range is absent. */
export type ActivityByAccount = Map<string, Activity>;

/**
 * Each account's debits and credits from `from` to `to` (inclusive) in the view: lines of
 * basis `both` and of the view's own basis.
 */
export function accountActivity(db: Db, businessId: string, view: View, from: string, to: string): ActivityByAccount {
  const plan = readPlan(from, to);
  const runs = [...plan.add, ...plan.subtract];
  const part = (sign: '' | '-') =>
    `SELECT ledger_account_id, ${sign}debit_cents AS debit_cents, ${sign}credit_cents AS credit_cents FROM ledger_balances
     WHERE business_id = ? AND span = ? AND period_start BETWEEN ? AND ? AND basis IN ('both', ?)`;
  const parts = [...plan.add.map(() => part('')), ...plan.subtract.map(() => part('-'))];
  // Lines are never zero, so an account whose sums come to nothing had no line in the range.
  const rows = all<{ account_id: string; debit: bigint; credit: bigint }>(
    db,
    `SELECT ledger_account_id AS account_id, sum(debit_cents) AS debit, sum(credit_cents) AS credit
     FROM (${parts.join(' UNION ALL ')}) GROUP BY ledger_account_id HAVING debit <> 0 OR credit <> 0`,
    ...runs.flatMap((run) => [businessId, run.span, run.from, run.to, view]),
  );
  return new Map(rows.map((row) => [row.account_id, { debitCents: row.debit, creditCents: row.credit }]));
}

/** Each account's activity from the first day the books can hold through `asOf`. */
export function activityThrough(db: Db, businessId: string, view: View, asOf: string): ActivityByAccount {
  return accountActivity(db, businessId, view, FIRST_DATE, asOf);
}

/** Debits minus credits. */
export function debitBalance(activity: Activity | undefined): bigint {
  return activity ? activity.debitCents - activity.creditCents : 0n;
}

/** Adds two activity maps account by account. */
export function addActivity(a: ActivityByAccount, b: ActivityByAccount): ActivityByAccount {
  const sum: ActivityByAccount = new Map(a);
  for (const [accountId, activity] of b) {
    const other = sum.get(accountId);
    sum.set(accountId, other ? { debitCents: other.debitCents + activity.debitCents, creditCents: other.creditCents + activity.creditCents } : activity);
  }
  return sum;
}
