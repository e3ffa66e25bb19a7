import { createTenant } from '../../src/books/tenants.js';
import { CLI_ACTOR } from '../../src/books/audit.js';
import { type Basis, createBusiness } from '../../src/books/businesses.js';
import { listPostableAccounts, systemAccountId } from '../../src/books/chart.js';
import { createKey } from '../../src/books/keys.js';
import { postEntry } from '../../src/books/ledger.js';
import { type Clock, todayUtc } from '../../src/clock.js';
import { addDays } from '../../src/dates.js';
import { type Db, inTransaction } from '../../src/db/connection.js';

/**
 * Demo books: one firm with two client businesses (one per basis), a read-write key for all
 * of them, and a few weeks of balanced entries dated relative to the clock. Everything goes
 * through the books functions (prepared statements), in one transaction.
 */

export interface DemoBooks {
  tenantId: string;
  tenantName: string;
  businesses: { id: string; name: string }[];
  /** The demo key itself: printed once by `daybook demo`, never stored. */
  key: string;
  keyId: string;
}

export const DEMO_TENANT_NAME = 'Harbor & Pine Bookkeeping';

interface DemoExpense {
  daysAgo: number;
  account: string;
  amountCents: bigint;
  memo: string;
}

interface DemoBusiness {
  name: string;
  basis: Basis;
  openingDepositCents: bigint;
  expenses: DemoExpense[];
}

/** The owner's opening deposit lands this many days before the clock's today. */
const OPENING_DAYS_AGO = 56;

const DEMO_BUSINESSES: DemoBusiness[] = [
  {
    name: 'Lakeside Bakery',
    basis: 'accrual',
    openingDepositCents: 2_500_000n,
    expenses: [
      { daysAgo: 50, account: 'Rent', amountCents: 180_000n, memo: 'Shop rent' },
      { daysAgo: 41, account: 'Utilities', amountCents: 23_418n, memo: 'Electric and gas' },
      { daysAgo: 27, account: 'Office Supplies', amountCents: 6_499n, memo: 'Receipt printer paper' },
      { daysAgo: 12, account: 'Advertising and Marketing', amountCents: 15_000n, memo: 'Farmers market flyers' },
    ],
  },
  {
    name: 'Ridgeline Landscaping',
    basis: 'cash',
    openingDepositCents: 1_000_000n,
    expenses: [
      { daysAgo: 48, account: 'Insurance', amountCents: 64_250n, memo: 'General liability, quarterly' },
      { daysAgo: 33, account: 'Software and Subscriptions', amountCents: 4_900n, memo: 'Scheduling app' },
      { daysAgo: 9, account: 'Travel', amountCents: 8_735n, memo: 'Fuel for the crew truck' },
    ],
  },
];

function postableIdsByName(db: Db, businessId: string): Map<string, string> {
  return new Map(listPostableAccounts(db, businessId).map((account) => [account.name, account.id]));
}

function postDemoEntries(db: Db, clock: Clock, businessId: string, demo: DemoBusiness): void {
  const today = todayUtc(clock);
  const bankId = systemAccountId(db, businessId, 'bank');
  const idsByName = postableIdsByName(db, businessId);
  postEntry(db, clock, CLI_ACTOR, {
    businessId,
    date: addDays(today, -OPENING_DAYS_AGO),
    memo: "Owner's opening deposit",
    sourceType: 'opening_balance',
    lines: [
      { accountId: bankId, direction: 'debit', amountCents: demo.openingDepositCents },
      { accountId: systemAccountId(db, businessId, 'owner_equity'), direction: 'credit', amountCents: demo.openingDepositCents },
    ],
  });
  for (const expense of demo.expenses) {
    const expenseId = idsByName.get(expense.account);
    if (!expenseId) throw new Error(`seedDemo: the standard chart has no account named ${expense.account}`);
    postEntry(db, clock, CLI_ACTOR, {
      businessId,
      date: addDays(today, -expense.daysAgo),
      memo: expense.memo,
      sourceType: 'manual',
      lines: [
        { accountId: expenseId, direction: 'debit', amountCents: expense.amountCents },
        { accountId: bankId, direction: 'credit', amountCents: expense.amountCents },
      ],
    });
  }
}

export function seedDemo(db: Db, clock: Clock): DemoBooks {
  return inTransaction(db, () => {
    const tenant = createTenant(db, clock, CLI_ACTOR, { name: DEMO_TENANT_NAME, plan: 'middle' });
    const businesses = DEMO_BUSINESSES.map((demo) => {
      const business = createBusiness(db, clock, CLI_ACTOR, { tenantId: tenant.id, name: demo.name, basis: demo.basis });
      postDemoEntries(db, clock, business.id, demo);
      return { id: business.id, name: business.name };
    });
    const key = createKey(db, clock, CLI_ACTOR, { tenantId: tenant.id, name: 'demo key', access: 'read_write' });
    return { tenantId: tenant.id, tenantName: tenant.name, businesses, key: key.key, keyId: key.id };
  });
}
