import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../src/log.js';
import { type CleanupContext, runCleanup } from './cleanup.js';

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
  run(): unknown;
}

export interface JobPool {
  jobs: readonly JobDefinition[];
  stop(): Promise<void>;
}

export function standardJobs(context: CleanupContext): JobDefinition[] {
  return [{ name: 'cleanup', schedule: '*/10 * * * *', runAtStart: true, run: () => runCleanup(context) }];
}

export function startJobPool(jobs: readonly JobDefinition[], log: Logger): JobPool {
  const tasks: ScheduledTask[] = [];
  for (const job of jobs) {
    const runLogged = (): void => {
      try {
        const result = job.run();
        log.debug({ job: job.name, result }, 'job finished');
      } catch (error) {
        log.error({ job: job.name, err: error }, 'job failed');
      }
    };
    if (job.runAtStart) runLogged();
    const task = cron.schedule(job.schedule, runLogged, { name: job.name, noOverlap: true });
    task.unref();
    tasks.push(task);
  }
  return {
    jobs,
    async stop() {
      for (const task of tasks) await task.destroy();
    },
  };
}
