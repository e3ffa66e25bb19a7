import { Type } from '@sinclair/typebox';
import { type Aging, AGING_BUCKETS, payablesAging, receivablesAging } from '../../books/reports/aging.js';
import { balanceSheet, type IncomeTotals, profitAndLoss, type StatementRow, trialBalance } from '../../books/reports/statements.js';
import { todayUtc } from '../../clock.js';
import { validationFailed } from '../../errors.js';
import { defineRead } from '../../http/operation.js';
import { usd } from '../../money.js';
import { EntityId, IsoDate, Money, SignedMoney, Strict, StringEnum, Uuid } from '../schemas/common.js';

/**
 * The five reports (spec "Report rows", "Report responses"): statements in the business's own
 * basis, aging as of a date; every figure in US dollars. Thin: the books build each report.
 */

const Basis = StringEnum(['cash', 'accrual'] as const, { description: "the business's own accounting basis" });

const IncomeTotalsSchema = Strict({ revenue: SignedMoney, expenses: SignedMoney, netIncome: SignedMoney }, { title: 'IncomeTotals' });

const ProfitAndLossRowSchema = Strict(
  {
    account: Type.String(),
    type: StringEnum(['revenue', 'expense', 'total'] as const),
    depth: Type.Integer({ minimum: 0 }),
    isTotal: Type.Boolean(),
    amount: SignedMoney,
    prior: SignedMoney,
  },
  { title: 'ProfitAndLossRow' },
);

const BalanceSheetRowSchema = Strict(
  {
    account: Type.String(),
    type: StringEnum(['asset', 'liability', 'equity', 'total'] as const),
    depth: Type.Integer({ minimum: 0 }),
    isTotal: Type.Boolean(),
    amount: SignedMoney,
  },
  { title: 'BalanceSheetRow' },
);

const TrialBalanceRowSchema = Strict({ account: Type.String(), debit: Money, credit: Money }, { title: 'TrialBalanceRow' });

const AgingItemSchema = Strict(
  {
    id: Uuid,
    customerOrVendor: Type.String(),
    number: Type.String(),
    dueDate: IsoDate,
    daysOverdue: Type.Integer({ description: 'negative when not yet due' }),
    balance: Money,
  },
  { title: 'AgingItem' },
);

const AgingSchema = Strict(
  {
    buckets: Strict(Object.fromEntries(AGING_BUCKETS.map((bucket) => [bucket, Money])) as Record<(typeof AGING_BUCKETS)[number], typeof Money>),
    grandTotal: Money,
    items: Type.Array(AgingItemSchema, { maxItems: 25 }),
  },
  { title: 'Aging' },
);

const AsOfQuery = Strict({ entityId: Type.Optional(EntityId), asOf: IsoDate });
const OptionalAsOfQuery = Strict({ entityId: Type.Optional(EntityId), asOf: Type.Optional(IsoDate) });

function incomeTotals(totals: IncomeTotals) {
  return { revenue: usd(totals.revenueCents), expenses: usd(totals.expensesCents), netIncome: usd(totals.netIncomeCents) };
}

function statementRow(row: StatementRow) {
  return { account: row.account, depth: row.depth, isTotal: row.isTotal, amount: usd(row.amountCents) };
}

function agingBody(aging: Aging) {
  return {
    buckets: Object.fromEntries(AGING_BUCKETS.map((bucket) => [bucket, usd(aging.buckets[bucket])])) as Record<(typeof AGING_BUCKETS)[number], ReturnType<typeof usd>>,
    grandTotal: usd(aging.grandTotalCents),
    items: aging.items.map((item) => ({
      id: item.id,
      customerOrVendor: item.customerOrVendor,
      number: item.number,
      dueDate: item.dueDate,
      daysOverdue: item.daysOverdue,
      balance: usd(item.balanceCents),
    })),
  };
}

export const profitAndLossReport = defineRead({
  id: 'reports.profitAndLoss',
  method: 'GET',
  path: '/reports/profit-and-loss',
  permission: 'reports:read',
  summary: 'Profit and loss over a period, with the month before it',
  description:
    "Revenue then expenses in the chart's order, over periodStart to periodEnd (both inclusive), in the business's basis and in US dollars. `prior` is the calendar month before the month of periodStart, whatever the range. Accounts with no activity in either period are left out. A heading's row (isTotal) sums the rows under it; Total Revenue, Total Expenses and Net Income close the report. A loss is negative.",
  params: Strict({}),
  query: Strict({ entityId: Type.Optional(EntityId), periodStart: IsoDate, periodEnd: IsoDate }),
  body: Strict({}),
  responses: {
    200: {
      description: 'The profit and loss statement',
      schema: Strict(
        {
          entity: Type.String(),
          basis: Basis,
          period: Strict({ start: IsoDate, end: IsoDate }),
          rows: Type.Array(ProfitAndLossRowSchema),
          totals: IncomeTotalsSchema,
          prior: IncomeTotalsSchema,
        },
        { title: 'ProfitAndLoss' },
      ),
    },
  },
  errors: ['entity_not_allowed', 'not_found'],
  scope: ({ query }) => ({ business: query.entityId }),
  handle({ services, query, reached }) {
    if (query.periodEnd < query.periodStart) throw validationFailed('periodEnd', `must not be before periodStart (${query.periodStart})`);
    const business = reached.business!;
    const report = profitAndLoss(services.db, business, query.periodStart, query.periodEnd);
    return {
      status: 200,
      body: {
        entity: report.entity,
        basis: report.basis,
        period: report.period,
        rows: report.rows.map((row) => ({ ...statementRow(row), type: row.type as 'revenue' | 'expense' | 'total', prior: usd(row.priorCents) })),
        totals: incomeTotals(report.totals),
        prior: incomeTotals(report.prior),
      },
    };
  },
});

export const balanceSheetReport = defineRead({
  id: 'reports.balanceSheet',
  method: 'GET',
  path: '/reports/balance-sheet',
  permission: 'reports:read',
  summary: 'Balance sheet as of a date',
  description:
    "Assets, liabilities and equity with a balance as of asOf, in the chart's order, in the business's basis and in US dollars. Equity holds Retained Earnings (with the net income of every earlier calendar year) and Current Year Earnings (January 1 through asOf), so assets = liabilities + equity.",
  params: Strict({}),
  query: AsOfQuery,
  body: Strict({}),
  responses: {
    200: {
      description: 'The balance sheet',
      schema: Strict(
        {
          entity: Type.String(),
          basis: Basis,
          asOf: IsoDate,
          rows: Type.Array(BalanceSheetRowSchema),
          totals: Strict({ assets: SignedMoney, liabilities: SignedMoney, equity: SignedMoney }),
        },
        { title: 'BalanceSheet' },
      ),
    },
  },
  errors: ['entity_not_allowed', 'not_found'],
  scope: ({ query }) => ({ business: query.entityId }),
  handle({ services, query, reached }) {
    const business = reached.business!;
    const report = balanceSheet(services.db, business, query.asOf);
    return {
      status: 200,
      body: {
        entity: report.entity,
        basis: report.basis,
        asOf: report.asOf,
        rows: report.rows.map((row) => ({ ...statementRow(row), type: row.type as 'asset' | 'liability' | 'equity' | 'total' })),
        totals: { assets: usd(report.totals.assetsCents), liabilities: usd(report.totals.liabilitiesCents), equity: usd(report.totals.equityCents) },
      },
    };
  },
});

export const trialBalanceReport = defineRead({
  id: 'reports.trialBalance',
  method: 'GET',
  path: '/reports/trial-balance',
  permission: 'reports:read',
  summary: 'Trial balance as of a date',
  description:
    "Every account with a balance from the first posting through asOf (revenue and expenses included; nothing is closed), on its debit or credit side, in the chart's order, in the business's basis and in US dollars. Total debits equal total credits.",
  params: Strict({}),
  query: AsOfQuery,
  body: Strict({}),
  responses: {
    200: {
      description: 'The trial balance',
      schema: Strict(
        { entity: Type.String(), basis: Basis, asOf: IsoDate, rows: Type.Array(TrialBalanceRowSchema), totals: Strict({ debit: Money, credit: Money }) },
        { title: 'TrialBalance' },
      ),
    },
  },
  errors: ['entity_not_allowed', 'not_found'],
  scope: ({ query }) => ({ business: query.entityId }),
  handle({ services, query, reached }) {
    const business = reached.business!;
    const report = trialBalance(services.db, business, query.asOf);
    return {
      status: 200,
      body: {
        entity: report.entity,
        basis: report.basis,
        asOf: report.asOf,
        rows: report.rows.map((row) => ({ account: row.account, debit: usd(row.debitCents), credit: usd(row.creditCents) })),
        totals: { debit: usd(report.totals.debitCents), credit: usd(report.totals.creditCents) },
      },
    };
  },
});

/** The two agings differ only in what they age; `age` is the books function that does it. */
function defineAgingReport(spec: {
  id: 'reports.arAging' | 'reports.apAging';
  path: string;
  summary: string;
  description: string;
  age: typeof receivablesAging;
}) {
  return defineRead({
    id: spec.id,
    method: 'GET',
    path: spec.path,
    permission: 'reports:read',
    summary: spec.summary,
    description: spec.description,
    params: Strict({}),
    query: OptionalAsOfQuery,
    body: Strict({}),
    responses: { 200: { description: spec.summary, schema: AgingSchema } },
    errors: ['entity_not_allowed', 'not_found'],
    scope: ({ query }) => ({ business: query.entityId }),
    handle({ services, query, reached }) {
      const business = reached.business!;
      return { status: 200, body: agingBody(spec.age(services.db, business.id, query.asOf ?? todayUtc(services.clock))) };
    },
  });
}

export const receivablesAgingReport = defineAgingReport({
  id: 'reports.arAging',
  path: '/reports/ar-aging',
  summary: 'Receivables aged as of a date',
  description:
    'Every invoice still owed as of asOf (default: today, UTC), bucketed by days past due: current (not yet overdue), 1 to 30, 31 to 60, 61 to 90, over 90. `items` lists the 25 largest balances. In US dollars; a foreign invoice at its issue-date rate.',
  age: receivablesAging,
});

export const payablesAgingReport = defineAgingReport({
  id: 'reports.apAging',
  path: '/reports/ap-aging',
  summary: 'Payables aged as of a date',
  description:
    'Every bill (daybook bill create) still owed as of asOf (default: today, UTC), bucketed like the receivables aging; `items` lists the 25 largest balances, `customerOrVendor` naming the vendor. In US dollars.',
  age: payablesAging,
});
