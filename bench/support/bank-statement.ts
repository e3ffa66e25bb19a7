import { seededRandom } from '../../src/seeded-random.js';
import type { GeneratedExpense } from './expense-history.js';
import { generateExpenseHistory } from './expense-history.js';

/**
 * Held-out bank statements in the noisy style banks really write, for measuring the
 * categoriser (bench/categorise.ts): payments to the same payees the history was booked to,
 * later in time, each written as a bank line. A card or processor prefix (`POS DEBIT`,
 * `CHECKCARD 0412`, `PURCHASE AUTHORIZED ON 04/12`, `SQ *`, `TST*`, `PAYPAL *`), a store or
 * reference number, a city and state, doubled spaces and any letter case wrap the merchant's
 * name; half the rows leave the vendor column empty. Beside them: everyday merchants the
 * history never saw, and lines that say nothing (a transfer, a check number).
 */

export type HeldOutKind = 'known' | 'unseen' | 'meaningless';

export interface HeldOutRow {
  kind: HeldOutKind;
  date: string;
  description: string;
  /** The vendor column; null when the bank gave none. */
  vendorName: string | null;
  amountCents: bigint;
  /** The account the payment belongs to (a chart account's name); null for a line that says nothing. */
  accountName: string | null;
}

type Random = () => number;

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const digits = (random: Random, count: number) => Array.from({ length: count }, () => Math.floor(random() * 10)).join('');
const CITIES = ['AUSTIN TX', 'DALLAS TX', 'DENVER CO', 'OAKLAND CA', 'SEATTLE WA', 'CHICAGO IL', 'BOSTON MA', 'MIAMI FL', 'PHOENIX AZ', 'RENO NV'];

function monthDay(random: Random): string {
  return `${String(1 + Math.floor(random() * 12)).padStart(2, '0')}${String(1 + Math.floor(random() * 28)).padStart(2, '0')}`;
}

/** The ways a card line starts. */
const PREFIXES: Array<(random: Random) => string> = [
  () => '',
  () => 'POS DEBIT ',
  (r) => `CHECKCARD ${monthDay(r)} `,
  (r) => {
    const md = monthDay(r);
    return `PURCHASE AUTHORIZED ON ${md.slice(0, 2)}/${md.slice(2)} `;
  },
  () => 'DEBIT CARD PURCHASE ',
  () => 'SQ *',
  () => 'TST* ',
  () => 'PAYPAL *',
];

/** The ways it ends. */
const SUFFIXES: Array<(random: Random) => string> = [
  () => '',
  (r) => ` ${pick(r, CITIES)}`,
  (r) => ` #${digits(r, 4)} ${pick(r, CITIES)}`,
  (r) => ` ${digits(r, 6)} ${pick(r, CITIES)}`,
  (r) => ` REF ${digits(r, 8)}`,
  (r) => ` CARD ${digits(r, 4)}`,
];

function bankCase(random: Random, text: string): string {
  const roll = random();
  if (roll < 0.6) return text.toUpperCase();
  if (roll < 0.8) return text;
  return text.toLowerCase();
}

/** The payment as the bank prints it. A line the history already wrote bank-style keeps its own noise. */
function bankLine(random: Random, expense: GeneratedExpense): string {
  const name = expense.vendorName ?? expense.description ?? 'CARD PURCHASE';
  const alreadyBankStyle = expense.vendorName === null;
  const body = alreadyBankStyle ? name : `${pick(random, PREFIXES)(random)}${name}${pick(random, SUFFIXES)(random)}`;
  const spaced = random() < 0.2 ? body.replace(/ /g, '  ') : body;
  return bankCase(random, spaced).slice(0, 200);
}

const UNSEEN_MERCHANTS: Array<[string, string]> = [
  ['WALGREENS', 'Office Supplies'],
  ['CVS PHARMACY', 'Office Supplies'],
  ['TARGET', 'Office Supplies'],
  ['MCDONALDS', 'Meals'],
  ['SUBWAY', 'Meals'],
  ['EXXONMOBIL', 'Travel'],
  ['SOUTHWEST AIRLINES', 'Travel'],
  ['HILTON HOTELS', 'Travel'],
  ['DROPBOX', 'Software and Subscriptions'],
  ['FEDEX OFFICE', 'Office Supplies'],
  ['USPS PO', 'Office Supplies'],
  ['PANERA BREAD', 'Meals'],
  ['AT&T WIRELESS', 'Utilities'],
  ['LINKEDIN ADS', 'Advertising and Marketing'],
  ['SHOPIFY', 'Software and Subscriptions'],
];

const MEANINGLESS: Array<(random: Random) => string> = [
  (r) => `ONLINE TRANSFER TO CHK ...${digits(r, 4)} TRANSACTION#: ${digits(r, 10)}`,
  (r) => `CHECK ${digits(r, 4)}`,
  (r) => `WITHDRAWAL ${digits(r, 6)}`,
  (r) => `DEBIT ${digits(r, 8)}`,
  (r) => `ATM WITHDRAWAL ${digits(r, 6)} ${pick(r, CITIES)}`,
  () => 'MISC DEBIT',
  (r) => `ACH DEBIT ${digits(r, 10)}`,
  (r) => `POS ${digits(r, 12)}`,
];

function isOneOff(expense: GeneratedExpense): boolean {
  return expense.description === null && expense.vendorName !== null && /\d{3}$/.test(expense.vendorName);
}

export interface HeldOutPlan {
  seed: number;
  /** Payments to the history's payees, written as bank lines. */
  known: number;
  unseen: number;
  meaningless: number;
  /** The held-out period: after the history ends. */
  startDate: string;
  days: number;
}

/**
 * The held-out statement: `known` payments drawn the way the history was (the same payees and
 * account shares, a later period, another seed), every one written as a bank line, half of them
 * without the vendor column; then `unseen` and `meaningless` rows, all shuffled together.
 */
export function generateHeldOutStatement(plan: HeldOutPlan): HeldOutRow[] {
  const random = seededRandom(plan.seed);
  const payments = generateExpenseHistory(plan.seed, plan.known, plan.startDate, plan.days);
  const rows: HeldOutRow[] = payments.map((expense, index) => ({
    // A one-off payee (a vendor named once, without a description) is one the history never saw.
    kind: isOneOff(expense) ? 'unseen' : 'known',
    date: expense.date,
    description: bankLine(random, expense),
    vendorName: index % 2 === 0 ? expense.vendorName : null,
    amountCents: expense.amountCents,
    accountName: expense.accountName,
  }));
  const dateIn = () => payments[Math.floor(random() * payments.length)]!.date;
  for (let i = 0; i < plan.unseen; i++) {
    const [merchant, accountName] = pick(random, UNSEEN_MERCHANTS);
    rows.push({ kind: 'unseen', date: dateIn(), description: bankCase(random, `${pick(random, PREFIXES)(random)}${merchant}${pick(random, SUFFIXES)(random)}`), vendorName: null, amountCents: BigInt(500 + Math.floor(random() * 20000)), accountName });
  }
  for (let i = 0; i < plan.meaningless; i++) {
    rows.push({ kind: 'meaningless', date: dateIn(), description: pick(random, MEANINGLESS)(random), vendorName: null, amountCents: BigInt(1000 + Math.floor(random() * 90000)), accountName: null });
  }
  for (let i = rows.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [rows[i], rows[j]] = [rows[j]!, rows[i]!];
  }
  return rows;
}
