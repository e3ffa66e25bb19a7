import type { Business } from '../../src/books/businesses.js';
import { listPostableAccounts } from '../../src/books/chart.js';
import { inTransaction, type Db } from '../../src/db/connection.js';
import { foldName } from '../../src/names.js';
import { seededRandom } from '../../src/seeded-random.js';

/**
 * A generated expense history for testing the categoriser: seeded and deterministic, several
 * thousand payments over dozens of payees, with the noise real books have: payees booked to
 * two accounts, bank descriptions with varying store numbers and cities, a payee reclassified
 * half-way, one-off payees, misspelt names and a share of plain booking mistakes.
 */

export interface GeneratedExpense {
  date: string;
  vendorName: string | null;
  description: string | null;
  amountCents: bigint;
  /** The standard chart's account name it was booked to. */
  accountName: string;
}


type Random = () => number;

interface Payee {
  /** How often it is paid, relative to the others. */
  frequency: number;
  /** Its vendor record's name; null when the bank line is all the books have. */
  vendorName: string | null;
  /** Share of payments that carry the vendor record although the payee is bank-style. */
  namedShare?: number;
  description: (random: Random) => string | null;
  /** Accounts with their shares; a payee paid for two kinds of thing has two. */
  accounts: Array<[accountName: string, share: number, medianCents: number]>;
  /** From this share of the period on, every payment goes to this account instead (a reclassification). */
  movesTo?: [fromShare: number, accountName: string];
}

const CITIES: Array<[string, string]> = [
  ['AUSTIN', 'TX'], ['DALLAS', 'TX'], ['HOUSTON', 'TX'], ['DENVER', 'CO'], ['OAKLAND', 'CA'], ['SEATTLE', 'WA'],
  ['PORTLAND', 'OR'], ['CHICAGO', 'IL'], ['BOSTON', 'MA'], ['PHOENIX', 'AZ'], ['ATLANTA', 'GA'], ['MIAMI', 'FL'],
];

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const digits = (random: Random, count: number) => Array.from({ length: count }, () => Math.floor(random() * 10)).join('');
const city = (random: Random) => pick(random, CITIES).join(' ');
const memo = (...options: Array<string | null>) => (random: Random) => pick(random, options);

const PAYEES: Payee[] = [
  // Fuel, travel and rides, mostly as bank lines.
  { frequency: 9, vendorName: null, namedShare: 0, description: (r) => `SHELL OIL ${digits(r, 5)} ${city(r)}`, accounts: [['Travel', 1, 4500]] },
  { frequency: 5, vendorName: 'Chevron', namedShare: 0.3, description: (r) => `CHEVRON ${digits(r, 7)} ${city(r)}`, accounts: [['Travel', 1, 5200]] },
  { frequency: 6, vendorName: 'Uber', description: () => 'UBER *TRIP HELP.UBER.COM', accounts: [['Travel', 1, 2400]] },
  { frequency: 3, vendorName: null, description: (r) => `LYFT *RIDE ${pick(r, ['MON', 'TUE', 'WED', 'THU', 'FRI'])} ${digits(r, 1)}PM`, accounts: [['Travel', 1, 1900]] },
  { frequency: 3, vendorName: 'Delta Air Lines', description: memo(null, 'Flight to client site', 'Conference travel'), accounts: [['Travel', 1, 42000]] },
  { frequency: 2, vendorName: null, description: (r) => `MARRIOTT ${city(r)}`, accounts: [['Travel', 1, 31000]] },
  { frequency: 2, vendorName: 'Hertz', description: memo(null, 'Car rental'), accounts: [['Travel', 1, 18000]] },
  // Meals.
  { frequency: 8, vendorName: null, namedShare: 0, description: (r) => `STARBUCKS STORE #${digits(r, 5)} ${city(r)}`, accounts: [['Meals', 1, 1100]] },
  { frequency: 4, vendorName: 'Blue Bottle Coffee', namedShare: 0.5, description: (r) => `SQ *BLUE BOTTLE COFFEE ${city(r)}`, accounts: [['Meals', 1, 1400]] },
  { frequency: 4, vendorName: "Joe's Diner", description: memo(null, 'Team lunch', 'Client lunch'), accounts: [['Meals', 1, 6500]] },
  { frequency: 3, vendorName: 'Uber Eats', description: () => 'UBER EATS PENDING', accounts: [['Meals', 1, 3800]] },
  { frequency: 3, vendorName: null, description: (r) => `DOORDASH*${pick(r, ['CHIPOTLE', 'SWEETGREEN', 'PANDA EXPRESS', 'THAI BASIL'])}`, accounts: [['Meals', 1, 3100]] },
  { frequency: 2, vendorName: 'Taqueria El Sol', description: memo(null), accounts: [['Meals', 1, 2900]] },
  // Software.
  { frequency: 3, vendorName: 'Adobe', description: memo('Creative Cloud', 'ADOBE CREATIVE CLOUD', null), accounts: [['Software and Subscriptions', 1, 5999]] },
  { frequency: 3, vendorName: 'GitHub', description: memo(null, 'Team plan'), accounts: [['Software and Subscriptions', 1, 4400]] },
  { frequency: 3, vendorName: 'Slack', description: memo(null), accounts: [['Software and Subscriptions', 1, 8750]] },
  { frequency: 3, vendorName: null, description: (r) => `ZOOM.US 888-799-${digits(r, 4)} CA`, accounts: [['Software and Subscriptions', 1, 1599]] },
  { frequency: 3, vendorName: 'Amazon Web Services', description: memo('AWS monthly', null), accounts: [['Software and Subscriptions', 1, 23000]] },
  { frequency: 2, vendorName: 'Notion Labs', description: memo(null), accounts: [['Office Supplies', 1, 1000]], movesTo: [0.5, 'Software and Subscriptions'] },
  // Office supplies and equipment; some payees sell both.
  { frequency: 4, vendorName: 'Staples', description: memo(null, 'Printer paper', 'Toner'), accounts: [['Office Supplies', 1, 4200]] },
  { frequency: 3, vendorName: null, description: (r) => `OFFICE DEPOT #${digits(r, 4)} ${city(r)}`, accounts: [['Office Supplies', 1, 3600]] },
  { frequency: 6, vendorName: 'Amazon', description: (r) => `AMZN Mktp US*${digits(r, 2)}${pick(r, ['K4', 'HG', 'X7', 'Q2'])}${digits(r, 3)}`, accounts: [['Office Supplies', 0.6, 3500], ['Equipment', 0.4, 52000]] },
  { frequency: 3, vendorName: 'Costco', description: memo(null), accounts: [['Meals', 0.5, 9000], ['Office Supplies', 0.5, 12000]] },
  { frequency: 2, vendorName: 'Home Depot', description: memo(null, 'Shelving'), accounts: [['Office Supplies', 0.7, 6000], ['Equipment', 0.3, 40000]] },
  { frequency: 2, vendorName: 'Best Buy', description: memo(null, 'Monitor'), accounts: [['Equipment', 0.8, 35000], ['Office Supplies', 0.2, 4000]] },
  // Utilities.
  { frequency: 2, vendorName: 'Comcast Business', description: memo('Internet', null), accounts: [['Utilities', 1, 12900]] },
  { frequency: 2, vendorName: 'PG&E', description: memo('Electric bill', null), accounts: [['Utilities', 1, 21000]] },
  { frequency: 2, vendorName: null, description: (r) => `VZWRLSS*APOCC VISB ${digits(r, 6)}`, accounts: [['Utilities', 1, 8800]] },
  { frequency: 1, vendorName: 'City of Austin Water', description: memo(null), accounts: [['Utilities', 1, 6400]] },
  // Advertising.
  { frequency: 3, vendorName: 'Google Ads', description: memo(null), accounts: [['Advertising and Marketing', 1, 15000]] },
  { frequency: 3, vendorName: null, description: (r) => `FACEBK *${pick(r, ['A', 'B', 'K', 'Z'])}${digits(r, 6)}`, accounts: [['Advertising and Marketing', 1, 9000]] },
  { frequency: 1, vendorName: 'Mailchimp', description: memo(null, 'Newsletter plan'), accounts: [['Advertising and Marketing', 1, 3500]] },
  // Fees, insurance, rent, professionals, contractors.
  { frequency: 2, vendorName: null, description: memo('MONTHLY SERVICE FEE', 'WIRE TRANSFER FEE', 'MONTHLY MAINTENANCE FEE'), accounts: [['Bank Fees', 1, 1500]] },
  { frequency: 1, vendorName: 'State Farm', description: memo('Business policy', null), accounts: [['Insurance', 1, 32000]] },
  { frequency: 1, vendorName: 'Hiscox', description: memo(null), accounts: [['Insurance', 1, 8500]] },
  { frequency: 1, vendorName: 'Parkview Properties LLC', description: memo('Office rent', null), accounts: [['Rent', 1, 250000]] },
  { frequency: 1, vendorName: 'WeWork', description: memo(null), accounts: [['Rent', 1, 45000]] },
  { frequency: 1, vendorName: 'Smith & Co CPAs', description: memo('Quarterly bookkeeping', null), accounts: [['Professional Fees', 1, 60000]] },
  { frequency: 1, vendorName: 'Baker Legal LLP', description: memo(null, 'Contract review'), accounts: [['Professional Fees', 1, 90000]] },
  { frequency: 2, vendorName: 'Upwork', description: memo(null), accounts: [['Contractors', 1, 70000]] },
  { frequency: 2, vendorName: 'Jane Doe Design', description: memo('Logo work', null), accounts: [['Contractors', 0.8, 80000], ['Advertising and Marketing', 0.2, 40000]] },
  { frequency: 1, vendorName: 'Maria Lopez', description: memo(null), accounts: [['Contractors', 1, 50000]] },
];

const ONE_OFF_WORDS = ['Granite', 'Harbor', 'Maple', 'Summit', 'Willow', 'Copper', 'Cedar', 'Lakeside', 'Northgate', 'Riverbend', 'Orchard', 'Prairie'];
const ONE_OFF_KINDS = ['Supply', 'Studio', 'Works', 'Trading', 'Services', 'Outfitters', 'Collective', 'Partners'];
const EXPENSE_ACCOUNTS = [
  'Advertising and Marketing', 'Bank Fees', 'Contractors', 'Insurance', 'Meals', 'Office Supplies',
  'Professional Fees', 'Rent', 'Software and Subscriptions', 'Travel', 'Utilities',
];

/** Share of payments to a one-off payee, of plain booking mistakes, and of misspelt vendor names. */
const ONE_OFF_SHARE = 0.03;
const MISTAKE_SHARE = 0.02;
const MISSPELT_SHARE = 0.03;

/** Swaps two neighbouring letters: the typo a hurried bookkeeper makes. */
function misspell(random: Random, name: string): string {
  const letters = [...name];
  const candidates = letters.map((_, i) => i).filter((i) => i + 1 < letters.length && /\p{L}/u.test(letters[i] as string) && /\p{L}/u.test(letters[i + 1] as string) && letters[i] !== letters[i + 1]);
  if (candidates.length === 0) return name;
  const at = pick(random, candidates);
  [letters[at], letters[at + 1]] = [letters[at + 1] as string, letters[at] as string];
  return letters.join('');
}

function lognormalCents(random: Random, medianCents: number): bigint {
  // Box-Muller on two uniforms; a spread of about +-40 %.
  const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return BigInt(Math.max(100, Math.round(medianCents * Math.exp(0.35 * normal))));
}

function dateOf(dayIndex: number, startDate: string): string {
  const at = new Date(`${startDate}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + dayIndex);
  return at.toISOString().slice(0, 10);
}

/** `count` payments over `days` days from `startDate`, oldest first. */
export function generateExpenseHistory(seed: number, count = 5000, startDate = '2024-01-01', days = 730): GeneratedExpense[] {
  const random = seededRandom(seed);
  const totalFrequency = PAYEES.reduce((sum, payee) => sum + payee.frequency, 0);
  const dayIndexes = Array.from({ length: count }, () => Math.floor(random() * days)).sort((a, b) => a - b);
  return dayIndexes.map((dayIndex) => {
    const date = dateOf(dayIndex, startDate);
    if (random() < ONE_OFF_SHARE) {
      const name = `${pick(random, ONE_OFF_WORDS)} ${pick(random, ONE_OFF_WORDS)} ${pick(random, ONE_OFF_KINDS)} ${digits(random, 3)}`;
      return { date, vendorName: name, description: null, amountCents: lognormalCents(random, 20000), accountName: pick(random, EXPENSE_ACCOUNTS) };
    }
    let roll = random() * totalFrequency;
    let payee = PAYEES[0] as Payee;
    for (const candidate of PAYEES) {
      roll -= candidate.frequency;
      if (roll < 0) {
        payee = candidate;
        break;
      }
    }
    let roll2 = random();
    let [accountName, , medianCents] = payee.accounts[0] as [string, number, number];
    for (const [name, share, median] of payee.accounts) {
      roll2 -= share;
      if (roll2 < 0) {
        [accountName, medianCents] = [name, median];
        break;
      }
    }
    if (payee.movesTo && dayIndex >= payee.movesTo[0] * days) accountName = payee.movesTo[1];
    const amountCents = lognormalCents(random, medianCents);
    if (random() < MISTAKE_SHARE) accountName = pick(random, EXPENSE_ACCOUNTS.filter((name) => name !== accountName));
    const description = payee.description(random);
    let vendorName = payee.vendorName;
    if (vendorName !== null && payee.namedShare !== undefined && random() >= payee.namedShare) vendorName = null;
    if (vendorName !== null && random() < MISSPELT_SHARE) vendorName = misspell(random, vendorName);
    return { date, vendorName, description, amountCents, accountName };
  });
}

/**
 * Writes the payments as booked history, straight into vendors and transactions (accepted, a
 * few edited: the categoriser reads no journal), one transaction for all. Vendors are found or
 * created by exact name in the business's tenant.
 */
export function insertExpenseHistory(db: Db, business: Business, expenses: readonly GeneratedExpense[]): void {
  const accountIds = new Map(listPostableAccounts(db, business.id).map((account) => [account.name, account.id]));
  const findVendor = db.prepare('SELECT id FROM vendors WHERE tenant_id = ? AND name = ?');
  const insertVendor = db.prepare('INSERT INTO vendors (id, tenant_id, name, name_key, created_at) VALUES (?, ?, ?, ?, ?)');
  const insertTransaction = db.prepare(
    `INSERT INTO transactions (id, business_id, txn_date, amount_cents, direction, vendor_id, ledger_account_id, status, source, description, created_at)
     VALUES (?, ?, ?, ?, 'out', ?, ?, ?, ?, ?, ?)`,
  );
  const vendorIds = new Map<string, string>();
  const vendorId = (name: string): string => {
    let id = vendorIds.get(name) ?? (findVendor.get(business.tenantId, name) as { id: string } | undefined)?.id;
    if (id === undefined) {
      id = `vendor-${business.id}-${vendorIds.size}`;
      insertVendor.run(id, business.tenantId, name, foldName(name), '2024-01-01T00:00:00.000Z');
    }
    vendorIds.set(name, id);
    return id;
  };
  inTransaction(db, () => {
    expenses.forEach((expense, index) => {
      const accountId = accountIds.get(expense.accountName);
      if (accountId === undefined) throw new Error(`no postable account named ${expense.accountName}`);
      insertTransaction.run(
        `txn-${business.id}-${String(index).padStart(6, '0')}`,
        business.id,
        expense.date,
        expense.amountCents,
        expense.vendorName === null ? null : vendorId(expense.vendorName),
        accountId,
        index % 10 === 0 ? 'edited' : 'accepted',
        expense.vendorName === null ? 'csv' : 'manual',
        expense.description,
        `${expense.date}T12:00:00.000Z`,
      );
    });
  });
}
