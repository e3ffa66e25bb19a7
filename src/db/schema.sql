CREATE INDEX api_keys_tenant ON api_keys(tenant_id);

CREATE INDEX audit_log_tenant_id ON audit_log(tenant_id, id);

CREATE INDEX bill_payments_bill ON bill_payments(bill_id, paid_on);

CREATE INDEX bills_open ON bills(business_id, closed_on);

CREATE INDEX businesses_tenant ON businesses(tenant_id, name);

CREATE INDEX card_notices_invoice ON card_notices(invoice_id);

CREATE INDEX card_notices_reported ON card_notices(business_id, reported_on);

CREATE INDEX card_payments_entry ON card_payments(journal_entry_id);

CREATE INDEX card_payments_invoice ON card_payments(invoice_id);

CREATE INDEX card_payments_payment ON card_payments(payment_id);

CREATE INDEX card_payments_received ON card_payments(state, received_at);

CREATE INDEX console_sessions_tenant ON console_sessions(tenant_id, created_at);

CREATE INDEX console_sign_in_links_tenant ON console_sign_in_links(tenant_id);

CREATE INDEX customers_tenant_name ON customers(tenant_id, name_key, id);

CREATE INDEX email_outbox_due ON email_outbox(status, next_attempt_at);

CREATE INDEX idempotency_expiry ON idempotency_records(expires_at);

CREATE INDEX invoice_payments_invoice ON invoice_payments(invoice_id);

CREATE INDEX invoice_reminders_invoice ON invoice_reminders(invoice_id, reminded_at);

CREATE INDEX invoices_aging ON invoices (business_id, closed_on, issue_date, due_date, number, customer_id,
     subtotal_usd_cents, tax_usd_cents, paid_receivable_usd_cents, last_paid_at, id, journal_entry_id) WHERE journal_entry_id IS NOT NULL;

CREATE INDEX invoices_customer ON invoices(customer_id);

CREATE INDEX invoices_open ON invoices(business_id, closed_on);

CREATE INDEX invoices_register ON invoices(business_id, issue_date DESC, created_at DESC, id DESC);

CREATE INDEX invoices_register_customer ON invoices(business_id, customer_id, issue_date DESC, created_at DESC, id DESC);

CREATE INDEX invoices_register_status ON invoices(business_id, status, issue_date DESC, created_at DESC, id DESC);

CREATE INDEX journal_entries_business_date ON journal_entries(business_id, entry_date);

CREATE UNIQUE INDEX journal_entries_reversal ON journal_entries(reverses_entry_id) WHERE reverses_entry_id IS NOT NULL;

CREATE INDEX journal_entries_source ON journal_entries(source_type, source_id);

CREATE INDEX journal_lines_account_date ON journal_lines(ledger_account_id, entry_date);

CREATE INDEX journal_lines_business_date ON journal_lines(business_id, entry_date);

CREATE INDEX ledger_accounts_parent ON ledger_accounts(parent_id);

CREATE INDEX period_locks_business ON period_locks(business_id, locked_through);

CREATE UNIQUE INDEX review_queue_recorded_expense ON review_queue_items(recorded_expense_id) WHERE recorded_expense_id IS NOT NULL;

CREATE INDEX review_queue_waiting ON review_queue_items(business_id, created_at, id) WHERE accepted_at IS NULL;

CREATE UNIQUE INDEX today_signals_one_open ON today_signals(business_id, kind, coalesce(subject_id, '')) WHERE closed_at IS NULL;

CREATE INDEX today_signals_open ON today_signals(business_id, closed_at);

CREATE UNIQUE INDEX transactions_import_fingerprint ON transactions(business_id, import_fingerprint) WHERE import_fingerprint IS NOT NULL;

CREATE INDEX transactions_register ON transactions(business_id, txn_date DESC, created_at DESC, id DESC);

CREATE INDEX transactions_register_account ON transactions(business_id, ledger_account_id, txn_date DESC, created_at DESC, id DESC) WHERE ledger_account_id IS NOT NULL;

CREATE INDEX transactions_register_status ON transactions(business_id, status, txn_date DESC, created_at DESC, id DESC);

CREATE INDEX transactions_register_vendor ON transactions(business_id, vendor_id, txn_date DESC, created_at DESC, id DESC) WHERE vendor_id IS NOT NULL;

CREATE INDEX vendors_tenant_name ON vendors(tenant_id, name_key, id);

CREATE TABLE access_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL CHECK (version >= 0)
  ) STRICT;

CREATE TABLE api_key_businesses (
    api_key_id TEXT NOT NULL REFERENCES api_keys(id),
    business_id TEXT NOT NULL REFERENCES businesses(id),
    PRIMARY KEY (api_key_id, business_id)
  ) STRICT, WITHOUT ROWID;

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES "tenants"(id),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    fingerprint TEXT NOT NULL UNIQUE CHECK (length(fingerprint) = 64),
    access TEXT NOT NULL CHECK (access IN ('read','read_write')),
    expires_on TEXT CHECK (expires_on GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    revoked_at TEXT,
    created_at TEXT NOT NULL
  ) STRICT;

CREATE TABLE "audit_log" (
    id INTEGER PRIMARY KEY,
    tenant_id TEXT REFERENCES tenants(id),
    business_id TEXT REFERENCES businesses(id),
    actor_type TEXT NOT NULL CHECK (actor_type IN ('api_key','cli','job','console','pay_page','webhook')),
    actor_id TEXT CHECK (actor_type <> 'api_key' OR actor_id IS NOT NULL),
    actor_name TEXT NOT NULL,
    command TEXT CHECK (command IS NULL OR actor_type = 'cli'),
    action TEXT NOT NULL,
    subject_type TEXT,
    subject_id TEXT,
    detail_json TEXT NOT NULL DEFAULT '{}',
    at TEXT NOT NULL,
    CHECK (tenant_id IS NOT NULL OR business_id IS NULL)
  ) STRICT;

CREATE TABLE bill_payments (
    id TEXT PRIMARY KEY,
    bill_id TEXT NOT NULL REFERENCES bills(id),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0 AND amount_cents < 1000000000000000),
    paid_on TEXT NOT NULL CHECK (paid_on GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    journal_entry_id TEXT NOT NULL REFERENCES journal_entries(id),
    created_at TEXT NOT NULL
  ) STRICT;

CREATE TABLE bills (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    vendor_id TEXT NOT NULL REFERENCES vendors(id),
    number TEXT NOT NULL CHECK (length(number) BETWEEN 1 AND 200),
    issue_date TEXT NOT NULL CHECK (issue_date GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    due_date TEXT NOT NULL CHECK (due_date GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0 AND amount_cents < 1000000000000000),
    paid_cents INTEGER NOT NULL DEFAULT 0 CHECK (paid_cents >= 0 AND paid_cents <= amount_cents),
    ledger_account_id TEXT NOT NULL REFERENCES ledger_accounts(id),
    journal_entry_id TEXT NOT NULL REFERENCES journal_entries(id),
    created_at TEXT NOT NULL, closed_on TEXT CHECK (closed_on GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    CHECK (due_date >= issue_date),
    UNIQUE (business_id, vendor_id, number)
  ) STRICT;

CREATE TABLE businesses (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES "tenants"(id),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    basis TEXT NOT NULL DEFAULT 'accrual' CHECK (basis IN ('accrual','cash')),
    payment_terms_days INTEGER CHECK (payment_terms_days BETWEEN 0 AND 365),
    next_invoice_number INTEGER NOT NULL DEFAULT 1001 CHECK (next_invoice_number > 0),
    created_at TEXT NOT NULL
  ) STRICT;

CREATE TABLE card_notices (
    event_id TEXT NOT NULL CHECK (length(event_id) BETWEEN 1 AND 255),
    business_id TEXT NOT NULL REFERENCES businesses(id),
    kind TEXT NOT NULL CHECK (kind IN ('refund','dispute')),
    payment_intent_id TEXT CHECK (payment_intent_id IS NULL OR length(payment_intent_id) BETWEEN 1 AND 255),
    invoice_id TEXT REFERENCES invoices(id),
    amount_cents INTEGER NOT NULL CHECK (amount_cents >= 0),
    currency TEXT NOT NULL CHECK (currency GLOB '[A-Z][A-Z][A-Z]'),
    reported_on TEXT NOT NULL CHECK (reported_on GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    received_at TEXT NOT NULL,
    PRIMARY KEY (business_id, event_id)
  ) STRICT;

CREATE TABLE "card_payments" (
    session_id TEXT NOT NULL CHECK (length(session_id) BETWEEN 1 AND 255),
    business_id TEXT NOT NULL REFERENCES businesses(id),
    invoice_id TEXT NOT NULL REFERENCES invoices(id),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    currency TEXT NOT NULL CHECK (currency IN ('USD','EUR','GBP','CAD','MXN')),
    paid_on TEXT NOT NULL CHECK (paid_on GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
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
  ) STRICT;

CREATE TABLE card_processors (
    business_id TEXT PRIMARY KEY REFERENCES businesses(id),
    processor TEXT NOT NULL CHECK (processor IN ('stripe')),
    endpoint_id TEXT NOT NULL UNIQUE CHECK (length(endpoint_id) = 22),
    secret_key TEXT NOT NULL CHECK (length(secret_key) BETWEEN 8 AND 255),
    webhook_secret TEXT NOT NULL CHECK (length(webhook_secret) BETWEEN 8 AND 255),
    connected_at TEXT NOT NULL
  ) STRICT;

CREATE TABLE console_sessions (
    id TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL UNIQUE CHECK (length(fingerprint) = 64),
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    created_at TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z'),
    last_seen_at TEXT NOT NULL CHECK (last_seen_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z'),
    expires_at TEXT NOT NULL CHECK (expires_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z'),
    ended_at TEXT CHECK (ended_at IS NULL OR ended_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z'),
    ended_by TEXT CHECK (ended_by IS NULL OR ended_by IN ('sign_out','revoked')),
    user_agent TEXT CHECK (user_agent IS NULL OR length(user_agent) <= 300),
    CHECK ((ended_at IS NULL) = (ended_by IS NULL))
  ) STRICT;

CREATE TABLE console_sign_in_links (
    fingerprint TEXT PRIMARY KEY CHECK (length(fingerprint) = 64),
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    created_at TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z'),
    expires_at TEXT NOT NULL CHECK (expires_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z'),
    used_at TEXT CHECK (used_at IS NULL OR used_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z'),
    CHECK (expires_at > created_at)
  ) STRICT;

CREATE TABLE customers (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES "tenants"(id),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    name_key TEXT NOT NULL,
    email TEXT CHECK (length(email) <= 320),
    phone TEXT CHECK (length(phone) <= 40),
    address_line1 TEXT CHECK (length(address_line1) <= 200),
    address_line2 TEXT CHECK (length(address_line2) <= 200),
    city TEXT CHECK (length(city) <= 200),
    state TEXT CHECK (length(state) <= 200),
    postal_code TEXT CHECK (length(postal_code) <= 200),
    currency TEXT NOT NULL DEFAULT 'USD' CHECK (currency IN ('USD','CAD','EUR','GBP','MXN')),
    payment_terms_days INTEGER CHECK (payment_terms_days BETWEEN 0 AND 365),
    reminders_enabled INTEGER NOT NULL DEFAULT 0 CHECK (reminders_enabled IN (0,1)),
    archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0,1)),
    created_at TEXT NOT NULL
  ) STRICT;

CREATE TABLE email_outbox (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES "tenants"(id),
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
  , body_html TEXT, claimed_until TEXT CHECK (claimed_until IS NULL OR claimed_until GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z')) STRICT;

CREATE TABLE exchange_rates (
    currency TEXT NOT NULL CHECK (currency IN ('CAD','EUR','GBP','MXN')),
    rate_date TEXT NOT NULL CHECK (rate_date GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    usd_per_unit TEXT NOT NULL CHECK (usd_per_unit GLOB '[0-9]*' AND usd_per_unit NOT GLOB '*[^0-9.]*'),
    source TEXT NOT NULL CHECK (source IN ('manual','frankfurter','ecb')),
    fetched_at TEXT NOT NULL,
    PRIMARY KEY (currency, rate_date)
  ) STRICT;

CREATE TABLE expenses (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    vendor_id TEXT NOT NULL REFERENCES vendors(id),
    ledger_account_id TEXT NOT NULL REFERENCES ledger_accounts(id),
    expense_date TEXT NOT NULL CHECK (expense_date GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0 AND amount_cents < 1000000000000000),
    memo TEXT CHECK (length(memo) <= 2000),
    transaction_id TEXT REFERENCES transactions(id),
    journal_entry_id TEXT NOT NULL REFERENCES journal_entries(id),
    created_at TEXT NOT NULL
  ) STRICT;

CREATE TABLE idempotency_records (
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
  ) STRICT, WITHOUT ROWID;

CREATE TABLE invoice_documents (
    invoice_id TEXT PRIMARY KEY REFERENCES invoices(id),
    state_key TEXT NOT NULL CHECK (length(state_key) = 64),
    pdf BLOB NOT NULL CHECK (length(pdf) > 0)
  ) STRICT;

CREATE TABLE invoice_lines (
    id TEXT PRIMARY KEY,
    invoice_id TEXT NOT NULL REFERENCES invoices(id),
    line_no INTEGER NOT NULL CHECK (line_no >= 1),
    description TEXT NOT NULL CHECK (length(description) <= 2000),
    quantity TEXT NOT NULL,
    unit_price_cents INTEGER NOT NULL CHECK (unit_price_cents >= 0),
    amount_cents INTEGER NOT NULL CHECK (amount_cents >= 0 AND amount_cents < 1000000000000000),
    ledger_account_id TEXT NOT NULL REFERENCES ledger_accounts(id),
    UNIQUE (invoice_id, line_no)
  ) STRICT;

CREATE TABLE "invoice_payments" (
    id TEXT PRIMARY KEY,
    invoice_id TEXT NOT NULL REFERENCES invoices(id),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    method TEXT NOT NULL CHECK (method IN ('check','cash','wire','other','stripe')),
    paid_at TEXT NOT NULL CHECK (paid_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    memo TEXT CHECK (length(memo) <= 2000),
    usd_per_unit TEXT,
    usd_cents INTEGER NOT NULL CHECK (usd_cents >= 0),
    journal_entry_id TEXT REFERENCES journal_entries(id),
    created_at TEXT NOT NULL,
    receivable_usd_cents INTEGER NOT NULL DEFAULT 0 CHECK (receivable_usd_cents >= 0),
    CHECK (journal_entry_id IS NOT NULL OR (usd_cents = 0 AND receivable_usd_cents = 0))
  ) STRICT;

CREATE TABLE invoice_reminders (
    id TEXT PRIMARY KEY,
    invoice_id TEXT NOT NULL REFERENCES invoices(id),
    reminded_at TEXT NOT NULL
  ) STRICT;

CREATE TABLE invoices (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    customer_id TEXT NOT NULL REFERENCES customers(id),
    number TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('draft','sent','viewed','partially_paid','paid','overdue','void')),
    currency TEXT NOT NULL CHECK (currency IN ('USD','CAD','EUR','GBP','MXN')),
    issue_date TEXT NOT NULL CHECK (issue_date GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    due_date TEXT NOT NULL CHECK (due_date GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
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
    created_at TEXT NOT NULL, closed_on TEXT CHECK (closed_on GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'), pay_link_version INTEGER NOT NULL DEFAULT 0 CHECK (pay_link_version >= 0), paid_receivable_usd_cents INTEGER NOT NULL DEFAULT 0 CHECK (paid_receivable_usd_cents >= 0), last_paid_at TEXT CHECK (last_paid_at IS NULL OR last_paid_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    CHECK (due_date >= issue_date),
    CHECK (total_cents = subtotal_cents + tax_cents),
    UNIQUE (business_id, number)
  ) STRICT;

CREATE TABLE "job_runs" (
    name TEXT PRIMARY KEY CHECK (name IN ('rates','overdue','outbox','backup','housekeeping','card-payments')),
    schedule TEXT,
    last_started_at TEXT CHECK (last_started_at IS NULL OR last_started_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z'),
    last_finished_at TEXT CHECK (last_finished_at IS NULL OR last_finished_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z'),
    last_outcome TEXT CHECK (last_outcome IS NULL OR last_outcome IN ('running','ok','failed')),
    last_duration_ms INTEGER CHECK (last_duration_ms IS NULL OR last_duration_ms >= 0),
    last_result TEXT CHECK (last_result IS NULL OR json_valid(last_result)),
    last_error TEXT,
    runs INTEGER NOT NULL DEFAULT 0 CHECK (runs >= 0),
    failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
    next_run_at TEXT CHECK (next_run_at IS NULL OR next_run_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z'),
    updated_at TEXT NOT NULL CHECK (updated_at IS NULL OR updated_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z')
  ) STRICT;

CREATE TABLE "journal_entries" (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    entry_date TEXT NOT NULL CHECK (entry_date GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    memo TEXT CHECK (length(memo) <= 2000),
    source_type TEXT NOT NULL CHECK (source_type IN ('invoice','invoice_payment','expense','review_accept',
      'bill','bill_payment','reversal','opening_balance','manual','card_payment')),
    source_id TEXT,
    reverses_entry_id TEXT REFERENCES journal_entries(id),
    line_count INTEGER NOT NULL CHECK (line_count >= 2),
    actor TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;

CREATE TABLE journal_lines (
    id INTEGER PRIMARY KEY,
    entry_id TEXT NOT NULL REFERENCES journal_entries(id),
    line_no INTEGER NOT NULL CHECK (line_no >= 1),
    business_id TEXT NOT NULL REFERENCES businesses(id),
    ledger_account_id TEXT NOT NULL REFERENCES ledger_accounts(id),
    entry_date TEXT NOT NULL CHECK (entry_date GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    direction TEXT NOT NULL CHECK (direction IN ('debit','credit')),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0 AND amount_cents < 1000000000000000),
    basis TEXT NOT NULL CHECK (basis IN ('both','accrual','cash')),
    UNIQUE (entry_id, line_no)
  ) STRICT;

CREATE TABLE "ledger_accounts" (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    parent_id TEXT REFERENCES ledger_accounts(id),
    code TEXT NOT NULL CHECK (length(code) BETWEEN 1 AND 20),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    type TEXT NOT NULL CHECK (type IN ('asset','liability','equity','revenue','expense')),
    is_heading INTEGER NOT NULL DEFAULT 0 CHECK (is_heading IN (0,1)),
    archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0,1)),
    system_role TEXT CHECK (system_role IN ('bank','accounts_receivable','accounts_payable','sales_tax_payable',
      'owner_equity','retained_earnings','sales','uncategorized_expense','fx_gain_loss',
      'card_clearing','payment_fees','customer_deposits')),
    created_at TEXT NOT NULL,
    UNIQUE (business_id, code),
    UNIQUE (business_id, system_role)
  ) STRICT;

CREATE TABLE ledger_balances (
    business_id TEXT NOT NULL REFERENCES businesses(id),
    span TEXT NOT NULL CHECK (span IN ('day','month','year')),
    period_start TEXT NOT NULL CHECK (period_start GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    ledger_account_id TEXT NOT NULL REFERENCES ledger_accounts(id),
    basis TEXT NOT NULL CHECK (basis IN ('both','accrual','cash')),
    debit_cents INTEGER NOT NULL CHECK (debit_cents >= 0),
    credit_cents INTEGER NOT NULL CHECK (credit_cents >= 0),
    PRIMARY KEY (business_id, span, period_start, ledger_account_id, basis)
  ) STRICT, WITHOUT ROWID;

CREATE TABLE period_locks (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    locked_through TEXT NOT NULL CHECK (locked_through GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    created_at TEXT NOT NULL
  ) STRICT;

CREATE TABLE review_queue_items (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    transaction_id TEXT NOT NULL UNIQUE REFERENCES transactions(id),
    proposed_account_id TEXT REFERENCES ledger_accounts(id),
    confidence REAL CHECK (confidence BETWEEN 0 AND 1),
    rationale TEXT CHECK (length(rationale) <= 2000),
    accepted_at TEXT,
    created_at TEXT NOT NULL
  , recorded_expense_id TEXT REFERENCES expenses(id)) STRICT;

CREATE TABLE server_secrets (
    name TEXT PRIMARY KEY CHECK (name IN ('cursor_signing','pay_links')),
    secret TEXT NOT NULL CHECK (length(secret) = 64),
    created_at TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;

CREATE TABLE "tenants" (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    plan TEXT NOT NULL CHECK (plan IN ('small','middle','large')),
    api_access INTEGER NOT NULL DEFAULT 0 CHECK (api_access IN (0,1)),
    billing_state TEXT NOT NULL DEFAULT 'active' CHECK (billing_state IN ('active','past_due')),
    payment_terms_days INTEGER NOT NULL DEFAULT 30 CHECK (payment_terms_days BETWEEN 0 AND 365),
    rate_limit_mode TEXT NOT NULL DEFAULT 'plan' CHECK (rate_limit_mode IN ('plan','custom','off')),
    rate_limit_reads INTEGER CHECK (rate_limit_reads > 0),
    rate_limit_writes INTEGER CHECK (rate_limit_writes > 0),
    created_at TEXT NOT NULL,
    CHECK ((rate_limit_mode = 'custom') = (rate_limit_reads IS NOT NULL AND rate_limit_writes IS NOT NULL))
  ) STRICT;

CREATE TABLE today_signals (
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
  ) STRICT;

CREATE TABLE transactions (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    txn_date TEXT NOT NULL CHECK (txn_date GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
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
  , import_fingerprint TEXT CHECK (import_fingerprint IS NULL OR length(import_fingerprint) = 64)) STRICT;

CREATE TABLE vendors (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES "tenants"(id),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    is_1099_eligible INTEGER NOT NULL DEFAULT 0 CHECK (is_1099_eligible IN (0,1)),
    archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0,1)),
    created_at TEXT NOT NULL, name_key TEXT NOT NULL DEFAULT '',
    UNIQUE (tenant_id, name)
  ) STRICT;

CREATE TRIGGER access_version_kept BEFORE DELETE ON access_version
   BEGIN SELECT RAISE(ABORT, 'the access version is never deleted'); END;

CREATE TRIGGER api_key_businesses_access_delete AFTER DELETE ON api_key_businesses
   BEGIN UPDATE access_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER api_key_businesses_access_insert AFTER INSERT ON api_key_businesses
   BEGIN UPDATE access_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER api_key_businesses_access_update AFTER UPDATE ON api_key_businesses
   BEGIN UPDATE access_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER api_keys_access_delete AFTER DELETE ON api_keys
   BEGIN UPDATE access_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER api_keys_access_insert AFTER INSERT ON api_keys
   BEGIN UPDATE access_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER api_keys_access_update AFTER UPDATE ON api_keys
   BEGIN UPDATE access_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
     BEGIN SELECT RAISE(ABORT, 'audit_log rows are immutable; post a reversing entry instead'); END;

CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log
   WHEN EXISTS (SELECT 1 FROM audit_log WHERE id = NEW.id)
   BEGIN SELECT RAISE(ABORT, 'audit_log rows are immutable: a row with this id exists and cannot be replaced'); END;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
     BEGIN SELECT RAISE(ABORT, 'audit_log rows are immutable; post a reversing entry instead'); END;

CREATE TRIGGER bill_payments_no_delete BEFORE DELETE ON bill_payments
   BEGIN SELECT RAISE(ABORT, 'bill payments are immutable'); END;

CREATE TRIGGER bill_payments_no_update BEFORE UPDATE ON bill_payments
   BEGIN SELECT RAISE(ABORT, 'bill payments are immutable'); END;

CREATE TRIGGER bill_payments_within_owed BEFORE INSERT ON bill_payments
   WHEN NEW.amount_cents > (SELECT amount_cents - paid_cents FROM bills WHERE id = NEW.bill_id)
     OR NEW.paid_on < (SELECT issue_date FROM bills WHERE id = NEW.bill_id)
   BEGIN SELECT RAISE(ABORT, 'a bill payment is at most what is owed, on or after the bill''s date'); END;

CREATE TRIGGER bills_closed_on_paid BEFORE UPDATE OF closed_on ON bills
   WHEN NEW.closed_on IS NOT OLD.closed_on AND (OLD.closed_on IS NOT NULL OR NEW.paid_cents <> NEW.amount_cents)
   BEGIN SELECT RAISE(ABORT, 'a bill is closed once, when it is paid in full'); END;

CREATE TRIGGER bills_no_delete BEFORE DELETE ON bills
   BEGIN SELECT RAISE(ABORT, 'bills are kept; they are part of the books'); END;

CREATE TRIGGER bills_paid_is_payments BEFORE UPDATE OF paid_cents ON bills
   WHEN NEW.paid_cents <> (SELECT coalesce(sum(amount_cents), 0) FROM bill_payments WHERE bill_id = NEW.id)
   BEGIN SELECT RAISE(ABORT, 'a bill''s paid amount is the sum of its recorded payments'); END;

CREATE TRIGGER bills_start_unpaid BEFORE INSERT ON bills
   WHEN NEW.paid_cents <> 0 OR NEW.closed_on IS NOT NULL
   BEGIN SELECT RAISE(ABORT, 'a bill starts unpaid; payments are recorded in bill_payments'); END;

CREATE TRIGGER bills_terms_fixed BEFORE UPDATE OF business_id, vendor_id, number, issue_date, due_date, amount_cents,
     ledger_account_id, journal_entry_id, created_at ON bills
   BEGIN SELECT RAISE(ABORT, 'a bill keeps its vendor, number, dates, amount, account and posting'); END;

CREATE TRIGGER businesses_access_delete AFTER DELETE ON businesses
   BEGIN UPDATE access_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER businesses_access_insert AFTER INSERT ON businesses
   BEGIN UPDATE access_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER businesses_access_update AFTER UPDATE OF id, tenant_id, name, basis, payment_terms_days, created_at ON businesses
   BEGIN UPDATE access_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER card_notices_fixed BEFORE UPDATE ON card_notices
   BEGIN SELECT RAISE(ABORT, 'a card notice keeps what the processor reported'); END;

CREATE TRIGGER card_notices_kept BEFORE DELETE ON card_notices
   BEGIN SELECT RAISE(ABORT, 'card notices are kept: the processor reported them'); END;

CREATE TRIGGER card_payments_fixed BEFORE UPDATE OF session_id, business_id, invoice_id, amount_cents, currency, paid_on, received_at ON card_payments
   BEGIN SELECT RAISE(ABORT, 'a card payment keeps what the processor reported'); END;

CREATE TRIGGER card_payments_no_delete BEFORE DELETE ON card_payments
   BEGIN SELECT RAISE(ABORT, 'card payments are kept: the processor took the money'); END;

CREATE TRIGGER card_payments_posted_fixed BEFORE UPDATE ON card_payments WHEN OLD.state = 'posted'
   BEGIN SELECT RAISE(ABORT, 'a posted card payment is in the books and cannot change'); END;

CREATE TRIGGER invoice_lines_delete_draft_only BEFORE DELETE ON invoice_lines
   WHEN (SELECT status FROM invoices WHERE id = OLD.invoice_id) <> 'draft'
   BEGIN SELECT RAISE(ABORT, 'invoice lines change only while the invoice is a draft'); END;

CREATE TRIGGER invoice_lines_insert_draft_only BEFORE INSERT ON invoice_lines
   WHEN (SELECT status FROM invoices WHERE id = NEW.invoice_id) <> 'draft'
   BEGIN SELECT RAISE(ABORT, 'invoice lines change only while the invoice is a draft'); END;

CREATE TRIGGER invoice_lines_update_draft_only BEFORE UPDATE ON invoice_lines
   WHEN (SELECT status FROM invoices WHERE id = OLD.invoice_id) <> 'draft'
   BEGIN SELECT RAISE(ABORT, 'invoice lines change only while the invoice is a draft'); END;

CREATE TRIGGER invoice_payments_no_delete BEFORE DELETE ON invoice_payments
   BEGIN SELECT RAISE(ABORT, 'invoice payments are immutable'); END;

CREATE TRIGGER invoice_payments_no_update BEFORE UPDATE ON invoice_payments
   BEGIN SELECT RAISE(ABORT, 'invoice payments are immutable'); END;

CREATE TRIGGER invoice_payments_sums AFTER INSERT ON invoice_payments
   BEGIN
     UPDATE invoices SET
       paid_receivable_usd_cents = paid_receivable_usd_cents + NEW.receivable_usd_cents,
       last_paid_at = CASE WHEN last_paid_at IS NULL OR last_paid_at < NEW.paid_at THEN NEW.paid_at ELSE last_paid_at END
     WHERE id = NEW.invoice_id;
   END;

CREATE TRIGGER invoices_closed_on_settled BEFORE UPDATE OF closed_on ON invoices
   WHEN NEW.closed_on IS NOT OLD.closed_on AND (OLD.closed_on IS NOT NULL OR NEW.status NOT IN ('paid', 'void'))
   BEGIN SELECT RAISE(ABORT, 'an invoice is closed once, when it is paid in full or void'); END;

CREATE TRIGGER invoices_paid_is_payments BEFORE UPDATE OF paid_cents ON invoices
   WHEN NEW.paid_cents <> (SELECT coalesce(sum(amount_cents), 0) FROM invoice_payments WHERE invoice_id = NEW.id)
   BEGIN SELECT RAISE(ABORT, 'an invoice''s paid amount is the sum of its recorded payments'); END;

CREATE TRIGGER invoices_paid_sums_are_payments BEFORE UPDATE OF paid_receivable_usd_cents, last_paid_at ON invoices
   WHEN NEW.paid_receivable_usd_cents <> (SELECT coalesce(sum(p.receivable_usd_cents), 0) FROM invoice_payments p WHERE p.invoice_id = NEW.id)
     OR NEW.last_paid_at IS NOT (SELECT max(p.paid_at) FROM invoice_payments p WHERE p.invoice_id = NEW.id)
   BEGIN SELECT RAISE(ABORT, 'an invoice''s paid sums are those of its recorded payments'); END;

CREATE TRIGGER invoices_pay_link_forward BEFORE UPDATE OF pay_token, pay_link_version ON invoices
   WHEN NEW.pay_link_version < OLD.pay_link_version
     OR (NEW.pay_token IS NOT OLD.pay_token) <> (NEW.pay_link_version IS NOT OLD.pay_link_version)
   BEGIN SELECT RAISE(ABORT, 'a pay link changes only to a new version, and never back'); END;

CREATE TRIGGER invoices_sent_fixed BEFORE UPDATE OF business_id, customer_id, number, currency, issue_date, due_date,
     payment_terms_days, tax_rate_percent, subtotal_cents, tax_cents, total_cents, memo, usd_per_unit,
     subtotal_usd_cents, tax_usd_cents, journal_entry_id, sent_at ON invoices
   WHEN OLD.sent_at IS NOT NULL
   BEGIN SELECT RAISE(ABORT, 'a sent invoice keeps its amounts, currency, dates, rate and posting; void it and issue another'); END;

CREATE TRIGGER invoices_status_forward BEFORE UPDATE OF status ON invoices
   WHEN NEW.status IS NOT OLD.status AND (OLD.status = 'void' OR (NEW.status = 'draft' AND OLD.status <> 'draft'))
   BEGIN SELECT RAISE(ABORT, 'an invoice never returns to draft, and a void invoice stays void'); END;

CREATE TRIGGER journal_entries_no_delete BEFORE DELETE ON journal_entries
     BEGIN SELECT RAISE(ABORT, 'journal_entries rows are immutable; post a reversing entry instead'); END;

CREATE TRIGGER journal_entries_no_replace BEFORE INSERT ON journal_entries
   WHEN EXISTS (SELECT 1 FROM journal_entries WHERE id = NEW.id OR (NEW.reverses_entry_id IS NOT NULL AND reverses_entry_id = NEW.reverses_entry_id))
   BEGIN SELECT RAISE(ABORT, 'journal_entries rows are immutable: an entry with this id, or a reversal of the same entry, exists and cannot be replaced'); END;

CREATE TRIGGER journal_entries_no_update BEFORE UPDATE ON journal_entries
     BEGIN SELECT RAISE(ABORT, 'journal_entries rows are immutable; post a reversing entry instead'); END;

CREATE TRIGGER journal_lines_balances AFTER INSERT ON journal_lines
   BEGIN
   INSERT INTO ledger_balances (business_id, span, period_start, ledger_account_id, basis, debit_cents, credit_cents)
     VALUES (NEW.business_id, 'day', NEW.entry_date, NEW.ledger_account_id, NEW.basis,
       CASE NEW.direction WHEN 'debit' THEN NEW.amount_cents ELSE 0 END, CASE NEW.direction WHEN 'credit' THEN NEW.amount_cents ELSE 0 END)
     ON CONFLICT (business_id, span, period_start, ledger_account_id, basis)
     DO UPDATE SET debit_cents = debit_cents + excluded.debit_cents, credit_cents = credit_cents + excluded.credit_cents;
   INSERT INTO ledger_balances (business_id, span, period_start, ledger_account_id, basis, debit_cents, credit_cents)
     VALUES (NEW.business_id, 'month', substr(NEW.entry_date, 1, 7) || '-01', NEW.ledger_account_id, NEW.basis,
       CASE NEW.direction WHEN 'debit' THEN NEW.amount_cents ELSE 0 END, CASE NEW.direction WHEN 'credit' THEN NEW.amount_cents ELSE 0 END)
     ON CONFLICT (business_id, span, period_start, ledger_account_id, basis)
     DO UPDATE SET debit_cents = debit_cents + excluded.debit_cents, credit_cents = credit_cents + excluded.credit_cents;
   INSERT INTO ledger_balances (business_id, span, period_start, ledger_account_id, basis, debit_cents, credit_cents)
     VALUES (NEW.business_id, 'year', substr(NEW.entry_date, 1, 4) || '-01-01', NEW.ledger_account_id, NEW.basis,
       CASE NEW.direction WHEN 'debit' THEN NEW.amount_cents ELSE 0 END, CASE NEW.direction WHEN 'credit' THEN NEW.amount_cents ELSE 0 END)
     ON CONFLICT (business_id, span, period_start, ledger_account_id, basis)
     DO UPDATE SET debit_cents = debit_cents + excluded.debit_cents, credit_cents = credit_cents + excluded.credit_cents;
   END;

CREATE TRIGGER journal_lines_closed_entry BEFORE INSERT ON journal_lines
   WHEN NEW.line_no > (SELECT line_count FROM journal_entries WHERE id = NEW.entry_id)
   BEGIN SELECT RAISE(ABORT, 'journal entry is closed: it already has all its lines'); END;

CREATE TRIGGER journal_lines_no_delete BEFORE DELETE ON journal_lines
     BEGIN SELECT RAISE(ABORT, 'journal_lines rows are immutable; post a reversing entry instead'); END;

CREATE TRIGGER journal_lines_no_replace BEFORE INSERT ON journal_lines
   WHEN EXISTS (SELECT 1 FROM journal_lines WHERE id = NEW.id OR (entry_id = NEW.entry_id AND line_no = NEW.line_no))
   BEGIN SELECT RAISE(ABORT, 'journal_lines rows are immutable: a line with this id, or this entry and line number, exists and cannot be replaced'); END;

CREATE TRIGGER journal_lines_no_update BEFORE UPDATE ON journal_lines
     BEGIN SELECT RAISE(ABORT, 'journal_lines rows are immutable; post a reversing entry instead'); END;

CREATE TRIGGER journal_lines_postable BEFORE INSERT ON journal_lines
   WHEN NOT EXISTS (
     SELECT 1 FROM journal_entries e JOIN ledger_accounts a ON a.id = NEW.ledger_account_id
     WHERE e.id = NEW.entry_id AND e.business_id = NEW.business_id AND e.entry_date = NEW.entry_date
       AND a.business_id = e.business_id AND a.is_heading = 0 AND a.archived = 0)
   BEGIN SELECT RAISE(ABORT, 'journal line must post to a postable account of the entry''s business'); END;

CREATE TRIGGER ledger_accounts_id_fixed BEFORE UPDATE OF id ON ledger_accounts
   WHEN NEW.id IS NOT OLD.id
   BEGIN SELECT RAISE(ABORT, 'ledger_accounts ids never change: journal lines and child accounts refer to an account by its id'); END;

CREATE TRIGGER ledger_accounts_no_replace BEFORE INSERT ON ledger_accounts
   WHEN EXISTS (SELECT 1 FROM ledger_accounts WHERE id = NEW.id OR (business_id = NEW.business_id AND (code = NEW.code OR system_role = NEW.system_role)))
   BEGIN SELECT RAISE(ABORT, 'ledger_accounts rows cannot be replaced: an account with this id, or this business''s code or system role, exists'); END;

CREATE TRIGGER ledger_accounts_no_replace_by_update BEFORE UPDATE OF business_id, code, system_role ON ledger_accounts
   WHEN EXISTS (SELECT 1 FROM ledger_accounts WHERE id <> OLD.id AND business_id = NEW.business_id AND (code = NEW.code OR system_role = NEW.system_role))
   BEGIN SELECT RAISE(ABORT, 'ledger_accounts rows cannot be replaced: another account of this business has this code or system role'); END;

CREATE TRIGGER ledger_accounts_posted_fixed BEFORE UPDATE OF business_id, type, is_heading ON ledger_accounts
   WHEN (NEW.business_id IS NOT OLD.business_id OR NEW.type IS NOT OLD.type OR NEW.is_heading IS NOT OLD.is_heading)
     AND EXISTS (SELECT 1 FROM journal_lines WHERE ledger_account_id = OLD.id)
   BEGIN SELECT RAISE(ABORT, 'ledger account has postings: its business, type and heading flag cannot change'); END;

CREATE TRIGGER ledger_balances_no_delete BEFORE DELETE ON ledger_balances
   BEGIN SELECT RAISE(ABORT, 'ledger balances follow the journal; they are never deleted'); END;

CREATE TRIGGER period_locks_forward_only BEFORE INSERT ON period_locks
   WHEN EXISTS (SELECT 1 FROM period_locks WHERE business_id = NEW.business_id AND locked_through >= NEW.locked_through)
   BEGIN SELECT RAISE(ABORT, 'period lock must be after the business''s latest lock: a closed period is never reopened'); END;

CREATE TRIGGER period_locks_no_delete BEFORE DELETE ON period_locks
   BEGIN SELECT RAISE(ABORT, 'period_locks rows are permanent: a closed period is never reopened'); END;

CREATE TRIGGER period_locks_no_replace BEFORE INSERT ON period_locks
   WHEN EXISTS (SELECT 1 FROM period_locks WHERE id = NEW.id)
   BEGIN SELECT RAISE(ABORT, 'period_locks rows are permanent: a lock with this id exists and cannot be replaced'); END;

CREATE TRIGGER period_locks_no_update BEFORE UPDATE ON period_locks
   BEGIN SELECT RAISE(ABORT, 'period_locks rows are permanent: a closed period is never reopened'); END;

CREATE TRIGGER review_queue_items_accepted_fixed BEFORE UPDATE ON review_queue_items
   WHEN OLD.accepted_at IS NOT NULL
   BEGIN SELECT RAISE(ABORT, 'an accepted review item is settled; it cannot change'); END;

CREATE TRIGGER review_queue_items_no_delete BEFORE DELETE ON review_queue_items
   BEGIN SELECT RAISE(ABORT, 'review items are kept; accepting one settles it'); END;

CREATE TRIGGER tenants_access_delete AFTER DELETE ON tenants
   BEGIN UPDATE access_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER tenants_access_insert AFTER INSERT ON tenants
   BEGIN UPDATE access_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER tenants_access_update AFTER UPDATE ON tenants
   BEGIN UPDATE access_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER vendors_name_key_required BEFORE INSERT ON vendors WHEN NEW.name_key = ''
   BEGIN SELECT RAISE(ABORT, 'vendors.name_key must be the folded name (src/names.ts foldName)'); END;
