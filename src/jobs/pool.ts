import cron, { type Logger as CronLogger, type ScheduledTask } from 'node-cron';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../log.js';
import { elapsedSince } from '../elapsed.js';

/**
 * The job pool: node-cron tasks running beside the API in the same process. Each job is a
 * plain function of the books (tested with a fixed clock); this file only schedules them,
 * keeps two runs of one job from overlapping, retries a failed run with backoff when the job
 * asks for it, and tells a recorder (the books' job_runs) what ran, how long, and how it ended.
 */
export interface JobDefinition {
  name: string;
  /** node-cron expression (with seconds optional), in UTC. */
  schedule: string;
  /** Also run once when the pool starts. */
  runAtStart: boolean;
  /** May return a value or a promise; the job does not run again until it has settled. */
  run(): unknown;
  /** After a failed run, run again after firstDelayMs, doubling up to maxDelayMs, until a run succeeds. */
  retry?: { firstDelayMs: number; maxDelayMs: number };
  /** Runs that end well are logged at debug rather than info (jobs that run every minute). */
  quiet?: boolean;
}

/** Where the pool reports each job's runs (src/store/job-runs.ts over the books). */
export interface JobRecorder {
  planned(job: JobDefinition, nextRunAt: Date | null): void;
  started(job: JobDefinition): void;
  /** nextRunAt: the scheduler's next run; undefined when the run was not the scheduler's (`daybook jobs run`), which leaves the recorded one as it was. */
  finished(job: JobDefinition, finish: { outcome: 'ok' | 'failed'; durationMs: number; result?: unknown; error?: string; nextRunAt: Date | null | undefined }): void;
}

export interface JobPoolOptions {
  /** How long stop() waits for runs in flight before it gives up on them. */
  stopTimeoutMs?: number;
  recorder?: JobRecorder;
}

export const DEFAULT_STOP_TIMEOUT_MS = 10_000;

export interface JobPool {
  jobs: readonly JobDefinition[];
  /** Runs one job now (unless it is running: then that run is awaited), as a schedule would. */
  runNow(name: string): Promise<void>;
  /** Ends every schedule and pending retry, then waits (at most stopTimeoutMs) for the runs in flight. */
  stop(): Promise<void>;
}

/**
 * A failure that is normal where the server runs rather than a fault to look into: a service
 * the job needs cannot be reached (a machine kept offline, say). The pool logs it as one
 * warning line, its message with `fields` and when the pool tries again, without a stack;
 * anything else a job throws is logged at error level with its stack. Both are recorded as
 * failed and retried alike.
 */
export class JobOutage extends Error {
  override name = 'JobOutage';
  /** Logged beside the message. */
  readonly fields: Record<string, unknown>;

  constructor(message: string, fields: Record<string, unknown> = {}) {
    super(message);
    this.fields = fields;
  }
}

/** The run of each job in flight, if any; a settled run removes itself. */
type RunsInFlight = Map<JobDefinition, Promise<void>>;

/** The wait before retry number `failures` (1 for the first): doubling from firstDelayMs, capped. */
export function retryDelay(retry: NonNullable<JobDefinition['retry']>, failures: number): number {
  return Math.min(retry.firstDelayMs * 2 ** Math.min(Math.max(failures - 1, 0), 30), retry.maxDelayMs);
}

export function startJobPool(jobs: readonly JobDefinition[], log: Logger, options: JobPoolOptions = {}): JobPool {
  const stopTimeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
  const recorder = options.recorder ? guardedRecorder(options.recorder, log) : undefined;
  const inFlight: RunsInFlight = new Map();
  const tasks = new Map<JobDefinition, ScheduledTask>();
  const retries = new Map<JobDefinition, { timer: NodeJS.Timeout | null; failures: number }>();
  let stopped = false;

  const nextRun = (job: JobDefinition): Date | null => tasks.get(job)?.getNextRun() ?? null;
  /** The wait before the retry that follows should the job's current run fail; undefined when none would. */
  const retryInMs = (job: JobDefinition): number | undefined =>
    job.retry && !stopped ? retryDelay(job.retry, (retries.get(job)?.failures ?? 0) + 1) : undefined;
  const afterRun = (job: JobDefinition, outcome: JobRunOutcome) => {
    const state = retries.get(job) ?? { timer: null, failures: 0 };
    retries.set(job, state);
    const delayMs = retryInMs(job);
    if (outcome.ok || delayMs === undefined) {
      state.failures = 0;
      return;
    }
    state.failures += 1;
    // An outage's one warning line already says when (retryInMs): offline, one line a run is enough.
    log[outcome.outage ? 'debug' : 'warn']({ job: job.name, failures: state.failures, retryInMs: delayMs }, 'job will be retried');
    state.timer = setTimeout(() => {
      state.timer = null;
      void runOnce(job);
    }, delayMs);
    state.timer.unref();
  };
  const runOnce = (job: JobDefinition): Promise<void> => {
    // Once stop() has begun, nothing new may start: the server closes the database next.
    if (stopped) return Promise.resolve();
    const pending = retries.get(job);
    if (pending?.timer) {
      clearTimeout(pending.timer);
      pending.timer = null;
    }
    return runUnlessRunning(job, inFlight, log, recorder, { nextRun, retryInMs }, afterRun);
  };

  for (const job of jobs) {
    // Returning the run's promise is what lets node-cron's noOverlap see an async job.
    const task = cron.schedule(job.schedule, () => runOnce(job), {
      name: job.name,
      noOverlap: true,
      timezone: 'UTC',
      logger: cronLogger(log, job.name),
    });
    task.unref();
    tasks.set(job, task);
    recorder?.planned(job, nextRun(job));
  }
  for (const job of jobs) if (job.runAtStart) void runOnce(job);
  return {
    jobs,
    runNow(name) {
      const job = jobs.find((candidate) => candidate.name === name);
      if (!job) return Promise.reject(new Error(`no job named ${name} in the pool`));
      return runOnce(job);
    },
    async stop() {
      stopped = true;
      for (const state of retries.values()) if (state.timer) clearTimeout(state.timer);
      for (const task of tasks.values()) await task.destroy();
      await waitForRuns(inFlight, stopTimeoutMs, log);
    },
  };
}

/** What the pool knows of a job's next runs, for the run's log line and record. */
interface JobSchedule {
  nextRun: (job: JobDefinition) => Date | null;
  retryInMs: (job: JobDefinition) => number | undefined;
}

/**
 * node-cron's noOverlap only knows the runs it started itself, not the run at start or a
 * retry, so the pool keeps its own record: a run asked for while one is in flight joins that one.
 */
function runUnlessRunning(
  job: JobDefinition,
  inFlight: RunsInFlight,
  log: Logger,
  recorder: JobRecorder | undefined,
  schedule: JobSchedule,
  afterRun: (job: JobDefinition, outcome: JobRunOutcome) => void,
): Promise<void> {
  const running = inFlight.get(job);
  if (running) {
    log.warn({ job: job.name }, 'job still running, run skipped');
    return running;
  }
  // runJobOnce never rejects, and finally() runs on a later tick, after the set below.
  const run = runJobOnce(job, log, recorder, schedule.nextRun, schedule.retryInMs)
    .then((outcome) => afterRun(job, outcome))
    .finally(() => inFlight.delete(job));
  inFlight.set(job, run);
  return run;
}

/** How one run ended; `outage` when it failed with a JobOutage. */
export type JobRunOutcome = { ok: true; durationMs: number; result: unknown } | { ok: false; durationMs: number; error: string; outage: boolean };

/**
 * Runs a job once: a failure, thrown or rejected, is logged and recorded here and never reaches
 * the caller (the scheduler, or `daybook jobs run`, which reports the outcome).
 */
export async function runJobOnce(
  job: JobDefinition,
  log: Logger,
  recorder: JobRecorder | undefined,
  nextRun: (job: JobDefinition) => Date | null | undefined = () => undefined,
  retryInMs: (job: JobDefinition) => number | undefined = () => undefined,
): Promise<JobRunOutcome> {
  recorder?.started(job);
  const started = performance.now();
  const elapsed = () => elapsedSince(started);
  try {
    const result: unknown = await job.run();
    const durationMs = elapsed();
    log[job.quiet ? 'debug' : 'info']({ job: job.name, durationMs, outcome: 'ok', result }, 'job finished');
    recorder?.finished(job, { outcome: 'ok', durationMs, result, nextRunAt: nextRun(job) });
    return { ok: true, durationMs, result };
  } catch (error) {
    const durationMs = elapsed();
    const message = error instanceof Error ? error.message : String(error);
    logFailure(log, job, durationMs, error, retryInMs(job));
    recorder?.finished(job, { outcome: 'failed', durationMs, error: message, nextRunAt: nextRun(job) });
    return { ok: false, durationMs, error: message, outage: error instanceof JobOutage };
  }
}

/** An outage is one warning line, saying when the pool tries again; anything else is an error line with its stack. */
function logFailure(log: Logger, job: JobDefinition, durationMs: number, error: unknown, retryInMs: number | undefined): void {
  if (error instanceof JobOutage) {
    log.warn({ ...error.fields, job: job.name, durationMs, outcome: 'failed', retryInMs }, error.message);
    return;
  }
  log.error({ job: job.name, durationMs, outcome: 'failed', err: error }, 'job failed');
}

/** A recorder that fails (the books file full, say) is logged; it never stops a job or the pool. */
export function guardedRecorder(recorder: JobRecorder, log: Logger): JobRecorder {
  const guard =
    <A extends unknown[]>(what: string, call: (...args: A) => void) =>
    (...args: A) => {
      try {
        call(...args);
      } catch (error) {
        log.error({ err: error, what }, 'job run not recorded');
      }
    };
  return {
    planned: guard('planned', (job, next) => recorder.planned(job, next)),
    started: guard('started', (job) => recorder.started(job)),
    finished: guard('finished', (job, finish) => recorder.finished(job, finish)),
  };
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
