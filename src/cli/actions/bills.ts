import { createBillCommand, payBillCommand } from '../../door/commands/spending.js';
import type { Bill } from '../../books/bills.js';
import { ApiError } from '../../errors.js';
import { formatMoney } from '../../money.js';
import { type CommandContext, withBooks, writeAsCli } from '../context.js';

/** The books name a bill's fields as the API would; the operator typed flags. */
const FLAGS: Record<string, string> = {
  businessId: '--business',
  vendorName: '--vendor',
  number: '--number',
  issueDate: '--issue-date',
  dueDate: '--due-date',
  amountCents: '--amount-cents',
  accountId: '--account',
  date: '--date',
  id: '--id',
};

/** The write door's refusal of a record that is not there, by the flag that named it. */
const MISSING: Record<string, string> = {
  'No such business.': '--business: no such business.',
  'No such bill.': '--id: no such bill.',
};

/** A refusal from the books, its field named by the flag that set it. */
function inFlagTerms(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  const missing = error.code === 'not_found' ? MISSING[error.message] : undefined;
  if (missing) return new ApiError(error.code, missing);
  const match = /^(\w+): /.exec(error.message);
  const flag = match ? FLAGS[match[1]!] : undefined;
  return flag ? new ApiError(error.code, `${flag}: ${error.message.slice(match![0].length)}`) : error;
}

function billJson(bill: Bill) {
  return {
    id: bill.id,
    businessId: bill.businessId,
    vendor: bill.vendor,
    number: bill.number,
    issueDate: bill.issueDate,
    dueDate: bill.dueDate,
    amountCents: bill.amountCents.toString(),
    paidCents: bill.paidCents.toString(),
    owedCents: (bill.amountCents - bill.paidCents).toString(),
  };
}

interface CreateOptions {
  business: string;
  vendor: string;
  number: string;
  issueDate: string;
  dueDate: string;
  amountCents: bigint;
  account: string;
}

export async function create(options: CreateOptions, context: CommandContext): Promise<void> {
  const bill = await withBooks(context, (db) => {
    try {
      return writeAsCli(db, context, createBillCommand, {
        businessId: options.business,
        vendorName: options.vendor,
        number: options.number,
        issueDate: options.issueDate,
        dueDate: options.dueDate,
        amountCents: options.amountCents,
        accountId: options.account,
      });
    } catch (error) {
      throw inFlagTerms(error);
    }
  });
  context.out.result(billJson(bill), [
    `Bill ${bill.number} from ${bill.vendor}: ${formatMoney(bill.amountCents, 'USD')}, due ${bill.dueDate} (id ${bill.id}).`,
  ]);
}

export async function pay(options: { id: string; amountCents: bigint; date?: string }, context: CommandContext): Promise<void> {
  const paid = await withBooks(context, (db) => {
    try {
      return writeAsCli(db, context, payBillCommand, { billId: options.id, amountCents: options.amountCents, ...(options.date ? { date: options.date } : {}) });
    } catch (error) {
      throw inFlagTerms(error);
    }
  });
  const owed = paid.bill.amountCents - paid.bill.paidCents;
  context.out.result({ paymentId: paid.paymentId, ...billJson(paid.bill) }, [
    `Paid ${formatMoney(options.amountCents, 'USD')} on bill ${paid.bill.number} from ${paid.bill.vendor}; ` +
      (owed === 0n ? 'it is paid in full.' : `${formatMoney(owed, 'USD')} still owed.`),
  ]);
}

