import { CLI_ACTOR } from '../store/audit.js';
import { createBill, payBill } from '../books/bills.js';
import { type Basis, type Business, createBusiness } from '../books/businesses.js';
import { listPostableAccounts, setLedgerAccountArchived, systemAccountId } from '../books/chart.js';
import { importBankStatement } from '../books/import/bank-import.js';
import { parseStatement } from '../books/import/statement.js';
import { findOrCreateCustomer, setCustomerArchived } from '../books/customers.js';
import { setRate } from '../books/fx.js';
import { ensureServerSecrets } from '../store/secrets.js';
import { createInvoice } from '../books/invoices.js';
import { markOverdueInvoices, markViewed, recordPayment, sendInvoice, voidInvoice } from '../books/invoice-posting.js';
import { one, run } from '../db/statements.js';
import { recordExpense } from '../books/expenses.js';
import { createKey } from '../books/keys.js';
import { postEntry } from '../books/ledger.js';
import { createTenant } from '../books/tenants.js';
import { setVendorFlags } from '../books/vendors.js';
import { type Clock, todayUtc } from '../clock.js';
import { addDays, FIRST_DATE, LAST_DATE } from '../dates.js';
import type { Db } from '../db/connection.js';
import { batch } from '../door/door.js';
import { type Currency, FOREIGN_CURRENCIES, type ForeignCurrency } from '../money.js';
import { seededRandom } from '../seeded-random.js';

/**
 * Demo books: one firm with two client businesses (one per basis), their customers in five
 * currencies, a dozen vendors, two years of expenses and weekly takings, and bills in every
 * aging bucket, dated relative to the clock's day, so every list and report the API serves has
 * real pages and figures. Everything goes through the books functions the API uses, in one
 * transaction, and the same day gives the same books (ids, keys and secrets aside).
 */

export interface DemoBooks {
  tenantId: string;
  tenantName: string;
  businesses: { id: string; name: string }[];
  /** The demo key itself: printed once by `daybook demo`, never stored. */
  key: string;
  keyId: string;
  /**
   * The first business's newest invoice sent in US dollars: nothing paid on it and not yet due.
   * `daybook demo --card-payments` prints its pay link, to try paying it by card.
   */
  unpaidInvoice: { businessId: string; id: string; number: string };
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

/** A bill from a vendor: issued and due (days before today), its account, and what was paid when. */
interface DemoBill {
  vendor: string;
  number: string;
  issuedDaysAgo: number;
  termsDays: number;
  amountCents: bigint;
  account: string;
  payments: Array<[daysAgo: number, amountCents: bigint]>;
}

interface DemoBusiness {
  name: string;
  basis: Basis;
  openingDepositCents: bigint;
  vendors: DemoVendor[];
  /** Takings deposited every week: the revenue account, a memo, cents before the spread. */
  weeklyTakings: { account: string; memo: string; typicalCents: bigint };
  /** Bills in every aging bucket, some paid in part or whole. */
  bills: DemoBill[];
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
    weeklyTakings: { account: 'Sales', memo: 'Card and cash takings for the week', typicalCents: 420_000n },
    bills: [
      { vendor: 'Northwind Flour Mill', number: 'NF-2188', issuedDaysAgo: 110, termsDays: 30, amountCents: 184_000n, account: 'Office Supplies', payments: [[82, 184_000n]] },
      { vendor: 'Northwind Flour Mill', number: 'NF-2201', issuedDaysAgo: 75, termsDays: 30, amountCents: 162_500n, account: 'Office Supplies', payments: [] },
      { vendor: 'Northwind Flour Mill', number: 'NF-2214', issuedDaysAgo: 20, termsDays: 30, amountCents: 171_250n, account: 'Office Supplies', payments: [] },
      { vendor: 'Lakeshore Power & Gas', number: 'LPG-1026', issuedDaysAgo: 40, termsDays: 21, amountCents: 38_420n, account: 'Utilities', payments: [[12, 20_000n]] },
      { vendor: 'Bayside Oven Repair', number: 'BOR-55', issuedDaysAgo: 100, termsDays: 30, amountCents: 45_000n, account: 'Contractors', payments: [] },
      { vendor: 'Square Deal Insurance', number: 'SDI-778', issuedDaysAgo: 130, termsDays: 14, amountCents: 96_000n, account: 'Insurance', payments: [[60, 30_000n]] },
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
    weeklyTakings: { account: 'Service Revenue', memo: 'Payments for jobs done this week', typicalCents: 310_000n },
    bills: [
      { vendor: 'Greenleaf Nursery', number: 'GN-3301', issuedDaysAgo: 50, termsDays: 30, amountCents: 254_000n, account: 'Contractors', payments: [[10, 100_000n]] },
      { vendor: 'Ridge Fuel Co-op', number: 'RF-912', issuedDaysAgo: 10, termsDays: 15, amountCents: 61_250n, account: 'Travel', payments: [] },
      { vendor: 'Summit Tool Rental', number: 'STR-404', issuedDaysAgo: 95, termsDays: 30, amountCents: 38_000n, account: 'Office Supplies', payments: [] },
      { vendor: 'Brightside CPA', number: 'BC-2026-3', issuedDaysAgo: 70, termsDays: 30, amountCents: 45_000n, account: 'Professional Fees', payments: [[35, 45_000n]] },
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

interface DemoCustomer {
  id: string;
  currency: Currency;
}

function seedCustomers(db: Db, clock: Clock, tenantId: string): DemoCustomer[] {
  const customers: DemoCustomer[] = [];
  for (const place of CUSTOMER_PLACES) {
    for (const [stem, currency, terms] of CUSTOMER_STEMS) {
      const name = `${stem} ${place}`;
      const email = `accounts@${stem.toLowerCase().normalize('NFD').replace(/[^a-z]+/g, '')}-${place.toLowerCase().replace(/ /g, '')}.example`;
      const { id } = findOrCreateCustomer(db, clock, CLI_ACTOR, tenantId, { name, email, currency, ...(terms === null ? {} : { paymentTermsDays: terms }) });
      customers.push({ id, currency });
    }
  }
  return customers;
}

/** Roughly what one unit was worth in USD over the demo's two years; each week drifts from it a little. */
const DEMO_RATES: Record<ForeignCurrency, { usdPerUnit: number; decimals: number }> = {
  CAD: { usdPerUnit: 0.73, decimals: 4 },
  EUR: { usdPerUnit: 1.08, decimals: 4 },
  GBP: { usdPerUnit: 1.27, decimals: 4 },
  MXN: { usdPerUnit: 0.0575, decimals: 6 },
};

/** The first exchange rates are this many days old: a week before the history begins. */
const RATES_FROM_DAYS_AGO = DEMO_HISTORY_DAYS + 7;

/**
 * A rate for every currency, drawn once a week and stored for each day of that week over the
 * history (invoices and payments use the rate of their date), drifting within ±3 %: the demo's invoices then show realised FX
 * differences. Written as decimal text from integer arithmetic, never from a float's digits.
 */
function seedRates(db: Db, clock: Clock, random: () => number): void {
  const today = todayUtc(clock);
  for (let daysAgo = RATES_FROM_DAYS_AGO; daysAgo >= 0; daysAgo -= 7) {
    for (const currency of FOREIGN_CURRENCIES) {
      // Peso rates begin later, so an old peso estimate shows Today's "draft without a rate".
      if (currency === 'MXN' && daysAgo > MXN_RATES_FROM_DAYS_AGO) continue;
      const { usdPerUnit, decimals } = DEMO_RATES[currency];
      const scale = 10 ** decimals;
      const units = Math.round(usdPerUnit * scale * (0.97 + random() * 0.06));
      const text = `${Math.floor(units / scale)}.${String(units % scale).padStart(decimals, '0')}`;
      // The same rate every day of its week: a send or payment takes only a rate a few days old at most.
      for (let day = daysAgo; day > daysAgo - 7 && day >= 0; day -= 1) setRate(db, clock, CLI_ACTOR, { currency, date: addDays(today, -day), usdPerUnit: text });
    }
  }
}

/** The first peso rate is this many days old. */
const MXN_RATES_FROM_DAYS_AGO = 200;

/** One demo invoice: whom, in what, how long ago it was issued, and what became of it. */
interface DemoInvoice {
  currency: Currency;
  issuedDaysAgo: number;
  termsDays: number;
  lines: Array<{ description: string; quantity: string; unitPriceCents: bigint; account: string }>;
  taxRatePercent?: string;
  /** Draft (never sent), sent, viewed, void, and payments (days ago, share of the total in percent). */
  fate: 'draft' | 'sent' | 'viewed' | 'void' | { payments: Array<[daysAgo: number, percent: bigint]> };
}

const BAKERY_INVOICES: DemoInvoice[] = [
  { currency: 'USD', issuedDaysAgo: 95, termsDays: 30, taxRatePercent: '8.875', lines: [{ description: 'Wedding cake, three tiers', quantity: '1', unitPriceCents: 68_000n, account: 'Sales' }], fate: { payments: [[70, 100n]] } },
  { currency: 'EUR', issuedDaysAgo: 80, termsDays: 30, taxRatePercent: '20', lines: [{ description: 'Pastry trays, weekly', quantity: '4', unitPriceCents: 25_000n, account: 'Sales' }, { description: 'Delivery', quantity: '4', unitPriceCents: 2_500n, account: 'Service Revenue' }], fate: { payments: [[60, 40n], [41, 60n]] } },
  { currency: 'CAD', issuedDaysAgo: 62, termsDays: 30, lines: [{ description: 'Bread subscription, quarter', quantity: '13', unitPriceCents: 4_200n, account: 'Sales' }], fate: 'sent' },
  { currency: 'GBP', issuedDaysAgo: 20, termsDays: 45, taxRatePercent: '20', lines: [{ description: 'Afternoon tea catering', quantity: '35', unitPriceCents: 1_850n, account: 'Service Revenue' }], fate: { payments: [[6, 50n]] } },
  { currency: 'MXN', issuedDaysAgo: 8, termsDays: 30, lines: [{ description: 'Pan dulce, assorted', quantity: '120', unitPriceCents: 3_500n, account: 'Sales' }], fate: 'viewed' },
  { currency: 'USD', issuedDaysAgo: 3, termsDays: 30, taxRatePercent: '8.875', lines: [{ description: 'Sourdough loaves', quantity: '40', unitPriceCents: 750n, account: 'Sales' }, { description: 'Baking class, two hours', quantity: '1.5', unitPriceCents: 9_000n, account: 'Service Revenue' }], fate: 'sent' },
  { currency: 'USD', issuedDaysAgo: 30, termsDays: 30, lines: [{ description: 'Cookies (order cancelled)', quantity: '200', unitPriceCents: 150n, account: 'Sales' }], fate: 'void' },
  { currency: 'EUR', issuedDaysAgo: 0, termsDays: 30, taxRatePercent: '20', lines: [{ description: 'Croissants, standing order', quantity: '300', unitPriceCents: 120n, account: 'Sales' }], fate: 'draft' },
];

const LANDSCAPING_INVOICES: DemoInvoice[] = [
  { currency: 'USD', issuedDaysAgo: 120, termsDays: 15, lines: [{ description: 'Spring cleanup', quantity: '1', unitPriceCents: 145_000n, account: 'Service Revenue' }], fate: { payments: [[100, 100n]] } },
  { currency: 'USD', issuedDaysAgo: 75, termsDays: 30, taxRatePercent: '7.25', lines: [{ description: 'Hedge trimming, hours', quantity: '12.5', unitPriceCents: 6_500n, account: 'Service Revenue' }, { description: 'Mulch, cubic yards', quantity: '6', unitPriceCents: 4_800n, account: 'Sales' }], fate: { payments: [[60, 30n], [40, 70n]] } },
  { currency: 'CAD', issuedDaysAgo: 55, termsDays: 14, lines: [{ description: 'Snow clearing contract, month', quantity: '1', unitPriceCents: 90_000n, account: 'Service Revenue' }], fate: 'sent' },
  { currency: 'USD', issuedDaysAgo: 12, termsDays: 30, lines: [{ description: 'Patio design consultation', quantity: '2', unitPriceCents: 17_500n, account: 'Service Revenue' }], fate: { payments: [[4, 40n]] } },
  { currency: 'USD', issuedDaysAgo: 1, termsDays: 30, lines: [{ description: 'Irrigation repair', quantity: '3.25', unitPriceCents: 8_800n, account: 'Service Revenue' }], fate: 'sent' },
  { currency: 'USD', issuedDaysAgo: 25, termsDays: 30, lines: [{ description: 'Tree removal', quantity: '1', unitPriceCents: 125_000n, account: 'Service Revenue' }], fate: 'sent' },
  { currency: 'MXN', issuedDaysAgo: 300, termsDays: 30, lines: [{ description: 'Garden design for a retreat (estimate)', quantity: '1', unitPriceCents: 4_500_000n, account: 'Service Revenue' }], fate: 'draft' },
  { currency: 'USD', issuedDaysAgo: 0, termsDays: 30, lines: [{ description: 'Fall planting estimate', quantity: '1', unitPriceCents: 240_000n, account: 'Service Revenue' }], fate: 'draft' },
];

/** The nightly export key expires this many days after the clock's day (Today warns of it). */
const EXPORT_KEY_DAYS_LEFT = 10;

/**
 * The days demo books can be made for: their dates reach back over the history and the week of
 * exchange rates before it, and ahead to the latest due date and key expiry, all within the
 * years the books write.
 */
export const DEMO_FIRST_DAY = addDays(FIRST_DATE, RATES_FROM_DAYS_AGO);
export const DEMO_LAST_DAY = addDays(
  LAST_DATE,
  -Math.max(
    EXPORT_KEY_DAYS_LEFT,
    ...[...BAKERY_INVOICES, ...LANDSCAPING_INVOICES, ...DEMO_BUSINESSES.flatMap((business) => business.bills)].map((item) => item.termsDays - item.issuedDaysAgo),
  ),
);

/** Where demo pay links point; `daybook demo` passes the site it serves. */
export const DEMO_SITE_URL = 'http://localhost:3000';

/**
 * Invoices in every status and several currencies, through the books functions the API runs:
 * drafted, sent (emails written and, as history, marked delivered), paid in parts at other
 * rates (realised FX), viewed, voided; the overdue sweep then marks the ones past due.
 */
function seedInvoices(db: Db, clock: Clock, business: Business, invoices: DemoInvoice[], customers: DemoCustomer[], siteUrl: string): SeededInvoice[] {
  const today = todayUtc(clock);
  const accountIds = new Map(listPostableAccounts(db, business.id).map((account) => [account.name, account.id]));
  const seeded: SeededInvoice[] = [];
  invoices.forEach((demo, index) => {
    const customer = customers.filter((candidate) => candidate.currency === demo.currency)[index % 5]!;
    const { invoiceId, invoiceNumber } = createInvoice(db, clock, CLI_ACTOR, {
      business,
      customerId: customer.id,
      currency: demo.currency,
      issueDate: addDays(today, -demo.issuedDaysAgo),
      paymentTermsDays: demo.termsDays,
      ...(demo.taxRatePercent ? { taxRatePercent: demo.taxRatePercent } : {}),
      lines: demo.lines.map((line) => ({ ...line, accountId: accountIds.get(line.account)! })),
    });
    seeded.push({ id: invoiceId, number: invoiceNumber, demo });
    if (demo.fate === 'draft') return;
    const { invoice } = sendInvoice(db, clock, CLI_ACTOR, invoiceId, { siteUrl });
    if (demo.fate === 'viewed') markViewed(db, clock, invoiceId);
    if (demo.fate === 'void') voidInvoice(db, clock, CLI_ACTOR, invoiceId);
    if (typeof demo.fate === 'object') {
      let paid = 0n;
      let percentSoFar = 0n;
      demo.fate.payments.forEach(([daysAgo, percent], paymentIndex) => {
        percentSoFar += percent;
        // The payment that brings the share to 100 % pays exactly what is left.
        const amountCents = percentSoFar === 100n ? invoice.totalCents - paid : (invoice.totalCents * percent) / 100n;
        paid += amountCents;
        recordPayment(db, clock, CLI_ACTOR, { invoiceId, amountCents, method: paymentIndex % 2 === 0 ? 'wire' : 'check', paidAt: addDays(today, -daysAgo) });
      });
    }
  });
  // The demo's emails are history: delivered long ago, not waiting in the outbox.
  run(db, "UPDATE email_outbox SET status = 'sent', attempts = 1, sent_at = created_at WHERE business_id = ?", business.id);
  return seeded;
}

/** An invoice the seed made, with what it was made from. */
interface SeededInvoice {
  id: string;
  number: string;
  demo: DemoInvoice;
}

/** The newest of the invoices sent in US dollars and left as sent: nothing paid, not yet due. */
function newestUnpaidUsd(invoices: SeededInvoice[]): SeededInvoice {
  const candidates = invoices.filter(({ demo }) => demo.fate === 'sent' && demo.currency === 'USD' && demo.issuedDaysAgo < demo.termsDays);
  const newest = candidates.sort((a, b) => a.demo.issuedDaysAgo - b.demo.issuedDaysAgo)[0];
  if (!newest) throw new Error('seedDemo: the first business has no unpaid invoice in US dollars');
  return newest;
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

/** The week's takings deposited every seventh day of the history, posted to revenue against the bank. */
function seedTakings(db: Db, clock: Clock, business: Business, demo: DemoBusiness, random: () => number): void {
  const today = todayUtc(clock);
  const revenueId = listPostableAccounts(db, business.id).find((account) => account.name === demo.weeklyTakings.account)?.id;
  if (!revenueId) throw new Error(`seedDemo: the standard chart has no account named ${demo.weeklyTakings.account}`);
  for (let daysAgo = DEMO_HISTORY_DAYS - 3; daysAgo >= 1; daysAgo -= 7) {
    const amountCents = spread(demo.weeklyTakings.typicalCents, random);
    postEntry(db, clock, CLI_ACTOR, {
      businessId: business.id,
      date: addDays(today, -daysAgo),
      memo: demo.weeklyTakings.memo,
      sourceType: 'manual',
      lines: [
        { accountId: systemAccountId(db, business.id, 'bank'), direction: 'debit', amountCents },
        { accountId: revenueId, direction: 'credit', amountCents },
      ],
    });
  }
}

/** The business's bills, through createBill and payBill as `daybook bill create` and `bill pay` record them. */
function seedBills(db: Db, clock: Clock, business: Business, demo: DemoBusiness): void {
  const today = todayUtc(clock);
  const accountIds = new Map(listPostableAccounts(db, business.id).map((account) => [account.name, account.id]));
  for (const bill of demo.bills) {
    const accountId = accountIds.get(bill.account);
    if (!accountId) throw new Error(`seedDemo: the standard chart has no account named ${bill.account}`);
    const issueDate = addDays(today, -bill.issuedDaysAgo);
    const created = createBill(db, clock, CLI_ACTOR, {
      businessId: business.id,
      vendorName: bill.vendor,
      number: bill.number,
      issueDate,
      dueDate: addDays(issueDate, bill.termsDays),
      amountCents: bill.amountCents,
      accountId,
    });
    for (const [daysAgo, amountCents] of bill.payments) payBill(db, clock, CLI_ACTOR, { billId: created.id, amountCents, date: addDays(today, -daysAgo) });
  }
}

/** A bank line the demo's statements hold: how many days ago, the bank's text, the amount (negative out), the vendor if the bank names one. */
type DemoBankLine = [daysAgo: number, description: string, amount: string, vendor?: string];

/**
 * Two statements per business, imported as `daybook import bank` does: an older one (imported
 * ten days ago, so some items have waited over a week) and this week's. Payees from the
 * business's history get confident proposals; new merchants and bank text nobody has booked
 * before wait for a person; money in is recorded for reconciliation. No two lines of a statement
 * share a date: an import writes its rows at one instant, so lines of one date would list in the
 * order of their random ids.
 */
const DEMO_STATEMENTS: Record<string, { importedDaysAgo: number; lines: DemoBankLine[] }[]> = {
  'Lakeside Bakery': [
    {
      importedDaysAgo: 10,
      lines: [
        [16, 'NORTHWIND FLOUR MILL 0042 PORTLAND OR', '-398.40', 'Northwind Flour Mill'],
        [14, 'CREMA COFFEE ROASTERS', '-91.25', 'Crema Coffee Roasters'],
        [13, 'HOMEDEPOT 4471 TIGARD OR', '-212.87'],
        [12, 'DEPOSIT FARMERS MARKET', '1240.00'],
        [11, 'WIRE REF 88213 K. OKAFOR', '-600.00'],
      ],
    },
    {
      importedDaysAgo: 0,
      lines: [
        [6, 'NORTHWIND FLOUR MILL 0042 PORTLAND OR', '-412.10', 'Northwind Flour Mill'],
        [5, 'TALLY CLOUD SUBSCRIPTION', '-49.00', 'Tally Cloud'],
        [4, 'LAKESHORE POWER & GAS AUTOPAY', '-228.60', 'Lakeshore Power & Gas'],
        [3, 'SQ *CORNER HARDWARE', '-37.45'],
        [2, 'ADOBE *CREATIVE CLOUD', '-59.99'],
        [1, 'MOBILE DEPOSIT', '860.00'],
      ],
    },
  ],
  'Ridgeline Landscaping': [
    {
      importedDaysAgo: 9,
      lines: [
        [15, 'RIDGE FUEL CO-OP 0412 BOULDER CO', '-84.10', 'Ridge Fuel Co-op'],
        [13, 'GREENLEAF NURSERY', '-356.00', 'Greenleaf Nursery'],
        [12, 'CHECK 1042', '-450.00'],
      ],
    },
    {
      importedDaysAgo: 0,
      lines: [
        [4, 'RIDGE FUEL CO-OP 0412 BOULDER CO', '-91.30', 'Ridge Fuel Co-op'],
        [3, 'VALLEY BANK MONTHLY FEE', '-15.00', 'Valley Bank'],
        [2, 'UBER TRIP HELP.UBER.COM', '-23.75'],
        [1, 'ACH CREDIT CITY OF BOULDER', '2300.00'],
      ],
    },
  ],
};

/** A clock `days` behind the given one: the older statement was imported then. */
function daysBefore(clock: Clock, days: number): Clock {
  return { now: () => new Date(clock.now().getTime() - days * 86_400_000) };
}

function seedStatements(db: Db, clock: Clock, business: Business): void {
  const today = todayUtc(clock);
  for (const statement of DEMO_STATEMENTS[business.name] ?? []) {
    const csv = [
      'date,description,amount,vendor',
      ...statement.lines.map(([daysAgo, description, amount, vendor]) => `${addDays(today, -daysAgo)},"${description}",${amount},${vendor ?? ''}`),
    ].join('\n');
    importBankStatement(db, daysBefore(clock, statement.importedDaysAgo), CLI_ACTOR, {
      businessId: business.id,
      fileName: 'demo-statement.csv',
      rows: parseStatement(Buffer.from(csv, 'utf8')),
    });
  }
}

/** Contractors and the accountant: paid for services, so 1099-eligible (`daybook vendor set --1099 yes`). */
const DEMO_1099_VENDORS = ['Bayside Oven Repair', 'Greenleaf Nursery', 'Brightside CPA'];

/**
 * What the operator's archive commands leave behind, so `includeArchived=true` shows a
 * difference: a vendor the landscaper stopped buying from (its expenses stay), a customer the
 * firm no longer works for, and a ledger account the landscaper does not use. Each goes
 * through the function its `daybook` command calls.
 */
const DEMO_ARCHIVED = { vendor: 'Iron & Oak Tools', customer: 'Seaside Pop-Up Market', ledgerAccount: { business: 'Ridgeline Landscaping', name: 'Prepaid Expenses' } };

function seedOperatorFlags(db: Db, clock: Clock, tenantId: string, businesses: { id: string; name: string }[]): void {
  for (const name of DEMO_1099_VENDORS) {
    const vendor = one<{ id: string }>(db, 'SELECT id FROM vendors WHERE tenant_id = ? AND name = ?', tenantId, name);
    if (!vendor) throw new Error(`seedDemo: no vendor named ${name}`);
    setVendorFlags(db, clock, CLI_ACTOR, vendor.id, { is1099Eligible: true });
  }
  const vendor = one<{ id: string }>(db, 'SELECT id FROM vendors WHERE tenant_id = ? AND name = ?', tenantId, DEMO_ARCHIVED.vendor);
  if (!vendor) throw new Error(`seedDemo: no vendor named ${DEMO_ARCHIVED.vendor}`);
  setVendorFlags(db, clock, CLI_ACTOR, vendor.id, { archived: true });
  const customer = findOrCreateCustomer(db, clock, CLI_ACTOR, tenantId, { name: DEMO_ARCHIVED.customer, email: 'hello@seaside-popup.example' });
  setCustomerArchived(db, clock, CLI_ACTOR, customer.id, true);
  const business = businesses.find((candidate) => candidate.name === DEMO_ARCHIVED.ledgerAccount.business);
  const account = business && listPostableAccounts(db, business.id).find((candidate) => candidate.name === DEMO_ARCHIVED.ledgerAccount.name);
  if (!account) throw new Error(`seedDemo: no ledger account ${DEMO_ARCHIVED.ledgerAccount.name} in ${DEMO_ARCHIVED.ledgerAccount.business}`);
  setLedgerAccountArchived(db, clock, CLI_ACTOR, account.id, true);
}

/**
 * The clock the seed writes with: the start of the given clock's UTC day, one millisecond later
 * at every reading. Rows of one date then list in the order the seed wrote them, not by their
 * random ids (a clock that stood still would tie them all), so the same day gives the same
 * books, order included. Starting at midnight, the seed never runs into the next day.
 */
function seedingClock(clock: Clock): Clock {
  const dayStartMs = Date.parse(`${todayUtc(clock)}T00:00:00.000Z`);
  let readings = 0;
  return { now: () => new Date(dayStartMs + readings++) };
}

export function seedDemo(db: Db, dayClock: Clock, options: { siteUrl?: string } = {}): DemoBooks {
  const clock = seedingClock(dayClock);
  const day = todayUtc(dayClock);
  if (day < DEMO_FIRST_DAY || day > DEMO_LAST_DAY) throw new Error(`seedDemo: ${day} is outside ${DEMO_FIRST_DAY} to ${DEMO_LAST_DAY}: the books' dates would leave the years 0000 to 9999`);
  return batch(db, () => {
    // The invoices' pay links need the books' secrets, which a server would make at start.
    ensureServerSecrets(db, clock);
    const tenant = createTenant(db, clock, CLI_ACTOR, { name: DEMO_TENANT_NAME, plan: 'middle' });
    const random = seededRandom(20261123);
    seedRates(db, clock, random);
    const customers = seedCustomers(db, clock, tenant.id);
    let unpaidInvoice: DemoBooks['unpaidInvoice'] | undefined;
    const businesses = DEMO_BUSINESSES.map((demo, index) => {
      const business = createBusiness(db, clock, CLI_ACTOR, { tenantId: tenant.id, name: demo.name, basis: demo.basis });
      postOpeningDeposit(db, clock, business, demo.openingDepositCents);
      seedExpenses(db, clock, business, demo, random);
      seedTakings(db, clock, business, demo, random);
      seedBills(db, clock, business, demo);
      const invoices = seedInvoices(db, clock, business, index === 0 ? BAKERY_INVOICES : LANDSCAPING_INVOICES, customers, options.siteUrl ?? DEMO_SITE_URL);
      if (index === 0) {
        const { id, number } = newestUnpaidUsd(invoices);
        unpaidInvoice = { businessId: business.id, id, number };
      }
      seedStatements(db, clock, business);
      return { id: business.id, name: business.name };
    });
    markOverdueInvoices(db, clock);
    seedOperatorFlags(db, clock, tenant.id, businesses);
    const key = createKey(db, clock, CLI_ACTOR, { tenantId: tenant.id, name: 'demo key', access: 'read_write' });
    // An export job's read key, about to expire: Today says so.
    createKey(db, clock, CLI_ACTOR, { tenantId: tenant.id, name: 'nightly export', access: 'read', expiresOn: addDays(todayUtc(clock), EXPORT_KEY_DAYS_LEFT) });
    if (todayUtc(clock) !== day) throw new Error(`seedDemo: the books ran past ${day}: every date in them is relative to that day`);
    return { tenantId: tenant.id, tenantName: tenant.name, businesses, key: key.key, keyId: key.id, unpaidInvoice: unpaidInvoice! };
  });
}
