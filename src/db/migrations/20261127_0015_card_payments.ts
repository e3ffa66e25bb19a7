import type { Knex } from 'knex';

const DATE = (column: string) => `CHECK (${column} GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]')`;

/**
 * A card payment the processor took is stored the moment Daybook learns of it (its webhook, the
 * page the customer returns to, or the job that asks), once per Checkout Session: the session
 * id is the key within the business (each business has its own processor account, whose ids
 * are its own; one business's deliveries can never block another's), so a delivery repeated or
 * racing another records nothing more. It is
 * `received` until it is posted to the books as an invoice payment, then `posted`.
 */
export const statements: string[] = [
  `CREATE TABLE card_payments (
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
    CHECK ((state = 'posted') = (payment_id IS NOT NULL AND posted_at IS NOT NULL)),
    PRIMARY KEY (business_id, session_id)
  ) STRICT`,
  'CREATE INDEX card_payments_received ON card_payments(state, received_at)',
  'CREATE INDEX card_payments_invoice ON card_payments(invoice_id)',
  'CREATE INDEX card_payments_payment ON card_payments(payment_id)',
  `CREATE TRIGGER card_payments_no_delete BEFORE DELETE ON card_payments
   BEGIN SELECT RAISE(ABORT, 'card payments are kept: the processor took the money'); END`,
  `CREATE TRIGGER card_payments_fixed BEFORE UPDATE OF session_id, business_id, invoice_id, amount_cents, currency, paid_on, received_at ON card_payments
   BEGIN SELECT RAISE(ABORT, 'a card payment keeps what the processor reported'); END`,
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
