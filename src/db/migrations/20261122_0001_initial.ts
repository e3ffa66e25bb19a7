import type { Knex } from 'knex';

/**
 * The whole schema. STRICT tables with CHECK constraints, so the database itself refuses
 * money that is not whole non-negative cents, unknown states and unknown currencies.
 * Journal entries, journal lines and the audit log are append-only: triggers refuse
 * UPDATE and DELETE, so a correction can only be a new entry.
 */

const CURRENCY = `CHECK (currency IN ('USD','CAD','EUR','GBP','MXN'))`;
const BOOL = (column: string) => `${column} INTEGER NOT NULL DEFAULT 0 CHECK (${column} IN (0,1))`;
const DATE = (column: string) => `CHECK (${column} GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]')`;

export const statements: string[] = [
  `CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    plan TEXT NOT NULL CHECK (plan IN ('small','middle','large')),
    ${BOOL('api_access')},
    billing_state TEXT NOT NULL DEFAULT 'active' CHECK (billing_state IN ('active','past_due')),
    payment_terms_days INTEGER NOT NULL DEFAULT 30 CHECK (payment_terms_days BETWEEN 0 AND 365),
    rate_limit_mode TEXT NOT NULL DEFAULT 'plan' CHECK (rate_limit_mode IN ('plan','custom','off')),
    rate_limit_reads INTEGER CHECK (rate_limit_reads > 0),
    rate_limit_writes INTEGER CHECK (rate_limit_writes > 0),
    created_at TEXT NOT NULL,
    CHECK ((rate_limit_mode = 'custom') = (rate_limit_reads IS NOT NULL AND rate_limit_writes IS NOT NULL))
  ) STRICT`,

  `CREATE TABLE businesses (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    basis TEXT NOT NULL DEFAULT 'accrual' CHECK (basis IN ('accrual','cash')),
    payment_terms_days INTEGER CHECK (payment_terms_days BETWEEN 0 AND 365),
    next_invoice_number INTEGER NOT NULL DEFAULT 1001 CHECK (next_invoice_number > 0),
    created_at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX businesses_account ON businesses(account_id, name)`,

  // The chart of accounts. Headings group; only non-archived leaves take postings.
  `CREATE TABLE ledger_accounts (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    parent_id TEXT REFERENCES ledger_accounts(id),
    code TEXT NOT NULL CHECK (length(code) BETWEEN 1 AND 20),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    type TEXT NOT NULL CHECK (type IN ('asset','liability','equity','revenue','expense')),
    ${BOOL('is_heading')},
    ${BOOL('archived')},
    system_role TEXT CHECK (system_role IN ('bank','accounts_receivable','accounts_payable','sales_tax_payable',
      'owner_equity','retained_earnings','sales','uncategorized_expense','fx_gain_loss')),
    created_at TEXT NOT NULL,
    UNIQUE (business_id, code),
    UNIQUE (business_id, system_role)
  ) STRICT`,
  `CREATE INDEX ledger_accounts_parent ON ledger_accounts(parent_id)`,

  `CREATE TABLE customers (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    name_key TEXT NOT NULL,
    email TEXT CHECK (length(email) <= 320),
    phone TEXT CHECK (length(phone) <= 40),
    address_line1 TEXT CHECK (length(address_line1) <= 200),
    address_line2 TEXT CHECK (length(address_line2) <= 200),
    city TEXT CHECK (length(city) <= 200),
    state TEXT CHECK (length(state) <= 200),
    postal_code TEXT CHECK (length(postal_code) <= 200),
    currency TEXT NOT NULL DEFAULT 'USD' ${CURRENCY},
    payment_terms_days INTEGER CHECK (payment_terms_days BETWEEN 0 AND 365),
    ${BOOL('reminders_enabled')},
    ${BOOL('archived')},
    created_at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX customers_account_name ON customers(account_id, name_key)`,

  `CREATE TABLE vendors (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    ${BOOL('is_1099_eligible')},
    ${BOOL('archived')},
    created_at TEXT NOT NULL,
    UNIQUE (account_id, name)
  ) STRICT`,

  // Journal: immutable once written. Amounts are positive; direction says debit or credit.
  `CREATE TABLE journal_entries (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    entry_date TEXT NOT NULL ${DATE('entry_date')},
    memo TEXT CHECK (length(memo) <= 2000),
    source_type TEXT NOT NULL CHECK (source_type IN ('invoice','invoice_payment','expense','review_accept',
      'bill','bill_payment','reversal','opening_balance','manual')),
    source_id TEXT,
    reverses_entry_id TEXT REFERENCES journal_entries(id),
    line_count INTEGER NOT NULL CHECK (line_count >= 2),
    actor TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX journal_entries_business_date ON journal_entries(business_id, entry_date)`,
  `CREATE INDEX journal_entries_source ON journal_entries(source_type, source_id)`,
  // An entry is reversed at most once.
  `CREATE UNIQUE INDEX journal_entries_reversal ON journal_entries(reverses_entry_id) WHERE reverses_entry_id IS NOT NULL`,

  `CREATE TABLE journal_lines (
    id INTEGER PRIMARY KEY,
    entry_id TEXT NOT NULL REFERENCES journal_entries(id),
    line_no INTEGER NOT NULL CHECK (line_no >= 1),
    business_id TEXT NOT NULL REFERENCES businesses(id),
    ledger_account_id TEXT NOT NULL REFERENCES ledger_accounts(id),
    entry_date TEXT NOT NULL ${DATE('entry_date')},
    direction TEXT NOT NULL CHECK (direction IN ('debit','credit')),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0 AND amount_cents < 1000000000000000),
    basis TEXT NOT NULL CHECK (basis IN ('both','accrual','cash')),
    UNIQUE (entry_id, line_no)
  ) STRICT`,
  `CREATE INDEX journal_lines_business_date ON journal_lines(business_id, entry_date)`,
  `CREATE INDEX journal_lines_account_date ON journal_lines(ledger_account_id, entry_date)`,

  `CREATE TABLE transactions (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    txn_date TEXT NOT NULL ${DATE('txn_date')},
    amount_cents INTEGER NOT NULL CHECK (amount_cents >= 0),
    direction TEXT NOT NULL CHECK (direction IN ('out','in')),
    vendor_id TEXT REFERENCES vendors(id),
    ledger_account_id TEXT REFERENCES ledger_accounts(id),
    status TEXT NOT NULL CHECK (status IN ('pending','accepted','edited','uncategorized')),
    source TEXT NOT NULL CHECK (source IN ('manual','csv','email','ios','reconciliation','financial_connections')),
    description TEXT CHECK (length(description) <= 2000),
    rationale TEXT CHECK (length(rationale) <= 2000),
    journal_entry_id TEXT REFERENCES journal_entries(id),
    created_at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX transactions_business_date ON transactions(business_id, txn_date DESC, id DESC)`,
  `CREATE INDEX transactions_vendor ON transactions(vendor_id)`,

  `CREATE TABLE review_queue_items (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    transaction_id TEXT NOT NULL UNIQUE REFERENCES transactions(id),
    proposed_account_id TEXT REFERENCES ledger_accounts(id),
    confidence REAL CHECK (confidence BETWEEN 0 AND 1),
    rationale TEXT CHECK (length(rationale) <= 2000),
    accepted_at TEXT,
    created_at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX review_queue_open ON review_queue_items(business_id, accepted_at)`,

  `CREATE TABLE expenses (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    vendor_id TEXT NOT NULL REFERENCES vendors(id),
    ledger_account_id TEXT NOT NULL REFERENCES ledger_accounts(id),
    expense_date TEXT NOT NULL ${DATE('expense_date')},
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0 AND amount_cents < 1000000000000000),
    memo TEXT CHECK (length(memo) <= 2000),
    transaction_id TEXT REFERENCES transactions(id),
    journal_entry_id TEXT NOT NULL REFERENCES journal_entries(id),
    created_at TEXT NOT NULL
  ) STRICT`,

  `CREATE TABLE invoices (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    customer_id TEXT NOT NULL REFERENCES customers(id),
    number TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('draft','sent','viewed','partially_paid','paid','overdue','void')),
    currency TEXT NOT NULL ${CURRENCY},
    issue_date TEXT NOT NULL ${DATE('issue_date')},
    due_date TEXT NOT NULL ${DATE('due_date')},
    payment_terms_days INTEGER CHECK (payment_terms_days BETWEEN 0 AND 365),
    tax_rate_percent TEXT,
    subtotal_cents INTEGER NOT NULL CHECK (subtotal_cents >= 0 AND subtotal_cents < 1000000000000000),
    tax_cents INTEGER NOT NULL CHECK (tax_cents >= 0),
    total_cents INTEGER NOT NULL CHECK (total_cents >= 0 AND total_cents < 1000000000000000),
    paid_cents INTEGER NOT NULL DEFAULT 0 CHECK (paid_cents >= 0 AND paid_cents <= total_cents),
    memo TEXT CHECK (length(memo) <= 2000),
    pay_token TEXT NOT NULL UNIQUE,
    usd_per_unit TEXT,
    subtotal_usd_cents INTEGER CHECK (subtotal_usd_cents >= 0),
    tax_usd_cents INTEGER CHECK (tax_usd_cents >= 0),
    journal_entry_id TEXT REFERENCES journal_entries(id),
    sent_at TEXT,
    viewed_at TEXT,
    voided_at TEXT,
    created_at TEXT NOT NULL,
    CHECK (due_date >= issue_date),
    CHECK (total_cents = subtotal_cents + tax_cents),
    UNIQUE (business_id, number)
  ) STRICT`,
  `CREATE INDEX invoices_business_issue ON invoices(business_id, issue_date DESC, id DESC)`,
  `CREATE INDEX invoices_customer ON invoices(customer_id)`,

  `CREATE TABLE invoice_lines (
    id TEXT PRIMARY KEY,
    invoice_id TEXT NOT NULL REFERENCES invoices(id),
    line_no INTEGER NOT NULL CHECK (line_no >= 1),
    description TEXT NOT NULL CHECK (length(description) <= 2000),
    quantity TEXT NOT NULL,
    unit_price_cents INTEGER NOT NULL CHECK (unit_price_cents >= 0),
    amount_cents INTEGER NOT NULL CHECK (amount_cents >= 0 AND amount_cents < 1000000000000000),
    ledger_account_id TEXT NOT NULL REFERENCES ledger_accounts(id),
    UNIQUE (invoice_id, line_no)
  ) STRICT`,

  `CREATE TABLE invoice_payments (
    id TEXT PRIMARY KEY,
    invoice_id TEXT NOT NULL REFERENCES invoices(id),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    method TEXT NOT NULL CHECK (method IN ('check','cash','wire','other','stripe')),
    paid_at TEXT NOT NULL ${DATE('paid_at')},
    memo TEXT CHECK (length(memo) <= 2000),
    usd_per_unit TEXT,
    usd_cents INTEGER NOT NULL CHECK (usd_cents >= 0),
    journal_entry_id TEXT NOT NULL REFERENCES journal_entries(id),
    created_at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX invoice_payments_invoice ON invoice_payments(invoice_id)`,

  `CREATE TABLE invoice_reminders (
    id TEXT PRIMARY KEY,
    invoice_id TEXT NOT NULL REFERENCES invoices(id),
    reminded_at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX invoice_reminders_invoice ON invoice_reminders(invoice_id, reminded_at)`,

  `CREATE TABLE bills (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    vendor_id TEXT NOT NULL REFERENCES vendors(id),
    number TEXT NOT NULL CHECK (length(number) BETWEEN 1 AND 200),
    issue_date TEXT NOT NULL ${DATE('issue_date')},
    due_date TEXT NOT NULL ${DATE('due_date')},
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0 AND amount_cents < 1000000000000000),
    paid_cents INTEGER NOT NULL DEFAULT 0 CHECK (paid_cents >= 0 AND paid_cents <= amount_cents),
    ledger_account_id TEXT NOT NULL REFERENCES ledger_accounts(id),
    journal_entry_id TEXT NOT NULL REFERENCES journal_entries(id),
    created_at TEXT NOT NULL,
    CHECK (due_date >= issue_date),
    UNIQUE (business_id, vendor_id, number)
  ) STRICT`,

  `CREATE TABLE today_signals (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    kind TEXT NOT NULL,
    subject_id TEXT,
    severity TEXT NOT NULL CHECK (severity IN ('blocking','urgent','attention','informational')),
    sentence TEXT NOT NULL,
    action TEXT NOT NULL,
    evidence_json TEXT NOT NULL DEFAULT '[]',
    first_seen_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    closed_at TEXT
  ) STRICT`,
  `CREATE INDEX today_signals_open ON today_signals(business_id, closed_at)`,

  // Rates are decimal strings (USD per one unit), never floats.
  `CREATE TABLE exchange_rates (
    currency TEXT NOT NULL CHECK (currency IN ('CAD','EUR','GBP','MXN')),
    rate_date TEXT NOT NULL ${DATE('rate_date')},
    usd_per_unit TEXT NOT NULL CHECK (usd_per_unit GLOB '[0-9]*' AND usd_per_unit NOT GLOB '*[^0-9.]*'),
    source TEXT NOT NULL CHECK (source IN ('manual','frankfurter','ecb')),
    fetched_at TEXT NOT NULL,
    PRIMARY KEY (currency, rate_date)
  ) STRICT`,

  `CREATE TABLE period_locks (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    locked_through TEXT NOT NULL ${DATE('locked_through')},
    created_at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX period_locks_business ON period_locks(business_id, locked_through)`,

  // Only the SHA-256 fingerprint of a key is kept; the key itself is shown once.
  `CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    fingerprint TEXT NOT NULL UNIQUE CHECK (length(fingerprint) = 64),
    access TEXT NOT NULL CHECK (access IN ('read','read_write')),
    expires_on TEXT ${DATE('expires_on')},
    revoked_at TEXT,
    created_at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX api_keys_account ON api_keys(account_id)`,

  `CREATE TABLE api_key_businesses (
    api_key_id TEXT NOT NULL REFERENCES api_keys(id),
    business_id TEXT NOT NULL REFERENCES businesses(id),
    PRIMARY KEY (api_key_id, business_id)
  ) STRICT, WITHOUT ROWID`,

  `CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    business_id TEXT REFERENCES businesses(id),
    actor_type TEXT NOT NULL CHECK (actor_type IN ('api_key','cli','system')),
    actor_id TEXT,
    actor_name TEXT NOT NULL,
    action TEXT NOT NULL,
    subject_type TEXT,
    subject_id TEXT,
    detail_json TEXT NOT NULL DEFAULT '{}',
    at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX audit_log_account_at ON audit_log(account_id, at)`,

  `CREATE TABLE idempotency_records (
    api_key_id TEXT NOT NULL REFERENCES api_keys(id),
    idempotency_key TEXT NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 200),
    request_hash TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('in_progress','completed')),
    status_code INTEGER,
    response_json TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (api_key_id, idempotency_key),
    CHECK ((state = 'completed') = (status_code IS NOT NULL AND response_json IS NOT NULL))
  ) STRICT, WITHOUT ROWID`,
  `CREATE INDEX idempotency_expiry ON idempotency_records(expires_at)`,

  `CREATE TABLE email_outbox (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    business_id TEXT REFERENCES businesses(id),
    kind TEXT NOT NULL CHECK (kind IN ('invoice','reminder')),
    invoice_id TEXT REFERENCES invoices(id),
    to_address TEXT NOT NULL CHECK (length(to_address) <= 320),
    subject TEXT NOT NULL,
    body_text TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','sent','failed')),
    attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at TEXT NOT NULL,
    last_error TEXT,
    created_at TEXT NOT NULL,
    sent_at TEXT
  ) STRICT`,
  `CREATE INDEX email_outbox_due ON email_outbox(status, next_attempt_at)`,

  // Append-only tables: refuse every UPDATE and DELETE at the database level.
  ...['journal_entries', 'journal_lines', 'audit_log'].flatMap((table) => [
    `CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table}
     BEGIN SELECT RAISE(ABORT, '${table} rows are immutable; post a reversing entry instead'); END`,
    `CREATE TRIGGER ${table}_no_delete BEFORE DELETE ON ${table}
     BEGIN SELECT RAISE(ABORT, '${table} rows are immutable; post a reversing entry instead'); END`,
  ]),

  // A posted entry is closed: it has exactly the lines it was posted with. line_no runs from 1
  // to line_count and is unique per entry, so no line can be added afterwards.
  `CREATE TRIGGER journal_lines_closed_entry BEFORE INSERT ON journal_lines
   WHEN NEW.line_no > (SELECT line_count FROM journal_entries WHERE id = NEW.entry_id)
   BEGIN SELECT RAISE(ABORT, 'journal entry is closed: it already has all its lines'); END`,

  // Defence in depth behind the posting engine: a line must land on a postable leaf of the
  // entry's own business, on the entry's date.
  `CREATE TRIGGER journal_lines_postable BEFORE INSERT ON journal_lines
   WHEN NOT EXISTS (
     SELECT 1 FROM journal_entries e JOIN ledger_accounts a ON a.id = NEW.ledger_account_id
     WHERE e.id = NEW.entry_id AND e.business_id = NEW.business_id AND e.entry_date = NEW.entry_date
       AND a.business_id = e.business_id AND a.is_heading = 0 AND a.archived = 0)
   BEGIN SELECT RAISE(ABORT, 'journal line must post to a postable account of the entry''s business'); END`,
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('the initial schema cannot be rolled back; restore a backup instead');
}
