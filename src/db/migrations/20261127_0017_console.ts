import type { Knex } from 'knex';

const TIME = (column: string) => `CHECK (${column} GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z')`;

/**
 * The owner's console (/console): an account's Owner signs in with a one-time link the admin
 * command prints, and works in a browser session. Neither the link's token nor the session's
 * id is stored: only their SHA-256 fingerprints, so the books (or a backup) never hold
 * something that signs anyone in.
 *
 * - `console_sign_in_links`: single use, short-lived; `used_at` once its button was pressed.
 * - `console_sessions`: `id` is the public name of a session (for listing and revoking), the
 *   fingerprint what the cookie is checked against; a session ends when signed out or revoked
 *   (`ended_at`), after 12 hours idle (`last_seen_at`) or 7 days at most (`expires_at`).
 */
export const statements: string[] = [
  `CREATE TABLE console_sign_in_links (
    fingerprint TEXT PRIMARY KEY CHECK (length(fingerprint) = 64),
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    created_at TEXT NOT NULL ${TIME('created_at')},
    expires_at TEXT NOT NULL ${TIME('expires_at')},
    used_at TEXT CHECK (used_at IS NULL OR used_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z'),
    CHECK (expires_at > created_at)
  ) STRICT`,
  'CREATE INDEX console_sign_in_links_tenant ON console_sign_in_links(tenant_id)',
  `CREATE TABLE console_sessions (
    id TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL UNIQUE CHECK (length(fingerprint) = 64),
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    created_at TEXT NOT NULL ${TIME('created_at')},
    last_seen_at TEXT NOT NULL ${TIME('last_seen_at')},
    expires_at TEXT NOT NULL ${TIME('expires_at')},
    ended_at TEXT CHECK (ended_at IS NULL OR ended_at GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z'),
    ended_by TEXT CHECK (ended_by IS NULL OR ended_by IN ('sign_out','revoked')),
    user_agent TEXT CHECK (user_agent IS NULL OR length(user_agent) <= 300),
    CHECK ((ended_at IS NULL) = (ended_by IS NULL))
  ) STRICT`,
  'CREATE INDEX console_sessions_tenant ON console_sessions(tenant_id, created_at)',
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
