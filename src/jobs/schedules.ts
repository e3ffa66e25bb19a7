import type { Config } from '../config.js';
import type { JobName } from '../store/job-runs.js';

/**
 * Each job's schedule setting (DAYBOOK_JOB_*, "off" to disable): apart from the jobs themselves,
 * so what only reads schedules (`daybook jobs list`) loads none of what the jobs run.
 */

const SCHEDULE_SETTING: Record<JobName, keyof Config & `job${string}`> = {
  rates: 'jobRates',
  overdue: 'jobOverdue',
  outbox: 'jobOutbox',
  backup: 'jobBackup',
  housekeeping: 'jobHousekeeping',
  'card-payments': 'jobCardPayments',
};

/** The configured schedule of a job, or null when it is off. */
export function jobSchedule(config: Config, name: JobName): string | null {
  return config[SCHEDULE_SETTING[name]];
}
