import { nowIso, type Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { one, run } from '../db/statements.js';

/**
 * What each job last did, kept in the books file (job_runs, migration 0008) so `daybook jobs
 * list`, another process, sees what the server's job pool did and plans to do.
 */

export const JOB_NAMES = ['rates', 'overdue', 'outbox', 'backup', 'housekeeping', 'card-payments'] as const;
export type JobName = (typeof JOB_NAMES)[number];

export type JobOutcome = 'running' | 'ok' | 'failed';

export interface JobRunRecord {
  name: JobName;
  /** The schedule the server last started the job with; null when it was off. */
  schedule: string | null;
  lastStartedAt: string | null;
  lastFinishedAt: string | null;
  lastOutcome: JobOutcome | null;
  lastDurationMs: number | null;
  /** What the last successful or failed run returned (counts), as stored. */
  lastResult: unknown;
  lastError: string | null;
  runs: number;
  /** Failures in a row since the last success. */
  failures: number;
  nextRunAt: string | null;
}

interface JobRunRow {
  name: JobName;
  schedule: string | null;
  last_started_at: string | null;
  last_finished_at: string | null;
  last_outcome: JobOutcome | null;
  last_duration_ms: bigint | null;
  last_result: string | null;
  last_error: string | null;
  runs: bigint;
  failures: bigint;
  next_run_at: string | null;
}

/** Longest error text kept; a job's error is a summary, never a dump. */
const MAX_ERROR_CHARS = 2000;

function ensureRow(db: Db, clock: Clock, name: JobName): void {
  run(db, 'INSERT INTO job_runs (name, updated_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', name, nowIso(clock));
}

/** Records the schedule a job pool started the job with (null: off) and its next run. */
export function recordJobPlanned(db: Db, clock: Clock, name: JobName, schedule: string | null, nextRunAt: Date | null): void {
  ensureRow(db, clock, name);
  run(db, 'UPDATE job_runs SET schedule = ?, next_run_at = ?, updated_at = ? WHERE name = ?', schedule, nextRunAt?.toISOString() ?? null, nowIso(clock), name);
}

export function recordJobStarted(db: Db, clock: Clock, name: JobName): void {
  ensureRow(db, clock, name);
  const now = nowIso(clock);
  run(db, "UPDATE job_runs SET last_started_at = ?, last_outcome = 'running', updated_at = ? WHERE name = ?", now, now, name);
}

export interface JobFinish {
  outcome: 'ok' | 'failed';
  durationMs: number;
  result?: unknown;
  error?: string;
  /** The scheduler's next run, when the job runs on a schedule in this process. */
  nextRunAt?: Date | null;
}

export function recordJobFinished(db: Db, clock: Clock, name: JobName, finish: JobFinish): void {
  ensureRow(db, clock, name);
  const now = nowIso(clock);
  const result = finish.result === undefined ? null : JSON.stringify(finish.result, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  run(
    db,
    `UPDATE job_runs SET last_finished_at = ?, last_outcome = ?, last_duration_ms = ?, last_result = ?, last_error = ?,
       runs = runs + 1, failures = CASE WHEN ? = 'ok' THEN 0 ELSE failures + 1 END,
       next_run_at = CASE WHEN ? THEN ? ELSE next_run_at END, updated_at = ?
     WHERE name = ?`,
    now,
    finish.outcome,
    Math.max(0, Math.round(finish.durationMs)),
    result,
    finish.error === undefined ? null : finish.error.slice(0, MAX_ERROR_CHARS),
    finish.outcome,
    finish.nextRunAt === undefined ? 0 : 1,
    finish.nextRunAt?.toISOString() ?? null,
    now,
    name,
  );
}

function toRecord(row: JobRunRow): JobRunRecord {
  return {
    name: row.name,
    schedule: row.schedule,
    lastStartedAt: row.last_started_at,
    lastFinishedAt: row.last_finished_at,
    lastOutcome: row.last_outcome,
    lastDurationMs: row.last_duration_ms === null ? null : Number(row.last_duration_ms),
    lastResult: row.last_result === null ? null : (JSON.parse(row.last_result) as unknown),
    lastError: row.last_error,
    runs: Number(row.runs),
    failures: Number(row.failures),
    nextRunAt: row.next_run_at,
  };
}

export function findJobRun(db: Db, name: JobName): JobRunRecord | undefined {
  const row = one<JobRunRow>(db, 'SELECT * FROM job_runs WHERE name = ?', name);
  return row ? toRecord(row) : undefined;
}
