import createClient from 'openapi-fetch';
// Generated from the served /openapi/v1.json by test/client/walk.test.ts before this file is
// type-checked and run; it is never committed (see .gitignore).
import type { paths } from './generated/daybook-api.js';
import type { DayOptions, DayResult } from './day-types.js';

/**
 * A realistic day at a small firm, as an accountant's tool would spend it, written against the
 * types generated from the published document: every path, parameter, body and answer below
 * is checked by the TypeScript compiler against what Daybook says it serves. docs/client.md
 * shows the same day with curl and with this client.
 */

/** Stops the walk on any answer but the one expected, with Daybook's own error text. */
function expectOk<T>(step: string, answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) throw new Error(`${step}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
  return answer.data;
}

export async function walkADay(options: DayOptions): Promise<DayResult> {
  const client = createClient<paths>({ baseUrl: options.baseUrl, headers: { Authorization: `Bearer ${options.key}` } });
  const writeKey = (name: string) => ({ 'Idempotency-Key': `${options.today}-${name}` });

  // Morning: which books, and which accounts to post to.
  const { businesses } = expectOk('list businesses', await client.GET('/businesses'));
  const business = businesses[0]!;
  const entityId = business.id;
  const { accounts: revenue } = expectOk('revenue accounts', await client.GET('/accounts', { params: { query: { entityId, type: 'revenue' } } }));
  const { accounts: expense } = expectOk('expense accounts', await client.GET('/accounts', { params: { query: { entityId, type: 'expense' } } }));
  const sales = revenue.find((account) => account.name === 'Sales') ?? revenue[0]!;
  const software = expense.find((account) => account.name === 'Software and Subscriptions') ?? expense[0]!;

  // A new customer in Lyon, billed in euros.
  const customer = expectOk(
    'create customer',
    await client.POST('/customers', { params: { header: writeKey('customer') }, body: { name: 'Atelier Rhône', email: 'compta@atelier-rhone.example', currency: 'EUR', paymentTermsDays: 30 } }),
  );

  // Draft, send and get paid for an invoice in EUR.
  const draft = expectOk(
    'draft invoice',
    await client.POST('/invoices', {
      params: { header: writeKey('invoice') },
      body: {
        entityId,
        customerId: customer.id,
        currency: 'EUR',
        issueDate: options.today,
        taxRatePercent: '20',
        lines: [
          { description: 'Brand workshop, two days', quantity: '2', unitPriceCents: '95000', accountId: sales.id },
          { description: 'Travel, Paris to Lyon', quantity: '1', unitPriceCents: '18450', accountId: sales.id },
        ],
      },
    }),
  );
  const path = { id: draft.invoiceId };
  expectOk('send invoice', await client.POST('/invoices/{id}/send', { params: { path, header: writeKey('send') } }));
  const sent = expectOk('read invoice', await client.GET('/invoices/{id}', { params: { path } }));
  expectOk(
    'record payment',
    await client.POST('/invoices/{id}/payments', { params: { path, header: writeKey('payment') }, body: { amountCents: '100000', method: 'wire', paidAt: options.today, memo: 'SEPA transfer, first half' } }),
  );
  const paid = expectOk('read invoice again', await client.GET('/invoices/{id}', { params: { path } }));
  if (paid.paid.cents !== '100000' || sent.total.currency !== 'EUR') throw new Error('the payment did not land on the EUR invoice');

  // A receipt comes in.
  const expenseCreated = expectOk(
    'record expense',
    await client.POST('/expenses', {
      params: { header: writeKey('expense') },
      body: { entityId, date: options.today, amountCents: '4900', vendorName: 'Hosting Co', accountId: software.id, memo: 'November hosting' },
    }),
  );

  // The bank statement arrives; accept what the categoriser proposed.
  await options.importStatement(entityId);
  const queue = expectOk('review queue', await client.GET('/review-queue', { params: { query: { entityId, limit: 100 } } }));
  let acceptedItems = 0;
  for (const item of [...queue.highConfidence, ...queue.needsReview]) {
    const accountId = item.proposedAccountId ?? software.id;
    expectOk('accept item', await client.POST('/review-queue/{id}/accept', { params: { path: { id: item.id }, header: writeKey(`accept-${item.id}`) }, body: { accountId } }));
    acceptedItems += 1;
  }

  // What needs attention, and how the books stand.
  const today = expectOk('today', await client.GET('/today', { params: { query: { entityId } } }));
  const periodStart = `${options.today.slice(0, 4)}-01-01`;
  const profit = expectOk('profit and loss', await client.GET('/reports/profit-and-loss', { params: { query: { entityId, periodStart, periodEnd: options.today } } }));
  const balance = expectOk('balance sheet', await client.GET('/reports/balance-sheet', { params: { query: { entityId, asOf: options.today } } }));
  const trial = expectOk('trial balance', await client.GET('/reports/trial-balance', { params: { query: { entityId, asOf: options.today } } }));
  const receivable = expectOk('AR aging', await client.GET('/reports/ar-aging', { params: { query: { entityId } } }));
  const payable = expectOk('AP aging', await client.GET('/reports/ap-aging', { params: { query: { entityId } } }));
  const { transactions } = expectOk('transactions', await client.GET('/transactions', { params: { query: { entityId, dateFrom: options.today, limit: 50 } } }));
  expectOk('one transaction', await client.GET('/transactions/{id}', { params: { path: { id: transactions[0]!.id } } }));
  expectOk('invoices', await client.GET('/invoices', { params: { query: { entityId, status: 'partially_paid' } } }));
  expectOk('customers', await client.GET('/customers', { params: { query: { search: 'atelier%' } } }));
  expectOk('vendors', await client.GET('/vendors', { params: { query: { search: 'hosting' } } }));

  return {
    businessName: business.name,
    invoiceNumber: draft.invoiceNumber,
    invoiceStatus: paid.status,
    balanceDueCents: paid.balance.cents,
    expenseId: expenseCreated.expenseId,
    expenseTransactionId: expenseCreated.transactionId,
    acceptedItems,
    todaySignals: today.signals.length,
    netIncomeCents: profit.totals.netIncome.cents,
    trialBalanceDebitsCents: trial.totals.debit.cents,
    trialBalanceCreditsCents: trial.totals.credit.cents,
    assetsCents: balance.totals.assets.cents,
    liabilitiesCents: balance.totals.liabilities.cents,
    equityCents: balance.totals.equity.cents,
    receivablesCurrentCents: receivable.buckets.current.cents,
    payablesCurrentCents: payable.buckets.current.cents,
    transactionsSeen: transactions.length,
  };
}
