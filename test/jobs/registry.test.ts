import { expect } from 'chai';
import { jobByName, type JobServices, scheduledJobs } from '../../src/jobs/registry.js';
import { loadConfig } from '../../src/config.js';
import { freshDb, type TempDb } from '../support/db.js';
import { testClock } from '../support/factories.js';

/** The six jobs as the server's pool and `daybook jobs run` build them from the configuration. */
describe('job registry (src/jobs/registry.ts)', () => {
  let temp: TempDb;
  before(async () => {
    temp = await freshDb();
  });
  after(() => temp.close());

  const services = (env: NodeJS.ProcessEnv): JobServices => ({
    db: temp.db,
    clock: testClock(),
    config: loadConfig(env),
    log: undefined as never,
    counters: undefined as never,
    mailer: undefined as never,
  });

  it('schedules every job by default, with its run at start and its retries', () => {
    const jobs = scheduledJobs(services({}));
    expect(jobs.map((job) => [job.name, job.schedule, job.runAtStart, job.retry ?? null, job.quiet ?? false])).to.deep.equal([
      ['rates', '30 16 * * *', true, { firstDelayMs: 60_000, maxDelayMs: 3_600_000 }, false],
      ['overdue', '5 * * * *', true, null, false],
      ['outbox', '* * * * *', true, null, true],
      ['backup', '15 2 * * *', false, { firstDelayMs: 300_000, maxDelayMs: 3_600_000 }, false],
      ['housekeeping', '*/10 * * * *', true, null, true],
      ['card-payments', '*/10 * * * *', true, null, true],
    ]);
  });

  it('leaves out a job the configuration turns off, and follows a changed schedule', () => {
    const jobs = scheduledJobs(services({ DAYBOOK_JOB_RATES: 'off', DAYBOOK_JOB_BACKUP: 'off', DAYBOOK_JOB_OVERDUE: '0 * * * *' }));
    expect(jobs.map((job) => [job.name, job.schedule])).to.deep.equal([
      ['overdue', '0 * * * *'],
      ['outbox', '* * * * *'],
      ['housekeeping', '*/10 * * * *'],
      ['card-payments', '*/10 * * * *'],
    ]);
  });

  it('still gives a job that is off by name, to run by hand', async () => {
    const job = jobByName(services({ DAYBOOK_JOB_OVERDUE: 'off' }), 'overdue');
    expect(job).to.include({ name: 'overdue', schedule: 'off' });
    expect(await job.run()).to.deep.equal({ markedOverdue: 0 });
  });
});
