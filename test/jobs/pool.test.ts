import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { type JobDefinition, type JobRecorder, retryDelay, startJobPool } from '../../src/jobs/pool.js';
import { createLogger } from '../../src/log.js';

const EVERY_SECOND = '* * * * * *';
const ONCE_A_YEAR = '0 0 1 1 *';

/** A logger whose lines the test can read back. */
function capturingLogger(level: 'debug' | 'warn' | 'error'): { log: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  const written: string[] = [];
  const log = createLogger(level, { write: (line: string) => void written.push(line) });
  return { log, lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

/** An async job that records how many copies of itself run at once. */
function concurrencyProbe(name: string, schedule: string, runAtStart: boolean, durationMs: number) {
  const seen = { running: 0, maxRunning: 0, started: 0 };
  let markStarted: () => void = () => {};
  const firstStart = new Promise<void>((resolve) => (markStarted = resolve));
  const job: JobDefinition = {
    name,
    schedule,
    runAtStart,
    async run() {
      seen.running += 1;
      seen.started += 1;
      seen.maxRunning = Math.max(seen.maxRunning, seen.running);
      markStarted();
      await sleep(durationMs);
      seen.running -= 1;
    },
  };
  return { job, seen, firstStart };
}

describe('job pool', () => {
  const silent = createLogger('silent');

  it('runs a job at start when asked', async () => {
    let runs = 0;
    const pool = startJobPool([{ name: 'probe', schedule: ONCE_A_YEAR, runAtStart: true, run: () => ++runs }], silent);
    expect(runs).to.equal(1);
    expect(pool.jobs.map((job) => job.name)).to.deep.equal(['probe']);
    await pool.stop();
    expect(runs).to.equal(1);
  });

  it('keeps going when a job throws (the failure is logged, not raised)', async () => {
    const { log, lines } = capturingLogger('error');
    const pool = startJobPool([{ name: 'broken', schedule: ONCE_A_YEAR, runAtStart: true, run: () => { throw new Error('boom'); } }], log);
    await pool.stop();
    expect(lines()).to.have.lengthOf(1);
    expect(lines()[0]).to.include({ job: 'broken', msg: 'job failed' });
  });

  it('never runs two copies of an async job that outlasts its schedule', async () => {
    const probe = concurrencyProbe('slow', EVERY_SECOND, false, 2500);
    const pool = startJobPool([probe.job], silent);
    await probe.firstStart;
    await sleep(2200); // two more ticks fall inside the first run
    await pool.stop();
    expect(probe.seen.maxRunning).to.equal(1);
    expect(probe.seen.started).to.equal(1);
  });

  it('does not start a scheduled run while the run at start is in flight', async () => {
    const probe = concurrencyProbe('slow-start', EVERY_SECOND, true, 2500);
    const pool = startJobPool([probe.job], silent);
    await sleep(2200); // at least two ticks fall inside the run at start
    await pool.stop();
    expect(probe.seen.maxRunning).to.equal(1);
    expect(probe.seen.started).to.equal(1);
  });

  it('logs an async job that rejects as failed, and the process keeps running', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { log, lines } = capturingLogger('error');
      const run = async (): Promise<never> => {
        await sleep(10);
        throw new Error('provider down');
      };
      const pool = startJobPool([{ name: 'rejecting', schedule: ONCE_A_YEAR, runAtStart: true, run }], log);
      await sleep(50);
      await pool.stop();
      await sleep(10); // unhandledRejection is emitted after the microtask queue drains
      expect(unhandled).to.deep.equal([]);
      expect(lines()).to.have.lengthOf(1);
      expect(lines()[0]).to.include({ job: 'rejecting', msg: 'job failed' });
      expect(lines()[0]).to.have.nested.property('err.message', 'provider down');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('stop() ends the schedule of a job that would otherwise run again', async () => {
    let runs = 0;
    const pool = startJobPool([{ name: 'ticker', schedule: EVERY_SECOND, runAtStart: false, run: () => ++runs }], silent);
    while (runs === 0) await sleep(50);
    await pool.stop();
    const runsAtStop = runs;
    await sleep(1500);
    expect(runs).to.equal(runsAtStop);
  });

  it('stop() waits for a job in flight to finish', async () => {
    let finished = false;
    const run = async (): Promise<void> => {
      await sleep(300);
      finished = true;
    };
    const pool = startJobPool([{ name: 'finishing', schedule: ONCE_A_YEAR, runAtStart: true, run }], silent);
    await pool.stop();
    expect(finished).to.equal(true);
  });

  it('stop() gives up on a job that never settles after stopTimeoutMs, with a warning naming it', async () => {
    const { log, lines } = capturingLogger('warn');
    const hung = (): Promise<void> => new Promise<void>(() => {});
    const pool = startJobPool([{ name: 'hung', schedule: ONCE_A_YEAR, runAtStart: true, run: hung }], log, { stopTimeoutMs: 200 });
    const startedMs = Date.now();
    await pool.stop();
    expect(Date.now() - startedMs).to.be.within(190, 1000);
    expect(lines()).to.have.lengthOf(1);
    expect(lines()[0]).to.include({ msg: 'jobs still running at stop' });
    expect(lines()[0]).to.have.deep.property('jobs', ['hung']);
  });

  describe('recording and retrying', () => {
    /** A recorder that keeps every call, in order. */
    function keepingRecorder(): { recorder: JobRecorder; calls: unknown[][] } {
      const calls: unknown[][] = [];
      return {
        calls,
        recorder: {
          planned: (job, next) => void calls.push(['planned', job.name, next instanceof Date]),
          started: (job) => void calls.push(['started', job.name]),
          finished: (job, finish) => void calls.push(['finished', job.name, finish.outcome, finish.result ?? finish.error, finish.nextRunAt instanceof Date]),
        },
      };
    }

    it('tells the recorder what it planned, each start, and each end with the result or the error', async () => {
      const { recorder, calls } = keepingRecorder();
      let fail = false;
      const run = () => {
        if (fail) throw new Error('disk full');
        return { removed: 2 };
      };
      const pool = startJobPool([{ name: 'recorded', schedule: ONCE_A_YEAR, runAtStart: true, run }], silent, { recorder });
      await sleep(10);
      fail = true;
      await pool.runNow('recorded');
      await pool.stop();
      expect(calls).to.deep.equal([
        ['planned', 'recorded', true],
        ['started', 'recorded'],
        ['finished', 'recorded', 'ok', { removed: 2 }, true],
        ['started', 'recorded'],
        ['finished', 'recorded', 'failed', 'disk full', true],
      ]);
    });

    it('logs each run with the job name, duration and outcome', async () => {
      const { log, lines } = capturingLogger('debug');
      const pool = startJobPool([{ name: 'timed', schedule: ONCE_A_YEAR, runAtStart: true, run: () => ({ swept: 1 }) }], log);
      await pool.stop();
      const finished = lines().find((line) => line.msg === 'job finished');
      expect(finished).to.include({ job: 'timed', outcome: 'ok', level: 30 });
      expect(finished).to.have.deep.property('result', { swept: 1 });
      expect(finished?.durationMs).to.be.a('number').and.at.least(0);
    });

    it('a recorder that throws is logged, and the job still runs and the pool keeps going', async () => {
      const { log, lines } = capturingLogger('error');
      const broken: JobRecorder = {
        planned: () => {},
        started: () => {
          throw new Error('database is locked');
        },
        finished: () => {},
      };
      let runs = 0;
      const pool = startJobPool([{ name: 'unrecorded', schedule: ONCE_A_YEAR, runAtStart: true, run: () => ++runs }], log, { recorder: broken });
      await pool.stop();
      expect(runs).to.equal(1);
      expect(lines().map((line) => line.msg)).to.deep.equal(['job run not recorded']);
    });

    it('retries a failed run after its backoff, doubling, until a run succeeds', async () => {
      const { log, lines } = capturingLogger('warn');
      const started: number[] = [];
      const run = () => {
        started.push(Date.now());
        if (started.length < 3) throw new Error(`outage ${started.length}`);
        return 'ok';
      };
      const pool = startJobPool([{ name: 'flaky', schedule: ONCE_A_YEAR, runAtStart: true, run, retry: { firstDelayMs: 40, maxDelayMs: 1000 } }], log);
      while (started.length < 3) await sleep(10);
      await sleep(200);
      await pool.stop();
      expect(started).to.have.lengthOf(3);
      expect(started[1]! - started[0]!).to.be.at.least(35);
      expect(started[2]! - started[1]!).to.be.at.least(75);
      const retries = lines().filter((line) => line.msg === 'job will be retried');
      expect(retries.map((line) => [line.failures, line.retryInMs])).to.deep.equal([
        [1, 40],
        [2, 80],
      ]);
    });

    it('stop() cancels a pending retry', async () => {
      let runs = 0;
      const run = () => {
        runs += 1;
        throw new Error('down');
      };
      const pool = startJobPool([{ name: 'cancelled', schedule: ONCE_A_YEAR, runAtStart: true, run, retry: { firstDelayMs: 100, maxDelayMs: 100 } }], silent);
      await sleep(10);
      await pool.stop();
      await sleep(200);
      expect(runs).to.equal(1);
    });

    it('backs off from firstDelayMs, doubling, capped at maxDelayMs', () => {
      const retry = { firstDelayMs: 60_000, maxDelayMs: 3_600_000 };
      expect([1, 2, 3, 6, 7, 8, 1000].map((failures) => retryDelay(retry, failures))).to.deep.equal([60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000, 3_600_000]);
    });

    it('runNow refuses a job the pool does not have', async () => {
      const pool = startJobPool([], silent);
      await pool.runNow('nothing').then(
        () => expect.fail('expected a refusal'),
        (error: Error) => expect(error.message).to.equal('no job named nothing in the pool'),
      );
      await pool.stop();
    });
  });
});
