import { randomBytes } from 'node:crypto';
import { type Clock, nowIso } from '../clock.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { all, one, run } from '../db/statements.js';
import { validationFailed } from '../errors.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { getBusiness } from './businesses.js';

/**
 * A business's connection to a card processor (Stripe Checkout): the secret key Daybook calls
 * the processor's API with, the secret its webhooks are signed with, and the opaque id of the
 * webhook address. Each business may have its own processor account. The secrets are kept in
 * the books and never leave them: not printed, not logged, not in any answer or audit row.
 */

/** The processors a business can take card payments through. */
export const CARD_PROCESSORS = ['stripe'] as const;

export interface CardProcessor {
  businessId: string;
  processor: (typeof CARD_PROCESSORS)[number];
  endpointId: string;
  secretKey: string;
  webhookSecret: string;
  connectedAt: string;
}

/** Secret keys (`sk_live_…`, `sk_test_…`) and restricted keys (`rk_…`), as the processor issues them. */
const SECRET_KEY = /^(sk|rk)_(live|test)_[0-9A-Za-z]{8,240}$/;
/** Webhook signing secrets, `whsec_…`. */
const WEBHOOK_SECRET = /^whsec_[0-9A-Za-z+/=]{8,240}$/;

/** The secrets as read from their files: checked for form, so a file holding something else is refused by name. */
export interface ProcessorSecrets {
  secretKey: string;
  webhookSecret: string;
}

function checkedSecrets(secrets: ProcessorSecrets): ProcessorSecrets {
  const secretKey = secrets.secretKey.trim();
  const webhookSecret = secrets.webhookSecret.trim();
  // The messages never show the values: they are secrets, even when malformed.
  if (!SECRET_KEY.test(secretKey)) throw validationFailed('secretKey', 'is not a Stripe secret key (sk_live_…, sk_test_… or rk_…)');
  if (!WEBHOOK_SECRET.test(webhookSecret)) throw validationFailed('webhookSecret', 'is not a Stripe webhook signing secret (whsec_…)');
  return { secretKey, webhookSecret };
}

interface ProcessorRow {
  business_id: string;
  processor: 'stripe';
  endpoint_id: string;
  secret_key: string;
  webhook_secret: string;
  connected_at: string;
}

function toProcessor(row: ProcessorRow): CardProcessor {
  return {
    businessId: row.business_id,
    processor: row.processor,
    endpointId: row.endpoint_id,
    secretKey: row.secret_key,
    webhookSecret: row.webhook_secret,
    connectedAt: row.connected_at,
  };
}

export function findCardProcessor(db: Db, businessId: string): CardProcessor | undefined {
  const row = one<ProcessorRow>(db, 'SELECT * FROM card_processors WHERE business_id = ?', businessId);
  return row && toProcessor(row);
}

/** Every business taking card payments, in the order they connected. */
export function connectedCardProcessors(db: Db): CardProcessor[] {
  return all<ProcessorRow>(db, 'SELECT * FROM card_processors ORDER BY connected_at, business_id').map(toProcessor);
}

/** The connection a webhook address names; undefined for an id no business has. */
export function cardProcessorByEndpoint(db: Db, endpointId: string): CardProcessor | undefined {
  const row = one<ProcessorRow>(db, 'SELECT * FROM card_processors WHERE endpoint_id = ?', endpointId);
  return row && toProcessor(row);
}

export interface Connection {
  businessId: string;
  endpointId: string;
  /** Whether secrets were there before and are now replaced: a rotation keeps the webhook address. */
  replaced: boolean;
}

/**
 * Connects a business to Stripe, or replaces its secrets (the rotation: the webhook address
 * stays, so the processor's dashboard needs no change). Audited without the secrets.
 */
export function connectCardProcessor(db: Db, clock: Clock, actor: Actor, businessId: string, secrets: ProcessorSecrets): Connection {
  assertInTransaction(db, 'connectCardProcessor');
  const business = getBusiness(db, businessId);
  const { secretKey, webhookSecret } = checkedSecrets(secrets);
  const existing = findCardProcessor(db, businessId);
  const endpointId = existing?.endpointId ?? randomBytes(16).toString('base64url');
  run(
    db,
    `INSERT INTO card_processors (business_id, processor, endpoint_id, secret_key, webhook_secret, connected_at) VALUES (?, 'stripe', ?, ?, ?, ?)
     ON CONFLICT (business_id) DO UPDATE SET secret_key = excluded.secret_key, webhook_secret = excluded.webhook_secret, connected_at = excluded.connected_at`,
    businessId,
    endpointId,
    secretKey,
    webhookSecret,
    nowIso(clock),
  );
  recordAudit(db, clock, actor, {
    tenantId: business.tenantId,
    businessId,
    action: existing ? 'card_payments.rotate' : 'card_payments.connect',
    subjectType: 'business',
    subjectId: businessId,
    detail: { processor: 'stripe', endpointId, livemode: secretKey.includes('_live_') },
  });
  return { businessId, endpointId, replaced: existing !== undefined };
}

/** Disconnects a business: its pay pages offer no card payment, and its webhook address answers 404. */
export function disconnectCardProcessor(db: Db, clock: Clock, actor: Actor, businessId: string): { businessId: string; wasConnected: boolean } {
  assertInTransaction(db, 'disconnectCardProcessor');
  const business = getBusiness(db, businessId);
  const { changes } = run(db, 'DELETE FROM card_processors WHERE business_id = ?', businessId);
  if (changes > 0) {
    recordAudit(db, clock, actor, { tenantId: business.tenantId, businessId, action: 'card_payments.disconnect', subjectType: 'business', subjectId: businessId });
  }
  return { businessId, wasConnected: changes > 0 };
}
