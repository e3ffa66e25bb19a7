import { type Static, Type } from '@sinclair/typebox';
import { CLI_ACTOR } from '../store/audit.js';
import { importBankStatement } from '../books/import/bank-import.js';
import { parseStatement } from '../books/import/statement.js';
import { createBill, payBill } from '../books/bills.js';
import type { Business } from '../books/businesses.js';
import { listPostableAccounts } from '../books/chart.js';
import { findOrCreateCustomer } from '../books/customers.js';
import { recordExpense } from '../books/expenses.js';
import { setRate } from '../books/fx.js';
import { recordPayment, sendInvoice, voidInvoice } from '../books/invoice-posting.js';
import { createInvoice } from '../books/invoices.js';
import { lockPeriod } from '../books/periods.js';
import { ensureServerSecrets } from '../store/secrets.js';
import { findOrCreateVendor } from '../books/vendors.js';
import { type Clock, todayUtc } from '../clock.js';
import type { Db } from '../db/connection.js';
import { parseCents } from '../money.js';
import { batch } from '../door/door.js';
import { run } from '../db/statements.js';
import { ApiError } from '../errors.js';
import { validate } from '../http/validate.js';
import { CurrencyCode, DigitString, IsoDate, Name, StringEnum, Strict, Text } from '../api/schemas/common.js';

/**
 * Books described as JSON for daybook/testing (`startDaybook({ fixture })`, `serve --ephemeral
 * --fixture FILE`): businesses on either basis, customers, vendors, exchange rates, expenses,
 * invoices (drafts, sent, paid in part or in full, voided), bills (open, paid in part or in
 * full), period locks and bank statements for the review queue, written through the same books
 * functions the API and the importer use, so seeded books are books like any other.
 */

const BusinessRef = Type.Optional(Type.String({ description: 'a business by name; the first when left out' }));

export const FixtureSchema = Strict({
  accountName: Type.Optional(Name()),
  businesses: Type.Optional(
    Type.Array(Strict({ name: Name(), basis: Type.Optional(StringEnum(['accrual', 'cash'] as const, { description: 'the basis its reports default to; accrual when left out' })) }), { minItems: 1, maxItems: 20 }),
  ),
  customers: Type.Optional(
    Type.Array(Strict({ name: Name(), email: Type.Optional(Text(320)), currency: Type.Optional(CurrencyCode), paymentTermsDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 365 })) })),
  ),
  vendors: Type.Optional(Type.Array(Strict({ name: Name() }))),
  rates: Type.Optional(Type.Array(Strict({ currency: CurrencyCode, date: IsoDate, usdPerUnit: Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$' }) }))),
  expenses: Type.Optional(
    Type.Array(Strict({ business: BusinessRef, date: IsoDate, amountCents: DigitString, vendor: Name(), account: Type.String(), memo: Type.Optional(Text(2000)) })),
  ),
  invoices: Type.Optional(
    Type.Array(
      Strict({
        business: BusinessRef,
        customer: Type.String({ description: 'a customer of the fixture, by name' }),
        issueDate: Type.Optional(IsoDate),
        paymentTermsDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 365 })),
        currency: Type.Optional(CurrencyCode),
        taxRatePercent: Type.Optional(Type.String()),
        memo: Type.Optional(Text(2000)),
        lines: Type.Array(Strict({ description: Text(2000, { minLength: 1 }), quantity: Type.String(), unitPriceCents: DigitString, account: Type.String() }), { minItems: 1 }),
        sent: Type.Optional(Type.Boolean({ description: 'sent (and posted); a draft when false or left out' })),
        void: Type.Optional(Type.Boolean({ description: 'sent, then voided (as `daybook invoice void` does); takes no payment' })),
        payments: Type.Optional(Type.Array(Strict({ amountCents: DigitString, paidAt: Type.Optional(IsoDate), method: StringEnum(['check', 'cash', 'wire', 'other'] as const) }))),
      }),
    ),
  ),
  bills: Type.Optional(
    Type.Array(
      Strict({
        business: BusinessRef,
        vendor: Name(),
        number: Text(100, { minLength: 1 }),
        issueDate: IsoDate,
        dueDate: IsoDate,
        amountCents: DigitString,
        account: Type.String(),
        payments: Type.Optional(Type.Array(Strict({ amountCents: DigitString, date: Type.Optional(IsoDate) }))),
      }),
    ),
  ),
  periodLocks: Type.Optional(Type.Array(Strict({ business: BusinessRef, through: IsoDate }))),
  bankStatements: Type.Optional(Type.Array(Strict({ business: BusinessRef, csv: Type.String({ minLength: 1 }) }))),
});

export type Fixture = Static<typeof FixtureSchema>;

/** A fixture that does not hold: the message starts with `fixture:` and the path of the bad field. */
export class FixtureError extends Error {
  override name = 'FixtureError';
}

/** The fixture checked against its schema; refused with the path of the first bad field. */
export function checkFixture(value: unknown): Fixture {
  try {
    return validate<Fixture>(FixtureSchema, value, 'body');
  } catch (error) {
    throw new FixtureError(`fixture: ${(error as Error).message.replace(/^body: /, '')}`);
  }
}

/** Writes the fixture's books into the account's `businesses`, in one transaction. */
export function loadFixture(db: Db, clock: Clock, tenantId: string, businesses: readonly Business[], fixture: Fixture, siteUrl: string): void {
  batch(db, () => {
    ensureServerSecrets(db, clock);
    const business = (name: string | undefined, path: string): Business => {
      const found = name === undefined ? businesses[0] : businesses.find((candidate) => candidate.name === name);
      if (!found) throw new FixtureError(`fixture: ${path}.business: no business named "${name}"`);
      return found;
    };
    const account = (of: Business, name: string, path: string): string => {
      const found = listPostableAccounts(db, of.id).find((candidate) => candidate.name === name);
      if (!found) throw new FixtureError(`fixture: ${path}: no postable account named "${name}" in ${of.name}`);
      return found.id;
    };
    const customers = new Map<string, string>();
    each(fixture.rates, 'rates', (rate) => setRate(db, clock, CLI_ACTOR, rate));
    each(fixture.customers, 'customers', (customer) => customers.set(customer.name, findOrCreateCustomer(db, clock, CLI_ACTOR, tenantId, customer).id));
    each(fixture.vendors, 'vendors', (vendor) => findOrCreateVendor(db, clock, CLI_ACTOR, tenantId, vendor.name));
    each(fixture.expenses, 'expenses', (expense, path) => {
      const of = business(expense.business, path);
      recordExpense(db, clock, CLI_ACTOR, {
        business: of,
        date: expense.date,
        amountCents: parseCents(expense.amountCents),
        vendor: { name: expense.vendor },
        accountId: account(of, expense.account, `${path}.account`),
        ...(expense.memo !== undefined ? { memo: expense.memo } : {}),
      });
    });
    each(fixture.invoices, 'invoices', (invoice, path) => {
      const of = business(invoice.business, path);
      const customerId = customers.get(invoice.customer);
      if (customerId === undefined) throw new FixtureError(`fixture: ${path}.customer: no customer named "${invoice.customer}" in the fixture's customers`);
      const { invoiceId } = createInvoice(db, clock, CLI_ACTOR, {
        business: of,
        customerId,
        ...(invoice.issueDate !== undefined ? { issueDate: invoice.issueDate } : {}),
        ...(invoice.paymentTermsDays !== undefined ? { paymentTermsDays: invoice.paymentTermsDays } : {}),
        ...(invoice.currency !== undefined ? { currency: invoice.currency } : {}),
        ...(invoice.taxRatePercent !== undefined ? { taxRatePercent: invoice.taxRatePercent } : {}),
        ...(invoice.memo !== undefined ? { memo: invoice.memo } : {}),
        lines: invoice.lines.map((line, index) => ({ ...line, unitPriceCents: parseCents(line.unitPriceCents), accountId: account(of, line.account, `${path}.lines.${index}.account`) })),
      });
      if (invoice.void) {
        if (invoice.sent === false) throw new FixtureError(`fixture: ${path}.sent: a voided invoice is sent first; leave out "sent" or set it to true`);
        if (invoice.payments?.length) throw new FixtureError(`fixture: ${path}.payments: a voided invoice takes no payment`);
        sendInvoice(db, clock, CLI_ACTOR, invoiceId, { siteUrl });
        voidInvoice(db, clock, CLI_ACTOR, invoiceId);
        return;
      }
      if (!invoice.sent) {
        if (invoice.payments?.length) throw new FixtureError(`fixture: ${path}.payments: a draft takes no payment; set "sent": true`);
        return;
      }
      sendInvoice(db, clock, CLI_ACTOR, invoiceId, { siteUrl });
      each(invoice.payments, `${path}.payments`, (payment) =>
        recordPayment(db, clock, CLI_ACTOR, { invoiceId, amountCents: parseCents(payment.amountCents), method: payment.method, paidAt: payment.paidAt ?? todayUtc(clock) }),
      );
    });
    each(fixture.bills, 'bills', (bill, path) => {
      const of = business(bill.business, path);
      const created = createBill(db, clock, CLI_ACTOR, {
        businessId: of.id,
        vendorName: bill.vendor,
        number: bill.number,
        issueDate: bill.issueDate,
        dueDate: bill.dueDate,
        amountCents: parseCents(bill.amountCents),
        accountId: account(of, bill.account, `${path}.account`),
      });
      each(bill.payments, `${path}.payments`, (payment) => payBill(db, clock, CLI_ACTOR, { billId: created.id, amountCents: parseCents(payment.amountCents), ...(payment.date !== undefined ? { date: payment.date } : {}) }));
    });
    each(fixture.bankStatements, 'bankStatements', (statement, path) =>
      importBankStatement(db, clock, CLI_ACTOR, { businessId: business(statement.business, path).id, fileName: `fixture-${path}.csv`, rows: parseStatement(Buffer.from(statement.csv, 'utf8')) }),
    );
    // Last, so that everything above may be dated inside the periods they close.
    each(fixture.periodLocks, 'periodLocks', (lock, path) => lockPeriod(db, clock, CLI_ACTOR, business(lock.business, path).id, lock.through));
    // The fixture's emails are history, delivered before the test began: the outbox starts empty.
    run(db, "UPDATE email_outbox SET status = 'sent', attempts = 1, sent_at = created_at WHERE status = 'pending'");
  });
}

/** Runs `write` for each item, naming the item's path in any refusal of the books. */
function each<T>(items: readonly T[] | undefined, name: string, write: (item: T, path: string) => unknown): void {
  (items ?? []).forEach((item, index) => {
    const path = `${name}.${index}`;
    try {
      write(item, path);
    } catch (error) {
      if (error instanceof FixtureError) throw error;
      if (error instanceof ApiError) throw new FixtureError(`fixture: ${path}: ${error.message}`);
      throw error;
    }
  });
}
