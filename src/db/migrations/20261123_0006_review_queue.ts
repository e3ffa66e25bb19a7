import type { Knex } from 'knex';

/**
 * What the review queue and Today need: imported bank rows carry a fingerprint, so a
 * statement imported twice (or two overlapping ones) adds each row once; the waiting items
 * are found oldest first; and one signal of a kind per subject is open at a time.
 */
export const statements: string[] = [
  'ALTER TABLE transactions ADD COLUMN import_fingerprint TEXT CHECK (import_fingerprint IS NULL OR length(import_fingerprint) = 64)',
  'CREATE UNIQUE INDEX transactions_import_fingerprint ON transactions(business_id, import_fingerprint) WHERE import_fingerprint IS NOT NULL',
  'CREATE INDEX review_queue_waiting ON review_queue_items(business_id, created_at, id) WHERE accepted_at IS NULL',
  "CREATE UNIQUE INDEX today_signals_one_open ON today_signals(business_id, kind, coalesce(subject_id, '')) WHERE closed_at IS NULL",
  // An accepted item stays accepted; its transaction then holds the posting.
  `CREATE TRIGGER review_queue_items_accepted_fixed BEFORE UPDATE ON review_queue_items
   WHEN OLD.accepted_at IS NOT NULL
   BEGIN SELECT RAISE(ABORT, 'an accepted review item is settled; it cannot change'); END`,
  `CREATE TRIGGER review_queue_items_no_delete BEFORE DELETE ON review_queue_items
   BEGIN SELECT RAISE(ABORT, 'review items are kept; accepting one settles it'); END`,
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
