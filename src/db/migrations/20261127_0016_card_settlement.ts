import type { Knex } from 'knex';
import { nowIso, systemClock } from '../../clock.js';
import { newId } from '../../ids.js';
import type { Db } from '../connection.js';
import { rebuildTable } from '../rebuild.js';

/**
 * Card payments reach the books as money really is:
 * - three system accounts in every chart: "Card payments clearing" (an asset: the processor
 *   holds the money until it pays out), "Payment processing fees" (an expense) and "Customer
 *   deposits" (a liability: a card payment beyond what the invoice still owed);
 * - `journal_entries.source_type` may be `card_payment`: a card payment that applied to no
 *   invoice (it was paid or voided meanwhile) posts under its own name;
 * - `card_payments` keeps what was posted: the processor's balance transaction, the US-dollar
 *   gross and fee, what was applied to the invoice and what went to deposits. A posted row no
 *   longer needs an invoice payment (nothing may have been applied), and cannot change.
 *   Refunds and disputes the processor reports are kept in `card_notices` for Today;
 * - `job_runs.name` may be `card-payments`, the job that asks the processor for paid sessions
 *   and posts what is received.
 *
 * Four tables are rebuilt (their CHECK lists widen), in one transaction each, outside knex's;
 * the accounts are added where a business has none of the role. Run again on its own result
 * (a crash before knex records the migration) it changes nothing.
 */

const DATE = (column: string) => `CHECK (${column} GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]')`;
const BOOL = (column: string) => `${column} INTEGER NOT NULL DEFAULT 0 CHECK (${column} IN (0,1))`;

export const config = { transaction: false };

/** The accounts added, where each goes (beside which system account) and the codes it tries. */
const NEW_ACCOUNTS = [
  { role: 'card_clearing', name: 'Card Payments Clearing', type: 'asset', besideRole: 'bank', firstCode: 1130 },
  { role: 'customer_deposits', name: 'Customer Deposits', type: 'liability', besideRole: 'accounts_payable', firstCode: 2400 },
  { role: 'payment_fees', name: 'Payment Processing Fees', type: 'expense', besideRole: 'uncategorized_expense', firstCode: 6125 },
] as const;

/** How far past its first code an added account looks for one the business has not used. */
const CODES_TRIED = 1000;

export async function up(knex: Knex): Promise<void> {
  const db = (await knex.client.acquireConnection()) as Db;
  try {
    rebuildTable(db, { table: 'ledger_accounts', create: ledgerAccounts });
    rebuildTable(db, { table: 'journal_entries', create: journalEntries });
    rebuildTable(db, { table: 'card_payments', create: cardPayments });
    rebuildTable(db, { table: 'job_runs', create: jobRuns });
    db.transaction(() => {
      for (const sql of NOTICES) db.exec(sql);
      addAccounts(db);
    }).immediate();
  } finally {
    await knex.client.releaseConnection(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}

const ledgerAccounts = (name: string) => `CREATE TABLE ${name} (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    parent_id TEXT REFERENCES ledger_accounts(id),
    code TEXT NOT NULL CHECK (length(code) BETWEEN 1 AND 20),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    type TEXT NOT NULL CHECK (type IN ('asset','liability','equity','revenue','expense')),
    ${BOOL('is_heading')},
    ${BOOL('archived')},
    system_role TEXT CHECK (system_role IN ('bank','accounts_receivable','accounts_payable','sales_tax_payable',
      'owner_equity','retained_earnings','sales','uncategorized_expense','fx_gain_loss',
      'card_clearing','payment_fees','customer_deposits')),
    created_at TEXT NOT NULL,
    UNIQUE (business_id, code),
    UNIQUE (business_id, system_role)
  ) STRICT`;

const journalEntries = (name: string) => `CREATE TABLE ${name} (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    entry_date TEXT NOT NULL ${DATE('entry_date')},
    memo TEXT CHECK (length(memo) <= 2000),
    source_type TEXT NOT NULL CHECK (source_type IN ('invoice','invoice_payment','expense','review_accept',
      'bill','bill_payment','reversal','opening_balance','manual','card_payment')),
    source_id TEXT,
    reverses_entry_id TEXT REFERENCES journal_entries(id),
    line_count INTEGER NOT NULL CHECK (line_count >= 2),
    actor TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT`;

/**
 * A posted card payment holds its settlement: the balance transaction, the US-dollar gross the
 * clearing account received and the fee, the part of the amount (in the invoice's currency)
 * applied to the invoice, with its invoice payment when that part is not zero, and the US
 * dollars that went to customer deposits.
 */
const cardPayments = (name: string) => `CREATE TABLE ${name} (
    session_id TEXT NOT NULL CHECK (length(session_id) BETWEEN 1 AND 255),
    business_id TEXT NOT NULL REFERENCES businesses(id),
    invoice_id TEXT NOT NULL REFERENCES invoices(id),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    currency TEXT NOT NULL CHECK (currency IN ('USD','EUR','GBP','CAD','MXN')),
    paid_on TEXT NOT NULL ${DATE('paid_on')},
    payment_intent_id TEXT CHECK (payment_intent_id IS NULL OR length(payment_intent_id) BETWEEN 1 AND 255),
    received_via TEXT NOT NULL CHECK (received_via IN ('webhook','return','job')),
    received_at TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'received' CHECK (state IN ('received','posted')),
    payment_id TEXT REFERENCES invoice_payments(id),
    posted_at TEXT,
    balance_transaction_id TEXT CHECK (balance_transaction_id IS NULL OR length(balance_transaction_id) BETWEEN 1 AND 255),
    settlement_currency TEXT CHECK (settlement_currency IS NULL OR settlement_currency GLOB '[A-Z][A-Z][A-Z]'),
    gross_usd_cents INTEGER CHECK (gross_usd_cents IS NULL OR gross_usd_cents >= 0),
    fee_usd_cents INTEGER CHECK (fee_usd_cents IS NULL OR fee_usd_cents >= 0),
    applied_cents INTEGER CHECK (applied_cents IS NULL OR (applied_cents >= 0 AND applied_cents <= amount_cents)),
    deposit_usd_cents INTEGER CHECK (deposit_usd_cents IS NULL OR deposit_usd_cents >= 0),
    journal_entry_id TEXT REFERENCES journal_entries(id),
    CHECK (
      (state = 'received' AND payment_id IS NULL AND posted_at IS NULL AND balance_transaction_id IS NULL AND settlement_currency IS NULL
        AND gross_usd_cents IS NULL AND fee_usd_cents IS NULL AND applied_cents IS NULL AND deposit_usd_cents IS NULL AND journal_entry_id IS NULL)
      OR
      (state = 'posted' AND posted_at IS NOT NULL AND balance_transaction_id IS NOT NULL AND settlement_currency IS NOT NULL
        AND gross_usd_cents IS NOT NULL AND fee_usd_cents IS NOT NULL AND applied_cents IS NOT NULL AND deposit_usd_cents IS NOT NULL
        AND (payment_id IS NOT NULL) = (applied_cents > 0))
    ),
    PRIMARY KEY (business_id, session_id)
  ) STRICT`;

const TIME = (column: string) => `CHECK (${column} IS NULL OR ${column} GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z')`;

const jobRuns = (name: string) => `CREATE TABLE ${name} (
    name TEXT PRIMARY KEY CHECK (name IN ('rates','overdue','outbox','backup','housekeeping','card-payments')),
    schedule TEXT,
    last_started_at TEXT ${TIME('last_started_at')},
    last_finished_at TEXT ${TIME('last_finished_at')},
    last_outcome TEXT CHECK (last_outcome IS NULL OR last_outcome IN ('running','ok','failed')),
    last_duration_ms INTEGER CHECK (last_duration_ms IS NULL OR last_duration_ms >= 0),
    last_result TEXT CHECK (last_result IS NULL OR json_valid(last_result)),
    last_error TEXT,
    runs INTEGER NOT NULL DEFAULT 0 CHECK (runs >= 0),
    failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
    next_run_at TEXT ${TIME('next_run_at')},
    updated_at TEXT NOT NULL ${TIME('updated_at')}
  ) STRICT`;

const NOTICES = [
  `CREATE TABLE IF NOT EXISTS card_notices (
    event_id TEXT NOT NULL CHECK (length(event_id) BETWEEN 1 AND 255),
    business_id TEXT NOT NULL REFERENCES businesses(id),
    kind TEXT NOT NULL CHECK (kind IN ('refund','dispute')),
    payment_intent_id TEXT CHECK (payment_intent_id IS NULL OR length(payment_intent_id) BETWEEN 1 AND 255),
    invoice_id TEXT REFERENCES invoices(id),
    amount_cents INTEGER NOT NULL CHECK (amount_cents >= 0),
    currency TEXT NOT NULL CHECK (currency GLOB '[A-Z][A-Z][A-Z]'),
    reported_on TEXT NOT NULL ${DATE('reported_on')},
    received_at TEXT NOT NULL,
    PRIMARY KEY (business_id, event_id)
  ) STRICT`,
  'CREATE INDEX IF NOT EXISTS card_notices_reported ON card_notices(business_id, reported_on)',
  'CREATE INDEX IF NOT EXISTS card_notices_invoice ON card_notices(invoice_id)',
  'CREATE INDEX IF NOT EXISTS card_payments_entry ON card_payments(journal_entry_id)',
  `CREATE TRIGGER IF NOT EXISTS card_notices_kept BEFORE DELETE ON card_notices
   BEGIN SELECT RAISE(ABORT, 'card notices are kept: the processor reported them'); END`,
  `CREATE TRIGGER IF NOT EXISTS card_notices_fixed BEFORE UPDATE ON card_notices
   BEGIN SELECT RAISE(ABORT, 'a card notice keeps what the processor reported'); END`,
  `CREATE TRIGGER IF NOT EXISTS card_payments_posted_fixed BEFORE UPDATE ON card_payments WHEN OLD.state = 'posted'
   BEGIN SELECT RAISE(ABORT, 'a posted card payment is in the books and cannot change'); END`,
];

/** Each business gets the accounts of the roles it lacks, beside its related system account, under a code it has not used. */
function addAccounts(db: Db): void {
  const businesses = db.prepare('SELECT id FROM businesses ORDER BY id').pluck().all() as string[];
  const createdAt = nowIso(systemClock);
  for (const businessId of businesses) {
    const used = new Set(db.prepare('SELECT code FROM ledger_accounts WHERE business_id = ?').pluck().all(businessId) as string[]);
    for (const account of NEW_ACCOUNTS) {
      if (db.prepare('SELECT 1 FROM ledger_accounts WHERE business_id = ? AND system_role = ?').get(businessId, account.role)) continue;
      const beside = db.prepare('SELECT parent_id FROM ledger_accounts WHERE business_id = ? AND system_role = ?').get(businessId, account.besideRole) as
        | { parent_id: string | null }
        | undefined;
      const code = freeCode(used, account.firstCode);
      used.add(code);
      db.prepare(
        `INSERT INTO ledger_accounts (id, business_id, parent_id, code, name, type, is_heading, archived, system_role, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?, ?)`,
      ).run(newId(), businessId, beside?.parent_id ?? null, code, account.name, account.type, account.role, createdAt);
    }
  }
}

function freeCode(used: Set<string>, first: number): string {
  for (let code = first; code < first + CODES_TRIED; code += 1) if (!used.has(String(code))) return String(code);
  throw new Error(`no free account code from ${first} to ${first + CODES_TRIED - 1}`);
}
