import { createBill, type NewBill, payBill, type BillPaymentInput } from '../../books/bills.js';
import { type NewExpense, recordExpense } from '../../books/expenses.js';
import { type BankImportInput, type BankImportOptions, importBankStatement } from '../../books/import/bank-import.js';
import { type Acceptance, acceptReviewItem } from '../../books/review.js';
import { defineCommand } from '../door.js';

/** Money out: expenses, bills and their payments, bank statements and the review queue. */

export const recordExpenseCommand = defineCommand({
  name: 'expense.create',
  /** `entityId` undefined: the only business the key reaches. */
  scope: (input: { entityId: string | undefined; expense: Omit<NewExpense, 'business'> }) => ({ business: input.entityId }),
  run: ({ db, clock, actor, reached }, input) => recordExpense(db, clock, actor, { ...input.expense, business: reached.business! }),
});

export const createBillCommand = defineCommand({
  name: 'bill.create',
  scope: (input: NewBill) => ({ business: input.businessId }),
  run: ({ db, clock, actor }, input) => createBill(db, clock, actor, input),
});

export const payBillCommand = defineCommand({
  name: 'bill.pay',
  scope: (input: BillPaymentInput) => ({ bill: input.billId }),
  run: ({ db, clock, actor }, input) => payBill(db, clock, actor, input),
});

export const importStatementCommand = defineCommand({
  name: 'bank.import',
  scope: (input: { statement: BankImportInput; options?: BankImportOptions }) => ({ business: input.statement.businessId }),
  run: ({ db, clock, actor }, input) => importBankStatement(db, clock, actor, input.statement, input.options),
});

export const acceptReviewItemCommand = defineCommand({
  name: 'review.accept',
  scope: (input: Acceptance) => ({ reviewItem: input.itemId }),
  run: ({ db, clock, actor }, input) => acceptReviewItem(db, clock, actor, input),
});
