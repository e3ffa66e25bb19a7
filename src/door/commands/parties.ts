import { setLedgerAccountArchived } from '../../books/chart.js';
import { findOrCreateCustomer, type NewCustomer, setCustomerArchived } from '../../books/customers.js';
import { setVendorFlags } from '../../books/vendors.js';
import { defineCommand } from '../door.js';

/** Customers, vendors and ledger accounts: the records postings name. */

export const findOrCreateCustomerCommand = defineCommand({
  name: 'customer.create',
  scope: (input: { tenantId: string; customer: NewCustomer }) => ({ account: input.tenantId }),
  run: ({ db, clock, actor }, input) => findOrCreateCustomer(db, clock, actor, input.tenantId, input.customer),
});

export const archiveCustomer = defineCommand({
  name: 'customer.archive',
  scope: (input: { id: string; archived: boolean }) => ({ customer: input.id }),
  run: ({ db, clock, actor }, input) => setCustomerArchived(db, clock, actor, input.id, input.archived),
});

export const setVendorFlagsCommand = defineCommand({
  name: 'vendor.set',
  scope: (input: { id: string; change: { is1099Eligible?: boolean; archived?: boolean } }) => ({ vendor: input.id }),
  run: ({ db, clock, actor }, input) => setVendorFlags(db, clock, actor, input.id, input.change),
});

export const archiveLedgerAccount = defineCommand({
  name: 'ledger_account.archive',
  scope: (input: { id: string; archived: boolean }) => ({ ledgerAccount: input.id }),
  run: ({ db, clock, actor }, input) => setLedgerAccountArchived(db, clock, actor, input.id, input.archived),
});
