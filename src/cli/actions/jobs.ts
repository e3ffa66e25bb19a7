import { jobSchedule } from '../../jobs/schedules.js';
import { findJobRun, JOB_NAMES, type JobName, type JobRunRecord } from '../../store/job-runs.js';
import { loadConfig } from '../../config.js';
import { acquireServerLock, ServerLockError } from '../../db/server-lock.js';
import { type CommandContext, resolveDbPath, withBooks } from '../context.js';
import { formatTable } from '../output.js';
import { CommandFailed, UsageError } from '../errors.js';

/** Whether a server holds the books now (it keeps the `<books>.lock` lock for its whole life). */
function serverRunning(booksPath: string): boolean {
  try {
    acquireServerLock(booksPath)();
    return false;
  } catch (error) {
    if (error instanceof ServerLockError) return true;
    throw error;
  }
}

function when(iso: string | null): string {
  return iso === null ? '-' : iso.replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
}

function lastRun(record: JobRunRecord | undefined): string {
  if (!record?.lastStartedAt) return 'never';
  if (record.lastOutcome === 'running') return `running since ${when(record.lastStartedAt)}`;
  const failures = record.failures > 1 ? ` (${record.failures} in a row)` : '';
  return `${record.lastOutcome} at ${when(record.lastFinishedAt)}, ${record.lastDurationMs} ms${failures}`;
}

export async function list(_options: unknown, context: CommandContext): Promise<void> {
  const path = resolveDbPath(context.globals, context.io.env);
  const config = loadConfig(context.io.env, { db: path });
  const records = await withBooks(context, (db) => JOB_NAMES.map((name) => findJobRun(db, name)));
  const running = serverRunning(path);
  const jobs = JOB_NAMES.map((name, index) => {
    const record = records[index];
    return {
      name,
      schedule: jobSchedule(config, name) ?? 'off',
      serverSchedule: record?.schedule ?? null,
      lastStartedAt: record?.lastStartedAt ?? null,
      lastFinishedAt: record?.lastFinishedAt ?? null,
      lastOutcome: record?.lastOutcome ?? null,
      lastDurationMs: record?.lastDurationMs ?? null,
      lastResult: record?.lastResult ?? null,
      lastError: record?.lastError ?? null,
      runs: record?.runs ?? 0,
      failures: record?.failures ?? 0,
      nextRunAt: running ? (record?.nextRunAt ?? null) : null,
    };
  });
  // While a server runs, its schedules are the ones that count (its settings may differ from this shell's).
  const rows = jobs.map((job, index) => [
    job.name,
    running ? (job.serverSchedule ?? 'off') : job.schedule,
    lastRun(records[index]),
    job.nextRunAt === null ? (running ? 'off' : '-') : when(job.nextRunAt),
  ]);
  const errors = jobs.filter((job) => job.lastOutcome === 'failed').map((job) => `${job.name} last failed: ${job.lastError ?? 'no reason recorded'}`);
  context.out.result({ serverRunning: running, jobs }, [
    ...formatTable(['job', 'schedule (UTC)', 'last run', 'next run'], rows),
    ...errors,
    running ? 'A server is running on these books.' : 'No server is running on these books: nothing is scheduled until one starts.',
  ]);
}

async function runNow(name: JobName, context: CommandContext): Promise<void> {
  const path = resolveDbPath(context.globals, context.io.env);
  // A backup run by hand removes none of the scheduled ones: this shell's DAYBOOK_BACKUP_KEEP
  // need not be the server's.
  const config = loadConfig(context.io.env, { db: path, backupKeep: 1000 });
  if (name === 'outbox' && config.smtpUrl === null) {
    throw new UsageError('jobs run outbox needs DAYBOOK_SMTP_URL (the server\'s mail server): without it the emails would be written to this command\'s log and counted as sent');
  }
  // What running a job needs (every job's code, the mailer, the counters) loads only here:
  // `jobs list` reads schedules and runs without it.
  const [{ booksRecorder, jobByName }, { guardedRecorder, runJobOnce }, { createMailer }, { CounterStore }, { createLogger }] = await Promise.all([
    import('../../jobs/registry.js'),
    import('../../jobs/pool.js'),
    import('../../email/mailer.js'),
    import('../../store/counters.js'),
    import('../../log.js'),
  ]);
  // The job's own log lines go to stderr, as the server's do; stdout carries the result.
  const log = createLogger(config.logLevel, { write: (line: string) => context.io.stderr(line) });
  const outcome = await withBooks(context, async (db) => {
    const counters = new CounterStore(path, context.io.clock);
    const mailer = createMailer(config, log);
    try {
      const job = jobByName({ db, clock: context.io.clock, config, log, counters, mailer }, name);
      return await runJobOnce(job, log, guardedRecorder(booksRecorder(db, context.io.clock, config), log));
    } finally {
      mailer.close();
      counters.close();
    }
  });
  if (!outcome.ok) throw new CommandFailed(`job ${name} failed after ${outcome.durationMs} ms: ${outcome.error}`);
  context.out.result({ name, outcome: 'ok', durationMs: outcome.durationMs, result: outcome.result ?? null }, [
    `Job ${name} ran in ${outcome.durationMs} ms: ${JSON.stringify(outcome.result ?? null, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))}`,
  ]);
}

/** `jobs run NAME`: commander has checked NAME against the job names. */
export function runNamed(_options: unknown, context: CommandContext): Promise<void> {
  return runNow(context.args[0] as JobName, context);
}
