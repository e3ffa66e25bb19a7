import cron, { type Logger as CronLogger, type ScheduledTask } from 'node-cron';
import type { Logger } from '../src/log.js';
import { type CleanupContext, runCleanup } from './cleanup.js';
import { type OutboxContext, runOutboxDelivery } from './outbox.js';
import { type OverdueContext, runOverdueSweep } from './overdue.js';

/**
 * The job pool: node-cron tasks running beside the API in the same process. Each job is a
 * plain function of the books (tested with a fixed clock); this file only schedules them.
 */
export interface JobDefinition {
  name: string;
  /** node-cron expression (with seconds optional). */
  schedule: string;
  /** Also run once when the pool starts. */
  runAtStart: boolean;
  /** May return a value or a promise; the job does not run again until it has settled. */
  run(): unknown;
}

export interface JobPoolOptions {
  /** How long stop() waits for runs in flight before it gives up on them. */
  stopTimeoutMs?: number;
}

export const DEFAULT_STOP_TIMEOUT_MS = 10_000;

export interface JobPool {
  jobs: readonly JobDefinition[];
  /** Ends every schedule, then waits (at most stopTimeoutMs) for the runs in flight. */
  stop(): Promise<void>;
}

/** The run of each job in flight, if any; a settled run removes itself. */
type RunsInFlight = Map<JobDefinition, Promise<void>>;

export function standardJobs(context: CleanupContext & OverdueContext & OutboxContext): JobDefinition[] {
  return [
    { name: 'cleanup', schedule: '*/10 * * * *', runAtStart: true, run: () => runCleanup(context) },
    // Hourly (and at start): invoices past due with money owed become overdue.
    { name: 'overdue', schedule: '5 * * * *', runAtStart: true, run: () => runOverdueSweep(context) },
    // Every minute (and at start): emails whose delivery failed, once their backoff has passed.
    { name: 'outbox', schedule: '* * * * *', runAtStart: true, run: () => runOutboxDelivery(context) },
  ];
}

export function startJobPool(jobs: readonly JobDefinition[], log: Logger, options: JobPoolOptions = {}): JobPool {
  const stopTimeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
  const inFlight: RunsInFlight = new Map();
  const tasks: ScheduledTask[] = [];
  let stopped = false;
  const runOnce = (job: JobDefinition): Promise<void> => {
    // Once stop() has begun, nothing new may start: the server closes the database next.
    if (stopped) return Promise.resolve();
    return runUnlessRunning(job, inFlight, log);
  };
  for (const job of jobs) {
    if (job.runAtStart) void runOnce(job);
    // Returning the run's promise is what lets node-cron's noOverlap see an async job.
    const task = cron.schedule(job.schedule, () => runOnce(job), {
      name: job.name,
      noOverlap: true,
      logger: cronLogger(log, job.name),
    });
    task.unref();
    tasks.push(task);
  }
  return {
    jobs,
    async stop() {
      stopped = true;
      for (const task of tasks) await task.destroy();
      await waitForRuns(inFlight, stopTimeoutMs, log);
    },
  };
}

/**
 * node-cron's noOverlap only knows the runs it started itself, not the run at start, so the
 * pool keeps its own record: a run asked for while one is in flight joins that one instead.
 */
function runUnlessRunning(job: JobDefinition, inFlight: RunsInFlight, log: Logger): Promise<void> {
  const running = inFlight.get(job);
  if (running) {
    log.warn({ job: job.name }, 'job still running, run skipped');
    return running;
  }
  // runLogged never rejects, and finally() runs on a later tick, after the set below.
  const run = runLogged(job, log).finally(() => inFlight.delete(job));
  inFlight.set(job, run);
  return run;
}

/** A job's failure, thrown or rejected, is logged here and never reaches the scheduler. */
async function runLogged(job: JobDefinition, log: Logger): Promise<void> {
  try {
    const result: unknown = await job.run();
    log.debug({ job: job.name, result }, 'job finished');
  } catch (error) {
    log.error({ job: job.name, err: error }, 'job failed');
  }
}

/** Waits for the runs in flight, but never longer than timeoutMs: a hung job must not block shutdown. */
async function waitForRuns(inFlight: RunsInFlight, timeoutMs: number, log: Logger): Promise<void> {
  if (inFlight.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), timeoutMs);
  });
  const finished = Promise.all(inFlight.values()).then(() => false);
  const gaveUp = await Promise.race([finished, timedOut]);
  clearTimeout(timer);
  if (gaveUp) {
    const running = [...inFlight.keys()].map((job) => job.name);
    log.warn({ jobs: running, timeoutMs }, 'jobs still running at stop');
  }
}

/** node-cron's own warnings (overlap, missed runs) go to our JSON log, not its console lines. */
function cronLogger(log: Logger, jobName: string): CronLogger {
  const asError = (message: string | Error, err?: Error) =>
    message instanceof Error ? { job: jobName, err: message } : { job: jobName, err };
  const text = (message: string | Error): string => (message instanceof Error ? message.message : message);
  return {
    info: (message) => log.info({ job: jobName }, message),
    warn: (message) => log.warn({ job: jobName }, message),
    error: (message, err) => log.error(asError(message, err), text(message)),
    debug: (message, err) => log.debug(asError(message, err), text(message)),
  };
}
