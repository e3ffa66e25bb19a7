import { CLI_ACTOR } from '../../src/books/audit.js';
import { type Basis, type Business, createBusiness } from '../../src/books/businesses.js';
import { listPostableAccounts, systemAccountId } from '../../src/books/chart.js';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { recordExpense } from '../../src/books/expenses.js';
import { createKey } from '../../src/books/keys.js';
import { postEntry } from '../../src/books/ledger.js';
import { createTenant } from '../../src/books/tenants.js';
import { type Clock, todayUtc } from '../../src/clock.js';
import { addDays } from '../../src/dates.js';
import { type Db, inTransaction } from '../../src/db/connection.js';
import type { Currency } from '../../src/money.js';

/**
 * Demo books: one firm with two client businesses (one per basis), their customers in five
 * currencies, a dozen vendors, and two years of expenses dated relative to the clock, so every
 * list the API serves has real pages. Everything goes through the books functions the API
 * uses, in one transaction, and the same clock gives the same books.
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

/** How far back the demo's history reaches (two years). */
export const DEMO_HISTORY_DAYS = 730;

/** A vendor the business pays, how often, to which account, and roughly how much. */
interface DemoVendor {
  name: string;
  account: string;
  /** Days between payments (30: monthly). */
  everyDays: number;
  /** Cents, before a deterministic spread of up to ±20 %. */
  typicalCents: bigint;
  memo?: string;
}

interface DemoBusiness {
  name: string;
  basis: Basis;
  openingDepositCents: bigint;
  vendors: DemoVendor[];
}

const DEMO_BUSINESSES: DemoBusiness[] = [
  {
    name: 'Lakeside Bakery',
    basis: 'accrual',
    openingDepositCents: 12_000_000n,
    vendors: [
      { name: 'Harbor Street Properties', account: 'Rent', everyDays: 30, typicalCents: 180_000n, memo: 'Shop rent' },
      { name: 'Lakeshore Power & Gas', account: 'Utilities', everyDays: 30, typicalCents: 23_400n, memo: 'Electric and gas' },
      { name: 'Northwind Flour Mill', account: 'Office Supplies', everyDays: 9, typicalCents: 41_250n, memo: 'Flour and sugar' },
      { name: 'Crema Coffee Roasters', account: 'Meals', everyDays: 14, typicalCents: 8_900n, memo: 'Beans for the counter' },
      { name: 'PrintRight', account: 'Advertising and Marketing', everyDays: 45, typicalCents: 15_000n, memo: 'Flyers and menus' },
      { name: 'Square Deal Insurance', account: 'Insurance', everyDays: 91, typicalCents: 64_250n, memo: 'General liability, quarterly' },
      { name: 'Tally Cloud', account: 'Software and Subscriptions', everyDays: 30, typicalCents: 4_900n, memo: 'Point of sale' },
    ],
  },
  {
    name: 'Ridgeline Landscaping',
    basis: 'cash',
    openingDepositCents: 6_000_000n,
    vendors: [
      { name: 'Ridge Fuel Co-op', account: 'Travel', everyDays: 7, typicalCents: 8_735n, memo: 'Fuel for the crew truck' },
      { name: 'Greenleaf Nursery', account: 'Contractors', everyDays: 12, typicalCents: 36_000n, memo: 'Plants and mulch' },
      { name: 'Square Deal Insurance', account: 'Insurance', everyDays: 91, typicalCents: 51_800n, memo: 'Vehicle and liability, quarterly' },
      { name: 'Tally Cloud', account: 'Software and Subscriptions', everyDays: 30, typicalCents: 4_900n, memo: 'Scheduling app' },
      { name: 'Iron & Oak Tools', account: 'Office Supplies', everyDays: 40, typicalCents: 12_999n },
      { name: 'Valley Bank', account: 'Bank Fees', everyDays: 30, typicalCents: 1_500n, memo: 'Monthly account fee' },
      { name: 'Brightside CPA', account: 'Professional Fees', everyDays: 91, typicalCents: 45_000n, memo: 'Quarterly books review' },
    ],
  },
];

/** The firm's customers: a name stem, a currency and payment terms (null: the business's). */
const CUSTOMER_STEMS: Array<[string, Currency, number | null]> = [
  ['Anchor Cafe', 'USD', 30],
  ['Bluewater Marina', 'USD', 15],
  ['Cedar Row Apartments', 'USD', 30],
  ['Dockside Grill', 'USD', null],
  ['Elm Street Deli', 'USD', 14],
  ['Foxglove Florist', 'USD', 30],
  ['Maple Leaf Catering', 'CAD', 30],
  ['Rocher Bistro', 'CAD', 45],
  ['Boulangerie Étoile', 'EUR', 30],
  ['Müller Hofladen', 'EUR', 60],
  ['Thames Tea Rooms', 'GBP', 30],
  ['Cornish Kitchen Co', 'GBP', null],
  ['Panadería del Sol', 'MXN', 30],
  ['Café Oaxaca', 'MXN', 15],
];
const CUSTOMER_PLACES = ['Downtown', 'Harbor', 'Hillside', 'Lakefront', 'Old Town'];

function seedCustomers(db: Db, clock: Clock, tenantId: string): void {
  for (const place of CUSTOMER_PLACES) {
    for (const [stem, currency, terms] of CUSTOMER_STEMS) {
      const name = `${stem} ${place}`;
      const email = `accounts@${stem.toLowerCase().normalize('NFD').replace(/[^a-z]+/g, '')}-${place.toLowerCase().replace(/ /g, '')}.example`;
      findOrCreateCustomer(db, clock, CLI_ACTOR, tenantId, { name, email, currency, ...(terms === null ? {} : { paymentTermsDays: terms }) });
    }
  }
}

/** A small deterministic generator (mulberry32): the same seed gives the same demo books. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** typicalCents spread by up to ±20 %, in whole cents (integer arithmetic on the cents). */
function spread(typicalCents: bigint, random: () => number): bigint {
  const percent = BigInt(80 + Math.floor(random() * 41));
  return (typicalCents * percent) / 100n;
}

function postOpeningDeposit(db: Db, clock: Clock, business: Business, cents: bigint): void {
  postEntry(db, clock, CLI_ACTOR, {
    businessId: business.id,
    date: addDays(todayUtc(clock), -DEMO_HISTORY_DAYS - 1),
    memo: "Owner's opening deposit",
    sourceType: 'opening_balance',
    lines: [
      { accountId: systemAccountId(db, business.id, 'bank'), direction: 'debit', amountCents: cents },
      { accountId: systemAccountId(db, business.id, 'owner_equity'), direction: 'credit', amountCents: cents },
    ],
  });
}

/** Every vendor's payments over the history, each through recordExpense as POST /expenses records it. */
function seedExpenses(db: Db, clock: Clock, business: Business, demo: DemoBusiness, random: () => number): void {
  const today = todayUtc(clock);
  const accountIds = new Map(listPostableAccounts(db, business.id).map((account) => [account.name, account.id]));
  for (const vendor of demo.vendors) {
    const accountId = accountIds.get(vendor.account);
    if (!accountId) throw new Error(`seedDemo: the standard chart has no account named ${vendor.account}`);
    const firstDay = 1 + Math.floor(random() * vendor.everyDays);
    for (let daysAgo = DEMO_HISTORY_DAYS - firstDay; daysAgo >= 1; daysAgo -= vendor.everyDays) {
      recordExpense(db, clock, CLI_ACTOR, {
        business,
        date: addDays(today, -daysAgo),
        amountCents: spread(vendor.typicalCents, random),
        vendor: { name: vendor.name },
        accountId,
        ...(vendor.memo ? { memo: vendor.memo } : {}),
      });
    }
  }
}

export function seedDemo(db: Db, clock: Clock): DemoBooks {
  return inTransaction(db, () => {
    const tenant = createTenant(db, clock, CLI_ACTOR, { name: DEMO_TENANT_NAME, plan: 'middle' });
    const random = seededRandom(20261123);
    const businesses = DEMO_BUSINESSES.map((demo) => {
      const business = createBusiness(db, clock, CLI_ACTOR, { tenantId: tenant.id, name: demo.name, basis: demo.basis });
      postOpeningDeposit(db, clock, business, demo.openingDepositCents);
      seedExpenses(db, clock, business, demo, random);
      return { id: business.id, name: business.name };
    });
    seedCustomers(db, clock, tenant.id);
    const key = createKey(db, clock, CLI_ACTOR, { tenantId: tenant.id, name: 'demo key', access: 'read_write' });
    return { tenantId: tenant.id, tenantName: tenant.name, businesses, key: key.key, keyId: key.id };
  });
}
