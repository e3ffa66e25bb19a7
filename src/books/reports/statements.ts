import { addDays, FIRST_DATE, previousMonth, yearStart } from '../../dates.js';
import type { Db } from '../../db/connection.js';
import type { Basis, Business } from '../businesses.js';
import { type AccountType, type ChartNode, chartTree, systemAccountId } from '../chart.js';
import { type ActivityByAccount, accountActivity, activityThrough, addActivity, debitBalance } from './balances.js';

/**
 * The three statements, each in the business's own basis and in USD cents: profit and loss
 * over a period (with the month before it), the balance sheet and the trial balance as of a
 * date. Rows follow the chart: a heading before its children (its amount their sum, marked
 * isTotal), leaves after it, then the statement's total rows. The fiscal year is the calendar
 * year. Pure of HTTP; the invariants (debits = credits, assets = liabilities + equity) are
 * checked on every statement built, and a failure is a bug that must not reach a reader.
 */

export type RowType = AccountType | 'total';

export interface StatementRow {
  account: string;
  /** The ledger account, or null for a row the statement computes (totals, current-year earnings). */
  accountId: string | null;
  type: RowType;
  depth: number;
  isTotal: boolean;
  amountCents: bigint;
}

export interface ProfitAndLossRow extends StatementRow {
  priorCents: bigint;
}

export interface IncomeTotals {
  revenueCents: bigint;
  expensesCents: bigint;
  netIncomeCents: bigint;
}

export interface ProfitAndLoss {
  entity: string;
  basis: Basis;
  period: { start: string; end: string };
  /** The calendar month before the month of period.start (null only before year 0000's January). */
  priorPeriod: { start: string; end: string } | null;
  rows: ProfitAndLossRow[];
  totals: IncomeTotals;
  prior: IncomeTotals;
}

export interface BalanceSheet {
  entity: string;
  basis: Basis;
  asOf: string;
  rows: StatementRow[];
  totals: { assetsCents: bigint; liabilitiesCents: bigint; equityCents: bigint };
}

export interface TrialBalanceRow {
  account: string;
  accountId: string;
  debitCents: bigint;
  creditCents: bigint;
}

export interface TrialBalance {
  entity: string;
  basis: Basis;
  asOf: string;
  rows: TrialBalanceRow[];
  totals: { debitCents: bigint; creditCents: bigint };
}

/** Assets and expenses grow with debits; liabilities, equity and revenue with credits. */
const DEBIT_NORMAL: ReadonlySet<AccountType> = new Set(['asset', 'expense']);

/** An account's balance signed the way its type reads: positive is the usual side. */
function naturalBalance(type: AccountType, activity: ActivityByAccount, accountId: string): bigint {
  const debit = debitBalance(activity.get(accountId));
  return DEBIT_NORMAL.has(type) ? debit : -debit;
}

/** Revenue minus expenses of the activity, and each side. */
export function incomeOf(tree: readonly ChartNode[], activity: ActivityByAccount): IncomeTotals {
  let revenueCents = 0n;
  let expensesCents = 0n;
  for (const node of tree) {
    if (node.isHeading) continue;
    if (node.type === 'revenue') revenueCents += naturalBalance('revenue', activity, node.id);
    if (node.type === 'expense') expensesCents += naturalBalance('expense', activity, node.id);
  }
  return { revenueCents, expensesCents, netIncomeCents: revenueCents - expensesCents };
}

interface Figures {
  /** Per figure (amount, prior, ...), the value of a leaf account; headings sum their leaves. */
  values: (node: ChartNode) => bigint[];
  /** Whether a leaf shows (headings show when any leaf under them does). */
  shows: (node: ChartNode) => boolean;
}

interface SectionRow {
  node: ChartNode;
  values: bigint[];
}

/**
 * The rows of one type's part of the chart, in chart order: every account that shows, with
 * its figures; a heading's figures are the sum over the leaves under it that show.
 */
function sectionRows(tree: readonly ChartNode[], type: AccountType, figures: Figures): SectionRow[] {
  const nodes = tree.filter((node) => node.type === type);
  const children = new Map<string | null, ChartNode[]>();
  for (const node of nodes) children.set(node.parentId, [...(children.get(node.parentId) ?? []), node]);
  const ids = new Set(nodes.map((node) => node.id));
  const collect = (node: ChartNode): { rows: SectionRow[]; values: bigint[] | null } => {
    if (!node.isHeading) {
      return figures.shows(node) ? { rows: [{ node, values: figures.values(node) }], values: figures.values(node) } : { rows: [], values: null };
    }
    const rows: SectionRow[] = [];
    let sum: bigint[] | null = null;
    for (const child of children.get(node.id) ?? []) {
      const collected = collect(child);
      if (collected.values === null) continue;
      rows.push(...collected.rows);
      sum = sum === null ? [...collected.values] : sum.map((value, index) => value + collected.values![index]!);
    }
    return sum === null ? { rows: [], values: null } : { rows: [{ node, values: sum }, ...rows], values: sum };
  };
  const roots = nodes.filter((node) => node.parentId === null || !ids.has(node.parentId));
  return roots.flatMap((root) => collect(root).rows);
}

function accountRow(row: SectionRow): StatementRow {
  return {
    account: row.node.name,
    accountId: row.node.id,
    type: row.node.type,
    depth: row.node.depth,
    isTotal: row.node.isHeading,
    amountCents: row.values[0]!,
  };
}

function totalRow(account: string, amountCents: bigint): StatementRow {
  return { account, accountId: null, type: 'total', depth: 0, isTotal: true, amountCents };
}

function hasActivity(activity: ActivityByAccount, accountId: string): boolean {
  const found = activity.get(accountId);
  return found !== undefined && (found.debitCents > 0n || found.creditCents > 0n);
}

/**
 * Profit and loss from `start` to `end` (inclusive): revenue then expenses, each account with
 * its activity in the period and in `prior` (the calendar month before start's month); an
 * account with no line in either is left out. Then Total Revenue, Total Expenses, Net Income.
 */
export function profitAndLoss(db: Db, business: Business, start: string, end: string): ProfitAndLoss {
  if (start > end) throw new Error(`profitAndLoss: ${start} is after ${end}`);
  const tree = chartTree(db, business.id);
  const current = accountActivity(db, business.id, business.basis, start, end);
  const priorPeriod = previousMonth(start);
  const before: ActivityByAccount = priorPeriod ? accountActivity(db, business.id, business.basis, priorPeriod.start, priorPeriod.end) : new Map();
  const figures: Figures = {
    values: (node) => [naturalBalance(node.type, current, node.id), naturalBalance(node.type, before, node.id)],
    shows: (node) => hasActivity(current, node.id) || hasActivity(before, node.id),
  };
  const totals = incomeOf(tree, current);
  const prior = incomeOf(tree, before);
  const section = (type: 'revenue' | 'expense'): ProfitAndLossRow[] =>
    sectionRows(tree, type, figures).map((row) => ({ ...accountRow(row), priorCents: row.values[1]! }));
  const rows: ProfitAndLossRow[] = [
    ...section('revenue'),
    { ...totalRow('Total Revenue', totals.revenueCents), priorCents: prior.revenueCents },
    ...section('expense'),
    { ...totalRow('Total Expenses', totals.expensesCents), priorCents: prior.expensesCents },
    { ...totalRow('Net Income', totals.netIncomeCents), priorCents: prior.netIncomeCents },
  ];
  return { entity: business.name, basis: business.basis, period: { start, end }, priorPeriod, rows, totals, prior };
}

/** The name of the computed equity row holding this year's profit or loss so far. */
export const CURRENT_YEAR_EARNINGS = 'Current Year Earnings';

/**
 * The balance sheet as of `asOf`: assets, liabilities and equity accounts with a balance.
 * Earnings stay in equity without closing entries: the retained earnings account shows its
 * own balance plus the net income of every earlier year, and a computed Current Year Earnings
 * row (after it) the net income from January 1 through asOf; both always show. So assets =
 * liabilities + equity, always.
 */
export function balanceSheet(db: Db, business: Business, asOf: string): BalanceSheet {
  const tree = chartTree(db, business.id);
  const thisYear = yearStart(asOf);
  const earlier: ActivityByAccount = thisYear === FIRST_DATE ? new Map() : activityThrough(db, business.id, business.basis, addDays(thisYear, -1));
  const currentYear = accountActivity(db, business.id, business.basis, thisYear, asOf);
  const all = addActivity(earlier, currentYear);
  const retainedId = systemAccountId(db, business.id, 'retained_earnings');
  const earlierEarnings = incomeOf(tree, earlier).netIncomeCents;
  const currentEarnings = incomeOf(tree, currentYear).netIncomeCents;

  const balanceOf = (node: ChartNode): bigint => naturalBalance(node.type, all, node.id) + (node.id === retainedId ? earlierEarnings : 0n);
  const figures: Figures = {
    values: (node) => [balanceOf(node)],
    shows: (node) => node.id === retainedId || balanceOf(node) !== 0n,
  };
  const section = (type: 'asset' | 'liability' | 'equity'): StatementRow[] => {
    const rows = sectionRows(tree, type, figures).map(accountRow);
    if (type !== 'equity') return rows;
    // Current-year earnings sit beside retained earnings, and count in every heading above it.
    const retained = rows.findIndex((row) => row.accountId === retainedId);
    const ancestors = new Set(ancestorIds(tree, retainedId));
    const withEarnings = rows.map((row) => (row.accountId !== null && ancestors.has(row.accountId) ? { ...row, amountCents: row.amountCents + currentEarnings } : row));
    const earningsRow: StatementRow = {
      account: CURRENT_YEAR_EARNINGS,
      accountId: null,
      type: 'equity',
      depth: rows[retained]!.depth,
      isTotal: false,
      amountCents: currentEarnings,
    };
    return [...withEarnings.slice(0, retained + 1), earningsRow, ...withEarnings.slice(retained + 1)];
  };
  const sumOf = (rows: StatementRow[]) => rows.reduce((sum, row) => (row.isTotal ? sum : sum + row.amountCents), 0n);
  const assets = section('asset');
  const liabilities = section('liability');
  const equity = section('equity');
  const totals = { assetsCents: sumOf(assets), liabilitiesCents: sumOf(liabilities), equityCents: sumOf(equity) };
  if (totals.assetsCents !== totals.liabilitiesCents + totals.equityCents) {
    throw new Error(
      `balance sheet of ${business.id} as of ${asOf} does not balance: assets ${totals.assetsCents}, liabilities ${totals.liabilitiesCents}, equity ${totals.equityCents}`,
    );
  }
  const rows: StatementRow[] = [
    ...assets,
    totalRow('Total Assets', totals.assetsCents),
    ...liabilities,
    totalRow('Total Liabilities', totals.liabilitiesCents),
    ...equity,
    totalRow('Total Equity', totals.equityCents),
    totalRow('Total Liabilities and Equity', totals.liabilitiesCents + totals.equityCents),
  ];
  return { entity: business.name, basis: business.basis, asOf, rows, totals };
}

/** The ids of an account's headings, nearest first. */
function ancestorIds(tree: readonly ChartNode[], accountId: string): string[] {
  const byId = new Map(tree.map((node) => [node.id, node]));
  const ids: string[] = [];
  let parent = byId.get(accountId)?.parentId ?? null;
  while (parent !== null && !ids.includes(parent)) {
    ids.push(parent);
    parent = byId.get(parent)?.parentId ?? null;
  }
  return ids;
}

/**
 * The trial balance as of `asOf`: every account with a balance from the first line through
 * asOf (revenue and expenses included: nothing is closed), in chart order, on its debit or its
 * credit side. Debits equal credits.
 */
export function trialBalance(db: Db, business: Business, asOf: string): TrialBalance {
  const tree = chartTree(db, business.id);
  const activity = activityThrough(db, business.id, business.basis, asOf);
  const rows: TrialBalanceRow[] = [];
  for (const node of tree) {
    const net = debitBalance(activity.get(node.id));
    if (net === 0n) continue;
    rows.push({ account: node.name, accountId: node.id, debitCents: net > 0n ? net : 0n, creditCents: net < 0n ? -net : 0n });
  }
  const totals = rows.reduce((sum, row) => ({ debitCents: sum.debitCents + row.debitCents, creditCents: sum.creditCents + row.creditCents }), {
    debitCents: 0n,
    creditCents: 0n,
  });
  if (totals.debitCents !== totals.creditCents) {
    throw new Error(`trial balance of ${business.id} as of ${asOf} does not balance: debits ${totals.debitCents}, credits ${totals.creditCents}`);
  }
  return { entity: business.name, basis: business.basis, asOf, rows, totals };
}
