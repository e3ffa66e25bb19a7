import { markOverdueInvoices } from '../src/books/invoice-posting.js';
import type { Clock } from '../src/clock.js';
import { type Db, inTransaction } from '../src/db/connection.js';

export interface OverdueContext {
  db: Db;
  clock: Clock;
}

/** Moves invoices with money owed past their due date to overdue; safe to run any number of times. */
export function runOverdueSweep(context: OverdueContext): { markedOverdue: number } {
  return { markedOverdue: inTransaction(context.db, () => markOverdueInvoices(context.db, context.clock)) };
}
