import type { Knex } from 'knex';

/**
 * `review_queue_items.recorded_expense_id`: the expense a waiting bank line turned out to be,
 * when that expense was recorded (POST /expenses) after the line was queued. Accepting such an
 * item links the line to the expense and posts nothing, so the queue never books it twice. An
 * expense is the recorded match of one item at most.
 */

export const statements: string[] = [
  'ALTER TABLE review_queue_items ADD COLUMN recorded_expense_id TEXT REFERENCES expenses(id)',
  'CREATE UNIQUE INDEX review_queue_recorded_expense ON review_queue_items(recorded_expense_id) WHERE recorded_expense_id IS NOT NULL',
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
