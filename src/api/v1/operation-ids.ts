/** The 22 operation ids of the published v1 surface (spec, Versioning rule 3). */
export const OPERATION_IDS = [
  'businesses.list',
  'accounts.list',
  'customers.list',
  'customers.create',
  'vendors.list',
  'transactions.list',
  'transactions.get',
  'expenses.create',
  'invoices.list',
  'invoices.get',
  'invoices.create',
  'invoices.send',
  'invoices.remind',
  'invoices.recordPayment',
  'review.list',
  'review.accept',
  'today.get',
  'reports.profitAndLoss',
  'reports.balanceSheet',
  'reports.trialBalance',
  'reports.arAging',
  'reports.apAging',
] as const;

export type OperationId = (typeof OPERATION_IDS)[number];
