import type { Knex } from 'knex';

/**
 * What the job pool keeps in the books file, so `daybook jobs list` (another process) sees
 * what the server did:
 *
 * - `job_runs`: one row per job: its schedule as the server last started it, the last run's
 *   start, end, outcome, result and error, and the next run the scheduler has planned.
 * - `email_outbox.claimed_until`: a delivery claims a row before it sends (until this time),
 *   so no two deliveries, in one process or two, send one email; a claim left by a crash
 *   lapses and the email is tried again.
 */

const TIMESTAMP = (column: string) => `CHECK (${column} IS NULL OR ${column} GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*Z')`;

export const statements: string[] = [
  `CREATE TABLE job_runs (
    name TEXT PRIMARY KEY CHECK (name IN ('rates','overdue','outbox','backup','housekeeping')),
    schedule TEXT,
    last_started_at TEXT ${TIMESTAMP('last_started_at')},
    last_finished_at TEXT ${TIMESTAMP('last_finished_at')},
    last_outcome TEXT CHECK (last_outcome IS NULL OR last_outcome IN ('running','ok','failed')),
    last_duration_ms INTEGER CHECK (last_duration_ms IS NULL OR last_duration_ms >= 0),
    last_result TEXT CHECK (last_result IS NULL OR json_valid(last_result)),
    last_error TEXT,
    runs INTEGER NOT NULL DEFAULT 0 CHECK (runs >= 0),
    failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
    next_run_at TEXT ${TIMESTAMP('next_run_at')},
    updated_at TEXT NOT NULL ${TIMESTAMP('updated_at')}
  ) STRICT`,
  `ALTER TABLE email_outbox ADD COLUMN claimed_until TEXT ${TIMESTAMP('claimed_until')}`,
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
