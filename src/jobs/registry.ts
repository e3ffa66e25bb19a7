import { JOB_NAMES, type JobName, recordJobFinished, recordJobPlanned, recordJobStarted } from '../store/job-runs.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../db/connection.js';
import type { Services } from '../services.js';
import { jobSchedule } from './schedules.js';

export { jobSchedule } from './schedules.js';
import { runBackupJob } from './backup.js';
import { runHousekeeping } from './housekeeping.js';
import { runOutboxDelivery } from './outbox.js';
import { runOverdueSweep } from './overdue.js';
import type { JobDefinition, JobRecorder } from './pool.js';
import { runRatesJob } from './rates.js';
import { runCardPaymentsJob } from './card-payments.js';

/**
 * Daybook's six jobs: what each runs, its schedule from the configuration (DAYBOOK_JOB_*,
 * "off" to disable), whether it also runs at start, and how a failed run is retried. The
 * server's pool and `daybook jobs run` both build them here, so both run the same thing.
 */

/** What the jobs need: the running service's own (or what the CLI builds the same way). */
export type JobServices = Services;

export interface DaybookJob extends JobDefinition {
  name: JobName;
}

const MINUTE = 60_000;

/** What each job runs, given the services; `schedule` is filled in from the configuration. */
function jobBodies(services: JobServices): Record<JobName, Omit<DaybookJob, 'name' | 'schedule'>> {
  const { db, clock, config, log } = services;
  return {
    // Daily (and at start, which backfills missing business days); an outage is retried.
    rates: {
      runAtStart: true,
      retry: { firstDelayMs: MINUTE, maxDelayMs: 60 * MINUTE },
      run: () => runRatesJob({ db, clock, log, provider: { kind: config.fxProvider, url: config.fxProviderUrl } }),
    },
    // Hourly (and at start): invoices past due with money owed become overdue.
    overdue: { runAtStart: true, run: () => runOverdueSweep({ db, clock }) },
    // Every minute (and at start): emails whose delivery failed, once their backoff has passed.
    outbox: { runAtStart: true, quiet: true, run: () => runOutboxDelivery({ db, clock, mailer: services.mailer, log }) },
    // Daily: an online backup, checked, the oldest beyond the retention count removed.
    backup: {
      runAtStart: false,
      retry: { firstDelayMs: 5 * MINUTE, maxDelayMs: 60 * MINUTE },
      run: () => runBackupJob({ db, clock, log, dir: config.backupDir, keep: config.backupKeep }),
    },
    // Every ten minutes (and at start): expired idempotency records and rate windows, planner statistics, the WAL.
    housekeeping: { runAtStart: true, quiet: true, run: () => runHousekeeping({ db, clock, counters: services.counters }) },
    // Every ten minutes (and at start): paid sessions the webhook missed, and card payments received but not yet posted.
    'card-payments': { runAtStart: true, quiet: true, run: () => runCardPaymentsJob(services) },
  };
}

/** The jobs the configuration turns on, for the server's pool. */
export function scheduledJobs(services: JobServices): DaybookJob[] {
  const bodies = jobBodies(services);
  return JOB_NAMES.flatMap((name) => {
    const schedule = jobSchedule(services.config, name);
    return schedule === null ? [] : [{ name, schedule, ...bodies[name] }];
  });
}

/** One job, whatever its schedule (even off), to run now: `daybook jobs run NAME`. */
export function jobByName(services: JobServices, name: JobName): DaybookJob {
  return { name, schedule: jobSchedule(services.config, name) ?? 'off', ...jobBodies(services)[name] };
}

/**
 * Keeps job_runs up to date from the pool. Jobs that are off are recorded as such at start,
 * so the list shows them.
 */
export function booksRecorder(db: Db, clock: Clock, config: Config): JobRecorder & { plannedOff(): void } {
  const name = (job: JobDefinition) => job.name as JobName;
  return {
    planned: (job, nextRunAt) => recordJobPlanned(db, clock, name(job), job.schedule, nextRunAt),
    plannedOff: () => {
      for (const job of JOB_NAMES) if (jobSchedule(config, job) === null) recordJobPlanned(db, clock, job, null, null);
    },
    started: (job) => recordJobStarted(db, clock, name(job)),
    finished: (job, finish) => recordJobFinished(db, clock, name(job), finish),
  };
}
