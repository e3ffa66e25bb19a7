import type { Operation } from '../../http/operation.js';
import { listAccounts } from './accounts.js';
import { listBusinesses } from './businesses.js';
import { createCustomer, listCustomers } from './customers.js';
import { createExpense } from './expenses.js';
import { createInvoice, getInvoice, listInvoices, recordPaymentOperation, remindInvoiceOperation, sendInvoiceOperation } from './invoices.js';
import { balanceSheetReport, payablesAgingReport, profitAndLossReport, receivablesAgingReport, trialBalanceReport } from './reports.js';
import { acceptReviewItemOperation, listReviewQueueOperation } from './review.js';
import { getToday } from './today.js';
import { getTransaction, listTransactions } from './transactions.js';
import { listVendors } from './vendors.js';

/** Every operation served under /api/v1. */
export const operations: readonly Operation[] = [
  listBusinesses,
  listAccounts,
  listCustomers,
  createCustomer,
  listVendors,
  listTransactions,
  getTransaction,
  createExpense,
  listInvoices,
  getInvoice,
  createInvoice,
  sendInvoiceOperation,
  remindInvoiceOperation,
  recordPaymentOperation,
  listReviewQueueOperation,
  acceptReviewItemOperation,
  getToday,
  profitAndLossReport,
  balanceSheetReport,
  trialBalanceReport,
  receivablesAgingReport,
  payablesAgingReport,
];
