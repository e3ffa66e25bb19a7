import type { OperationId } from '../v1/operation-ids.js';
import { type Currency, money } from '../../money.js';

/**
 * Examples for every operation of the published document: the requests and answers the guides
 * show (docs/api.md and docs/quickstart.md, on the demo books of `npm run demo -- --clock
 * 2026-11-20`), so generated clients, mock servers and property-based testers start from real
 * requests. Where a guide cuts an id short with `…` or leaves fields out, the example writes them
 * in full, since an example must fit its schema. test/api/openapi.test.ts holds every example to
 * the schema beside it, and test/api/openapi-examples.test.ts sends every example request to a
 * running server.
 *
 * A request example and the answer it gets share a name: `requests.harborBistro` is answered by
 * `responses[201].harborBistro`.
 */

export interface Example {
  summary: string;
  value: unknown;
}

export interface OperationExamples {
  /** The path and query parameters of a typical request. */
  parameters?: Readonly<Record<string, string | number | boolean>>;
  /** Request bodies, by name. */
  requests?: Readonly<Record<string, Example>>;
  /** Answers by status, then by name. */
  responses: Readonly<Partial<Record<number, Readonly<Record<string, Example>>>>>;
}

const $ = (cents: bigint, currency: Currency = 'USD') => money(cents, currency);

/** The demo books of docs/api.md. */
const LAKESIDE_BAKERY = 'dcb9fcbd-3f24-44dd-b58f-0848b0876435';
const SALES = '76233abb-0f4e-4c43-9d0a-3b8f1e6c2a41';
const MEALS = '7d1e4a52-9c3b-4f60-8e27-1a5b9c0d3f84';
const OFFICE_SUPPLIES = '63ee0686-9a2c-4b7e-8d15-3f6e0a9c4b28';
const HARBOR_BISTRO = '56c249ce-1af7-4b02-ad95-1b445d7f7ccc';
const ANCHOR_CAFE_DOWNTOWN = 'de4b86f1-bc12-48e8-ad0f-a2f97ec338e7';
const FLOUR_PURCHASE = '09d25487-0522-4e97-908a-adf7108d91de';
const INV_0004 = 'df3d9205-2726-4a0d-ae68-1e82af05b00a';
const INV_0009 = '00641801-efbe-40ee-a833-06d0b66b5512';
const REVIEW_ITEM = 'a1b03fbf-0edb-45dc-8dd1-f4b190df5238';

/** The demo books of docs/quickstart.md (another run of the demo, so other ids). */
const QUICKSTART_BAKERY = '98a49a1b-5869-4ef4-b399-f2801dbfe884';
const QUICKSTART_SALES = '08d0d054-f8e5-4ca9-bbfa-57bb9c955bc3';
const NORTHGATE_BOOKS = '259f2317-582b-42cd-9b15-579ffd18836b';

const INV_0009_DETAIL = {
  id: INV_0009,
  number: 'INV-0009',
  status: 'sent',
  issueDate: '2026-11-20',
  dueDate: '2026-12-04',
  currency: 'EUR',
  customer: { id: HARBOR_BISTRO, name: 'Harbor Bistro' },
  terms: 'Net 14',
  subtotal: $(100000n, 'EUR'),
  tax: $(20000n, 'EUR'),
  total: $(120000n, 'EUR'),
  paid: $(0n, 'EUR'),
  balance: $(120000n, 'EUR'),
  memo: 'Thank you for your order',
  lines: [{ description: 'Pastry trays', quantity: '4', unitPrice: $(25000n, 'EUR'), amount: $(100000n, 'EUR'), account: 'Sales' }],
  payments: [],
  payUrl: 'http://localhost:3000/pay/sdQmjRr362OXGPcLGBfYJ3LvZ30t1aYp1K6P6kUwPvM',
};

const error = (code: string, message: string, requestId: string) => ({ error: { code, message, requestId } });

export const OPERATION_EXAMPLES: Readonly<Record<OperationId, OperationExamples>> = {
  'businesses.list': {
    responses: {
      200: {
        twoBusinesses: {
          summary: 'An account with two businesses',
          value: {
            accountName: 'Harbor & Pine Bookkeeping',
            businesses: [
              { id: LAKESIDE_BAKERY, name: 'Lakeside Bakery' },
              { id: 'c4faee2a-9549-4776-8020-785c8c23d3be', name: 'Ridgeline Landscaping' },
            ],
          },
        },
      },
    },
  },

  'accounts.list': {
    parameters: { entityId: LAKESIDE_BAKERY, type: 'revenue' },
    responses: {
      200: {
        revenueAccounts: {
          summary: 'The revenue accounts of a business',
          value: {
            accounts: [
              { id: SALES, code: '4100', name: 'Sales', type: 'revenue', path: 'Revenue > Sales' },
              { id: '090a6c95-5d2b-4a8e-b7c1-6e3f2d9a0b17', code: '4200', name: 'Service Revenue', type: 'revenue', path: 'Revenue > Service Revenue' },
              { id: '2e8d0aa9-8c47-4f1d-a6b3-0d5e9c7b1f28', code: '4900', name: 'Other Income', type: 'revenue', path: 'Revenue > Other Income' },
            ],
          },
        },
      },
    },
  },

  'customers.list': {
    parameters: { search: 'caf%', limit: 2 },
    responses: {
      200: {
        firstPage: {
          summary: 'The first page of customers whose name holds "caf"',
          value: {
            customers: [
              { id: ANCHOR_CAFE_DOWNTOWN, name: 'Anchor Cafe Downtown', email: 'accounts@anchorcafe-downtown.example', currency: 'USD', paymentTermsDays: 30 },
              { id: 'eb1b38c0-7d24-4e6a-9c3f-5b8a1d2e4f60', name: 'Anchor Cafe Harbor', email: 'accounts@anchorcafe-harbor.example', currency: 'USD', paymentTermsDays: 30 },
            ],
            nextCursor: 'eyJ2IjoxLCJsaXN0IjoiY3VzdG9tZXJzIi',
          },
        },
      },
    },
  },

  'customers.create': {
    requests: {
      harborBistro: {
        summary: 'A new customer billed in euros',
        value: { name: 'Harbor Bistro', email: 'accounts@harborbistro.example', currency: 'EUR', paymentTermsDays: 14, city: 'Portland' },
      },
      northgateBooks: {
        summary: 'The quickstart’s customer',
        value: { name: 'Northgate Books', email: 'accounts@northgate.example', paymentTermsDays: 30 },
      },
      existingName: {
        summary: 'A name the account already has: the existing customer, unchanged',
        value: { name: 'Anchor Cafe Downtown', email: 'ap@anchor.example', currency: 'USD', paymentTermsDays: 30 },
      },
    },
    responses: {
      201: {
        harborBistro: { summary: 'Created', value: { id: HARBOR_BISTRO, created: true } },
        northgateBooks: { summary: 'Created', value: { id: NORTHGATE_BOOKS, created: true } },
      },
      200: {
        existingName: { summary: 'The existing customer', value: { id: ANCHOR_CAFE_DOWNTOWN, created: false } },
      },
      422: {
        termsTooLong: {
          summary: 'paymentTermsDays over 365',
          value: error('validation_failed', 'paymentTermsDays: must be at most 365', '715f9642-3b8e-4d1a-9c6f-2e0a7d5b8c13'),
        },
      },
    },
  },

  'vendors.list': {
    parameters: { search: 'insurance' },
    responses: {
      200: {
        search: {
          summary: 'The vendors whose canonical name holds "insurance"',
          value: { vendors: [{ id: 'f850d5bb-1274-470a-beaf-471f554abb42', name: 'Square Deal Insurance', is1099Eligible: false }], nextCursor: null },
        },
      },
    },
  },

  'transactions.list': {
    parameters: { entityId: LAKESIDE_BAKERY, status: 'accepted', minCents: '10000', maxCents: '50000', limit: 2 },
    responses: {
      200: {
        firstPage: {
          summary: 'Accepted transactions from $100.00 to $500.00, newest first',
          value: {
            transactions: [
              {
                id: '6606a897-3c1e-4b5d-8a2f-7e9d0c4b1a35',
                date: '2026-11-12',
                amount: $(26208n),
                vendor: 'Lakeshore Power & Gas',
                account: 'Utilities',
                status: 'accepted',
                source: 'manual',
              },
              { id: FLOUR_PURCHASE, date: '2026-11-11', amount: $(35475n), vendor: 'Northwind Flour Mill', account: 'Office Supplies', status: 'accepted', source: 'manual' },
            ],
            nextCursor: 'eyJ2IjoxLCJsaXN0IjoidHJhbnNhY3Rpb25zIi',
          },
        },
      },
    },
  },

  'transactions.get': {
    parameters: { id: FLOUR_PURCHASE },
    responses: {
      200: {
        expense: {
          summary: 'An expense and its two journal lines',
          value: {
            id: FLOUR_PURCHASE,
            date: '2026-11-11',
            amount: $(35475n),
            vendor: 'Northwind Flour Mill',
            account: 'Office Supplies',
            status: 'accepted',
            source: 'manual',
            description: 'Flour and sugar',
            rationale: null,
            lines: [
              { account: 'Office Supplies', debit: $(35475n), credit: null },
              { account: 'Business Checking', debit: null, credit: $(35475n) },
            ],
          },
        },
      },
    },
  },

  'expenses.create': {
    requests: {
      coffeeBeans: {
        summary: 'An expense to a new vendor',
        value: {
          entityId: LAKESIDE_BAKERY,
          date: '2026-11-20',
          amountCents: '4599',
          vendorName: 'Crema Coffee Roasters',
          accountId: MEALS,
          memo: 'Beans for the counter',
        },
      },
    },
    responses: {
      201: {
        coffeeBeans: { summary: 'Recorded and posted', value: { expenseId: '51e08e06-9c9b-45f4-978f-28393d2f2cb0', transactionId: '93e0a2b6-948d-43de-8264-cb0505d0837c' } },
      },
      422: {
        zeroAmount: { summary: 'An amount of zero', value: error('validation_failed', 'amountCents: must be greater than zero', '2b9d41c7-6e3a-4f08-b5d2-8c1e7a0f3d64') },
      },
    },
  },

  'invoices.list': {
    parameters: { entityId: LAKESIDE_BAKERY, status: 'partially_paid', limit: 2 },
    responses: {
      200: {
        partiallyPaid: {
          summary: 'The partially paid invoices',
          value: {
            invoices: [
              {
                id: INV_0004,
                number: 'INV-0004',
                status: 'partially_paid',
                customer: 'Cornish Kitchen Co Harbor',
                issueDate: '2026-10-31',
                dueDate: '2026-12-15',
                total: $(77700n, 'GBP'),
                paid: $(38850n, 'GBP'),
                balance: $(38850n, 'GBP'),
                currency: 'GBP',
              },
            ],
            nextCursor: null,
          },
        },
      },
    },
  },

  'invoices.get': {
    parameters: { id: INV_0004 },
    responses: {
      200: {
        partiallyPaid: {
          summary: 'A pound-sterling invoice with one payment',
          value: {
            id: INV_0004,
            number: 'INV-0004',
            status: 'partially_paid',
            issueDate: '2026-10-31',
            dueDate: '2026-12-15',
            currency: 'GBP',
            customer: { id: '482969c5-1e7b-4c2a-9f3d-6a0b8e5d7c14', name: 'Cornish Kitchen Co Harbor' },
            terms: 'Net 45',
            subtotal: $(64750n, 'GBP'),
            tax: $(12950n, 'GBP'),
            total: $(77700n, 'GBP'),
            paid: $(38850n, 'GBP'),
            balance: $(38850n, 'GBP'),
            memo: null,
            lines: [{ description: 'Afternoon tea catering', quantity: '35', unitPrice: $(1850n, 'GBP'), amount: $(64750n, 'GBP'), account: 'Service Revenue' }],
            payments: [{ amount: $(38850n, 'GBP'), method: 'wire', paidAt: '2026-11-14' }],
            payUrl: 'http://localhost:3000/pay/hmrH90pbEtmvFw4B1RD3xnwvlMc_ta-0CFN_gt_jQ2U',
          },
        },
      },
    },
  },

  'invoices.create': {
    requests: {
      euroInvoice: {
        summary: 'A draft in euros, with 20 % tax',
        value: {
          entityId: LAKESIDE_BAKERY,
          customerId: HARBOR_BISTRO,
          currency: 'EUR',
          taxRatePercent: '20',
          memo: 'Thank you for your order',
          lines: [{ description: 'Pastry trays', quantity: '4', unitPriceCents: '25000', accountId: SALES }],
        },
      },
      quickstartInvoice: {
        summary: 'The quickstart’s draft: two lines, 8.875 % tax, in US dollars',
        value: {
          entityId: QUICKSTART_BAKERY,
          customerId: NORTHGATE_BOOKS,
          taxRatePercent: '8.875',
          lines: [
            { description: 'Wedding cake, three tiers', quantity: '1', unitPriceCents: '48000', accountId: QUICKSTART_SALES },
            { description: 'Cupcakes', quantity: '36', unitPriceCents: '375', accountId: QUICKSTART_SALES },
          ],
        },
      },
    },
    responses: {
      201: {
        euroInvoice: {
          summary: 'The draft',
          value: { invoiceId: INV_0009, invoiceNumber: 'INV-0009', webUrl: 'http://localhost:3000/pay/sdQmjRr362OXGPcLGBfYJ3LvZ30t1aYp1K6P6kUwPvM' },
        },
        quickstartInvoice: {
          summary: 'The draft',
          value: { invoiceId: '9d99e4be-0600-47a9-bcc0-4266a689a0d4', invoiceNumber: 'INV-0009', webUrl: 'http://localhost:3000/pay/sv5Bk91Y03pifpUZzkrIdvKK116gSmnyuLiMidrgOQ4' },
        },
      },
    },
  },

  'invoices.send': {
    parameters: { id: INV_0009 },
    responses: {
      200: { sent: { summary: 'The invoice, sent and posted', value: INV_0009_DETAIL } },
      409: { notDraft: { summary: 'Sent already', value: error('conflict', 'invoice INV-0009 is sent; it cannot be sent again', '7c2e5a90-1d4b-4f36-a8e7-3b9f0c6d2e15') } },
    },
  },

  'invoices.remind': {
    parameters: { id: INV_0009 },
    responses: {
      200: { reminded: { summary: 'The reminder went out', value: { invoiceId: INV_0009, remindedAt: '2026-11-20T00:00:00.000Z' } } },
      409: {
        tooSoon: {
          summary: 'A second reminder within 24 hours',
          value: error(
            'conflict',
            'a reminder for invoice INV-0009 went out at 2026-11-20T00:00:00.000Z; the next may go from 2026-11-21T00:00:00.000Z',
            '4eeaba41-6c2d-4b8e-9f17-0a5d3e8c1b72',
          ),
        },
      },
    },
  },

  'invoices.recordPayment': {
    parameters: { id: INV_0009 },
    requests: {
      wire: { summary: 'Part of the balance, by wire', value: { amountCents: '50000', method: 'wire', paidAt: '2026-11-20' } },
      check: { summary: 'The quickstart’s payment: a check, dated today', value: { amountCents: '30000', method: 'check', memo: 'Check 1042' } },
    },
    responses: {
      201: {
        wire: {
          summary: 'Recorded; the invoice is partly paid',
          value: { paymentId: 'fd8948c7-5030-4ae3-bcf5-c8d67c82e40e', invoiceId: INV_0009, status: 'partially_paid', balance: $(70000n, 'EUR') },
        },
        check: {
          summary: 'Recorded; the invoice is partly paid',
          value: { paymentId: 'df85b3a9-0ce7-4f8e-82c7-55eaa468db37', invoiceId: '9d99e4be-0600-47a9-bcc0-4266a689a0d4', status: 'partially_paid', balance: $(36958n) },
        },
      },
      422: {
        overBalance: {
          summary: 'More than the balance',
          value: error('validation_failed', 'amountCents: is more than the balance of €700.00 (70000 cents)', '93d5f1a2-7b6c-4e0d-8a39-5c2f1e7b0d48'),
        },
      },
    },
  },

  'review.list': {
    parameters: { entityId: LAKESIDE_BAKERY, limit: 3 },
    responses: {
      200: {
        oldestThree: {
          summary: 'The three oldest items, more waiting',
          value: {
            hasMore: true,
            highConfidence: [
              {
                id: REVIEW_ITEM,
                date: '2026-11-04',
                amount: $(39840n),
                vendor: 'Northwind Flour Mill',
                description: 'NORTHWIND FLOUR MILL 0042 PORTLAND OR',
                proposedAccountId: OFFICE_SUPPLIES,
                proposedAccount: 'Office Supplies',
                confidence: 0.97,
                rationale: 'All 81 earlier payments to Northwind Flour Mill were booked to Office Supplies.',
              },
            ],
            needsReview: [
              {
                id: '88175f16-5f01-43f5-a24d-0dea49aa48e8',
                date: '2026-11-07',
                amount: $(21287n),
                vendor: null,
                description: 'HOMEDEPOT 4471 TIGARD OR',
                proposedAccountId: null,
                proposedAccount: null,
                confidence: null,
                rationale: "No earlier payment or known merchant matches 'HOMEDEPOT 4471 TIGARD OR'; choose the account yourself.",
              },
            ],
          },
        },
      },
    },
  },

  'review.accept': {
    parameters: { id: REVIEW_ITEM },
    requests: {
      proposal: { summary: 'Accept the proposed account', value: {} },
      otherAccount: { summary: 'Book it to another account', value: { accountId: MEALS } },
    },
    responses: {
      200: {
        proposal: { summary: 'Accepted', value: { ok: true } },
        otherAccount: { summary: 'Accepted', value: { ok: true } },
      },
      409: {
        acceptedAlready: {
          summary: 'Accepted already',
          value: error('conflict', 'the review item was accepted at 2026-11-20T00:00:00.000Z; it has left the queue', '14c306c3-5a8e-4d2f-b7c1-9e0d6a3f8b25'),
        },
      },
      422: {
        noProposal: {
          summary: 'No account sent and none proposed',
          value: error('validation_failed', 'accountId: is required: this item has no proposed account', 'bf52bfe3-2c7d-4a9e-8b16-5f0e3d1c7a94'),
        },
      },
    },
  },

  'today.get': {
    parameters: { entityId: LAKESIDE_BAKERY },
    responses: {
      200: {
        signals: {
          summary: 'An overdue invoice, a key about to expire, and the week’s payments',
          value: {
            headline: '2 things are urgent (and 3 things of less weight).',
            signals: [
              {
                id: 'a3239318-07ec-4229-bf6d-8c34cb8b63fd',
                severity: 'urgent',
                sentence: 'Maple Leaf Catering Harbor owes CA$546.00 on INV-0003, 32 days past due.',
                action: 'Remind the customer (POST /invoices/{id}/remind), or call them.',
                evidence: [{ label: 'Invoice INV-0003, due 2026-10-19', url: 'http://localhost:3000/api/v1/invoices/b21e6a53-379d-42ac-8206-c1de525eb739' }],
              },
              {
                id: '565653c3-8e2d-4f7a-b1c9-0d6e3a5f8b42',
                severity: 'attention',
                sentence: 'The API key "nightly export" stops working after 2026-11-30, in 10 days.',
                action: 'Create its replacement (daybook key create), switch the software to it, then revoke the old key.',
                evidence: [{ label: 'Key nightly export, expires 2026-11-30' }],
              },
              {
                id: 'dc960c1f-4a7b-4e3d-9f28-1c5b0e6d7a93',
                severity: 'informational',
                sentence: '2 invoice payments came in over the last 7 days, $1,019.94 in all.',
                action: 'Nothing to do.',
                evidence: [{ label: '2 payments since 2026-11-14' }],
              },
            ],
          },
        },
      },
    },
  },

  'reports.profitAndLoss': {
    parameters: { entityId: LAKESIDE_BAKERY, periodStart: '2026-10-01', periodEnd: '2026-10-31' },
    responses: {
      200: {
        october: {
          summary: 'October, with September beside it (some rows left out)',
          value: {
            entity: 'Lakeside Bakery',
            basis: 'accrual',
            period: { start: '2026-10-01', end: '2026-10-31' },
            rows: [
              { account: 'Revenue', depth: 0, isTotal: true, amount: $(2058412n), type: 'revenue', prior: $(1824419n) },
              { account: 'Sales', depth: 1, isTotal: false, amount: $(1974600n), type: 'revenue', prior: $(1813704n) },
              { account: 'Service Revenue', depth: 1, isTotal: false, amount: $(83812n), type: 'revenue', prior: $(10715n) },
              { account: 'Total Revenue', depth: 0, isTotal: true, amount: $(2058412n), type: 'total', prior: $(1824419n) },
              { account: 'Other Expenses', depth: 1, isTotal: true, amount: $(-1109n), type: 'expense', prior: $(-1067n) },
              { account: 'Realized FX Gain or Loss', depth: 2, isTotal: false, amount: $(-1109n), type: 'expense', prior: $(-1067n) },
              { account: 'Total Expenses', depth: 0, isTotal: true, amount: $(671242n), type: 'total', prior: $(561870n) },
              { account: 'Net Income', depth: 0, isTotal: true, amount: $(1387170n), type: 'total', prior: $(1262549n) },
            ],
            totals: { revenue: $(2058412n), expenses: $(671242n), netIncome: $(1387170n) },
            prior: { revenue: $(1824419n), expenses: $(561870n), netIncome: $(1262549n) },
          },
        },
      },
    },
  },

  'reports.balanceSheet': {
    parameters: { entityId: LAKESIDE_BAKERY, asOf: '2026-10-31' },
    responses: {
      200: {
        endOfOctober: {
          summary: 'The balance sheet at the end of October (some rows left out)',
          value: {
            entity: 'Lakeside Bakery',
            basis: 'accrual',
            asOf: '2026-10-31',
            rows: [
              { account: 'Assets', depth: 0, isTotal: true, amount: $(45725846n), type: 'asset' },
              { account: 'Cash and Bank', depth: 1, isTotal: true, amount: $(45556118n), type: 'asset' },
              { account: 'Business Checking', depth: 2, isTotal: false, amount: $(45556118n), type: 'asset' },
              { account: 'Accounts Receivable', depth: 1, isTotal: false, amount: $(169728n), type: 'asset' },
              { account: 'Total Assets', depth: 0, isTotal: true, amount: $(45725846n), type: 'total' },
              { account: 'Retained Earnings', depth: 1, isTotal: false, amount: $(18885485n), type: 'equity' },
              { account: 'Current Year Earnings', depth: 1, isTotal: false, amount: $(14310821n), type: 'equity' },
              { account: 'Total Equity', depth: 0, isTotal: true, amount: $(45196306n), type: 'total' },
              { account: 'Total Liabilities and Equity', depth: 0, isTotal: true, amount: $(45725846n), type: 'total' },
            ],
            totals: { assets: $(45725846n), liabilities: $(529540n), equity: $(45196306n) },
          },
        },
      },
    },
  },

  'reports.trialBalance': {
    parameters: { entityId: LAKESIDE_BAKERY, asOf: '2026-10-31' },
    responses: {
      200: {
        endOfOctober: {
          summary: 'The trial balance at the end of October (some rows left out)',
          value: {
            entity: 'Lakeside Bakery',
            basis: 'accrual',
            asOf: '2026-10-31',
            rows: [
              { account: 'Business Checking', debit: $(45556118n), credit: $(0n) },
              { account: 'Accounts Receivable', debit: $(169728n), credit: $(0n) },
              { account: 'Accounts Payable', debit: $(0n), credit: $(483170n) },
            ],
            totals: { debit: $(55786147n), credit: $(55786147n) },
          },
        },
      },
    },
  },

  'reports.arAging': {
    parameters: { entityId: LAKESIDE_BAKERY },
    responses: {
      200: {
        today: {
          summary: 'What customers owe today (some items left out)',
          value: {
            buckets: { current: $(197325n), d1_30: $(0n), d31_60: $(39154n), d61_90: $(0n), d90plus: $(0n) },
            grandTotal: $(236479n),
            items: [
              { id: INV_0009, customerOrVendor: 'Harbor Bistro', number: 'INV-0009', dueDate: '2026-12-04', daysOverdue: -14, balance: $(75082n) },
              { id: INV_0004, customerOrVendor: 'Cornish Kitchen Co Harbor', number: 'INV-0004', dueDate: '2026-12-15', daysOverdue: -25, balance: $(50287n) },
              { id: '05551537-9e4c-4d1b-8a6f-2c7d3b0e5f19', customerOrVendor: 'Anchor Cafe Downtown', number: 'INV-0006', dueDate: '2026-12-17', daysOverdue: -27, balance: $(47361n) },
              { id: 'b21e6a53-379d-42ac-8206-c1de525eb739', customerOrVendor: 'Maple Leaf Catering Harbor', number: 'INV-0003', dueDate: '2026-10-19', daysOverdue: 32, balance: $(39154n) },
            ],
          },
        },
      },
    },
  },

  'reports.apAging': {
    parameters: { entityId: LAKESIDE_BAKERY },
    responses: {
      200: {
        today: {
          summary: 'What is owed to vendors today (some items left out)',
          value: {
            buckets: { current: $(171250n), d1_30: $(18420n), d31_60: $(162500n), d61_90: $(45000n), d90plus: $(66000n) },
            grandTotal: $(463170n),
            items: [
              { id: '1e545088-5c3d-4a7e-9b12-8f0d6e4a3c57', customerOrVendor: 'Northwind Flour Mill', number: 'NF-2214', dueDate: '2026-11-30', daysOverdue: -10, balance: $(171250n) },
              { id: '14a1377b-2d9e-4f6c-a853-0b7e1c5d9f26', customerOrVendor: 'Northwind Flour Mill', number: 'NF-2201', dueDate: '2026-10-06', daysOverdue: 45, balance: $(162500n) },
            ],
          },
        },
      },
    },
  },
};

/** The examples of the operation `id`, or undefined for an id that is not one of the v1 surface's. */
export function examplesOf(id: string): OperationExamples | undefined {
  return Object.hasOwn(OPERATION_EXAMPLES, id) ? OPERATION_EXAMPLES[id as OperationId] : undefined;
}
