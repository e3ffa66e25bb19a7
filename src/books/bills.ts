import type { Clock } from '../clock.js';
import { nowIso, todayUtc } from '../clock.js';
import { isIsoDate } from '../dates.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { all, flag, one, run } from '../db/statements.js';
import { ApiError, conflict, validationFailed } from '../errors.js';
import { AMOUNT_CEILING_CENTS, formatMoney } from '../money.js';
import { assertName } from '../names.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { type Business, findBusiness, getBusiness } from './businesses.js';
import { systemAccountId } from './chart.js';
import { assertExpenseAccount } from './expenses.js';
import { newId } from '../ids.js';
import { assertPostingAllowed, postEntry, withPostingFields } from './ledger.js';
import { findOrCreateVendor } from './vendors.js';

/**
 * Payables: bills from vendors, recorded and paid from the command line (v1 has no API for
 * them), so payables can be aged. In US dollars. Like invoices, both bases are posted and each
 * business's reports read its own: the accrual view owes the bill from its issue date (the
 * expense against accounts payable); the cash view sees the expense only as it is paid.
 */

export interface Bill {
  id: string;
  businessId: string;
  vendorId: string;
  vendor: string;
  number: string;
  issueDate: string;
  dueDate: string;
  amountCents: bigint;
  paidCents: bigint;
  accountId: string;
  journalEntryId: string;
  closedOn: string | null;
}

interface BillRow {
  id: string;
  business_id: string;
  vendor_id: string;
  vendor: string;
  number: string;
  issue_date: string;
  due_date: string;
  amount_cents: bigint;
  paid_cents: bigint;
  ledger_account_id: string;
  journal_entry_id: string;
  closed_on: string | null;
}

export function findBill(db: Db, id: string): Bill | undefined {
  const row = one<BillRow>(
    db,
    `SELECT b.id, b.business_id, b.vendor_id, v.name AS vendor, b.number, b.issue_date, b.due_date, b.amount_cents, b.paid_cents,
       b.ledger_account_id, b.journal_entry_id, b.closed_on
     FROM bills b JOIN vendors v ON v.id = b.vendor_id WHERE b.id = ?`,
    id,
  );
  return (
    row && {
      id: row.id,
      businessId: row.business_id,
      vendorId: row.vendor_id,
      vendor: row.vendor,
      number: row.number,
      issueDate: row.issue_date,
      dueDate: row.due_date,
      amountCents: row.amount_cents,
      paidCents: row.paid_cents,
      accountId: row.ledger_account_id,
      journalEntryId: row.journal_entry_id,
      closedOn: row.closed_on,
    }
  );
}

export interface NewBill {
  businessId: string;
  /** The vendor by exact name, created when new. */
  vendorName: string;
  /** The vendor's own number for the bill; unique per business and vendor. */
  number: string;
  issueDate: string;
  dueDate: string;
  amountCents: bigint;
  /** The expense (or asset) account the bill is for: the rules of POST /expenses. */
  accountId: string;
}

/** Where a posting refused for a bill points. */
const BILL_FIELDS = { period_locked: 'issueDate', account_archived: 'accountId' } as const;
/** Where a posting refused for a payment points: a payment names only its bill, its amount and its date. */
const PAYMENT_FIELDS = { period_locked: 'date', account_archived: 'id' } as const;

/**
 * Records a bill: the expense debited and accounts payable credited on its issue date, in the
 * accrual view only. Billing and period locks first, then the bill's own rules. The caller
 * holds the transaction.
 */
export function createBill(db: Db, clock: Clock, actor: Actor, input: NewBill): Bill {
  assertInTransaction(db, 'createBill');
  const business = requireBusiness(db, input.businessId);
  assertDate('issueDate', input.issueDate);
  assertDate('dueDate', input.dueDate);
  withPostingFields(BILL_FIELDS, () => assertPostingAllowed(db, business.id, input.issueDate));
  assertName('number', input.number);
  assertName('vendorName', input.vendorName);
  if (input.dueDate < input.issueDate) throw validationFailed('dueDate', `must not be before the issue date (${input.issueDate})`);
  assertAmount(input.amountCents);
  assertExpenseAccount(db, business, input.accountId);
  const vendor = findOrCreateVendor(db, clock, actor, business.tenantId, input.vendorName).vendor;
  const existing = one<{ id: string }>(db, 'SELECT id FROM bills WHERE business_id = ? AND vendor_id = ? AND number = ?', business.id, vendor.id, input.number);
  if (existing) throw conflict(`number: bill ${input.number} from ${vendor.name} is already recorded (id ${existing.id})`);

  const id = newId();
  const entry = withPostingFields(BILL_FIELDS, () =>
    postEntry(db, clock, actor, {
      businessId: business.id,
      date: input.issueDate,
      memo: `Bill ${input.number} from ${vendor.name}`,
      sourceType: 'bill',
      sourceId: id,
      lines: [
        { accountId: input.accountId, direction: 'debit', amountCents: input.amountCents, basis: 'accrual' },
        { accountId: systemAccountId(db, business.id, 'accounts_payable'), direction: 'credit', amountCents: input.amountCents, basis: 'accrual' },
      ],
    }),
  );
  run(
    db,
    `INSERT INTO bills (id, business_id, vendor_id, number, issue_date, due_date, amount_cents, paid_cents, ledger_account_id, journal_entry_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
    id,
    business.id,
    vendor.id,
    input.number,
    input.issueDate,
    input.dueDate,
    input.amountCents,
    input.accountId,
    entry.id,
    nowIso(clock),
  );
  recordAudit(db, clock, actor, {
    tenantId: business.tenantId,
    businessId: business.id,
    action: 'bill.create',
    subjectType: 'bill',
    subjectId: id,
    detail: { vendorId: vendor.id, number: input.number, issueDate: input.issueDate, dueDate: input.dueDate, amountCents: input.amountCents.toString(), accountId: input.accountId },
  });
  return requireBill(db, id);
}

export interface BillPaymentInput {
  billId: string;
  amountCents: bigint;
  /** Default: today (UTC). */
  date?: string;
}

export interface BillPayment {
  paymentId: string;
  bill: Bill;
}

/**
 * Pays a bill in part or whole from the bank: accounts payable debited (accrual view), the
 * bill's expense debited (cash view), the bank credited (both). Not more than is owed, not
 * before the bill's issue date, not after today. The caller holds the transaction.
 */
export function payBill(db: Db, clock: Clock, actor: Actor, input: BillPaymentInput): BillPayment {
  assertInTransaction(db, 'payBill');
  const bill = requireBill(db, input.billId);
  const business = getBusiness(db, bill.businessId);
  const date = input.date ?? todayUtc(clock);
  assertDate('date', date);
  const owed = bill.amountCents - bill.paidCents;
  if (owed === 0n) throw conflict(`id: bill ${bill.number} from ${bill.vendor} is paid in full`);
  withPostingFields(PAYMENT_FIELDS, () => assertPostingAllowed(db, business.id, date));
  assertAmount(input.amountCents);
  if (input.amountCents > owed) throw validationFailed('amountCents', `is more than the ${formatMoney(owed, 'USD')} (${owed} cents) still owed on the bill`);
  if (date < bill.issueDate) throw validationFailed('date', `must not be before the bill's issue date (${bill.issueDate})`);
  if (date > todayUtc(clock)) throw validationFailed('date', `must not be after today (${todayUtc(clock)}): record a payment once it is made`);
  // The cash view takes the expense now: the posting engine refuses an account archived since the bill.
  const account = one<{ name: string; archived: bigint | number }>(db, 'SELECT name, archived FROM ledger_accounts WHERE id = ?', bill.accountId);
  if (account && flag(account.archived)) throw validationFailed('id', `the bill's account (${account.name}) is archived; it cannot take the payment`);

  const paymentId = newId();
  const entry = withPostingFields(PAYMENT_FIELDS, () =>
    postEntry(db, clock, actor, {
      businessId: business.id,
      date,
      memo: `Payment of bill ${bill.number} to ${bill.vendor}`,
      sourceType: 'bill_payment',
      sourceId: paymentId,
      lines: [
        { accountId: systemAccountId(db, business.id, 'accounts_payable'), direction: 'debit', amountCents: input.amountCents, basis: 'accrual' },
        { accountId: bill.accountId, direction: 'debit', amountCents: input.amountCents, basis: 'cash' },
        { accountId: systemAccountId(db, business.id, 'bank'), direction: 'credit', amountCents: input.amountCents, basis: 'both' },
      ],
    }),
  );
  run(
    db,
    'INSERT INTO bill_payments (id, bill_id, amount_cents, paid_on, journal_entry_id, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    paymentId,
    bill.id,
    input.amountCents,
    date,
    entry.id,
    nowIso(clock),
  );
  const settles = input.amountCents === owed;
  // Paid in full from the latest payment's date (payments may be recorded out of date order).
  const closedOn = settles ? lastPaymentDate(db, bill.id) : null;
  run(db, 'UPDATE bills SET paid_cents = paid_cents + ?, closed_on = ? WHERE id = ?', input.amountCents, closedOn, bill.id);
  recordAudit(db, clock, actor, {
    tenantId: business.tenantId,
    businessId: business.id,
    action: 'bill.payment',
    subjectType: 'bill_payment',
    subjectId: paymentId,
    detail: { billId: bill.id, amountCents: input.amountCents.toString(), date },
  });
  return { paymentId, bill: requireBill(db, bill.id) };
}

function lastPaymentDate(db: Db, billId: string): string {
  const rows = all<{ paid_on: string }>(db, 'SELECT max(paid_on) AS paid_on FROM bill_payments WHERE bill_id = ?', billId);
  const date = rows[0]?.paid_on;
  if (!date) throw new Error(`bill ${billId} settled without a payment`);
  return date;
}

/** The business by id; the refusal names the field, so the command line can name its flag. */
function requireBusiness(db: Db, id: string): Business {
  const business = findBusiness(db, id);
  if (!business) throw new ApiError('not_found', 'businessId: no such business.');
  return business;
}

function requireBill(db: Db, id: string): Bill {
  const bill = findBill(db, id);
  if (!bill) throw new ApiError('not_found', 'id: no such bill.');
  return bill;
}

function assertDate(field: string, value: string): void {
  if (!isIsoDate(value)) throw validationFailed(field, 'must be a date written YYYY-MM-DD');
}

function assertAmount(amountCents: bigint): void {
  if (amountCents <= 0n) throw validationFailed('amountCents', 'must be greater than zero');
  if (amountCents >= AMOUNT_CEILING_CENTS) throw validationFailed('amountCents', 'must be under ten trillion dollars');
}
