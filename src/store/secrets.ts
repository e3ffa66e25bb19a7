import { createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import type { Db } from '../db/connection.js';
import { one, run } from '../db/statements.js';

/**
 * Secrets the books keep for themselves, each 32 random bytes made on first start: one signs
 * list cursors, one derives invoices' pay links. Kept in the books (not in configuration) so
 * cursors and pay links outlive restarts and move with a backup.
 */

/** server_secrets.name's closed list. */
export const SERVER_SECRET_NAMES = ['cursor_signing', 'pay_links'] as const;
export type ServerSecretName = (typeof SERVER_SECRET_NAMES)[number];

/** Makes every secret that does not exist yet; later starts keep the ones made before. */
export function ensureServerSecrets(db: Db, clock: Clock): void {
  for (const name of SERVER_SECRET_NAMES) {
    run(
      db,
      'INSERT INTO server_secrets (name, secret, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
      name,
      randomBytes(32).toString('hex'),
      nowIso(clock),
    );
  }
}

const cache = new WeakMap<Db, Map<ServerSecretName, KeyObject>>();

/**
 * The secret `name` as a key for createHmac, made once per connection: handing createHmac the
 * raw bytes makes a new key object on every call, five times the cost of the HMAC of a cursor.
 */
export function serverSecret(db: Db, name: ServerSecretName): KeyObject {
  let secrets = cache.get(db);
  if (!secrets) {
    secrets = new Map();
    cache.set(db, secrets);
  }
  let secret = secrets.get(name);
  if (!secret) {
    const row = one<{ secret: string }>(db, 'SELECT secret FROM server_secrets WHERE name = ?', name);
    if (!row) throw new Error(`no ${name} secret; ensureServerSecrets runs at start-up`);
    secret = createSecretKey(Buffer.from(row.secret, 'hex'));
    secrets.set(name, secret);
  }
  return secret;
}
