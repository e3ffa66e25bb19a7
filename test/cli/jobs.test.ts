import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CLI_TEST_ENV, CliHarness, expectBadArguments, expectOk, parseOneObject, waitFor } from './support.js';

interface ListedJob {
  name: string;
  schedule: string;
  serverSchedule: string | null;
  lastOutcome: string | null;
  lastResult: unknown;
  lastError: string | null;
  runs: number;
  failures: number;
  nextRunAt: string | null;
}

/** `daybook jobs list` and `daybook jobs run NAME`: what the job pool did, recorded in the books, and a job run by hand. */
describe('daybook jobs', function () {
  this.timeout(30_000);
  let cli: CliHarness;
  beforeEach(async () => {
    cli = new CliHarness();
    await cli.createAccount();
  });
  afterEach(() => cli.cleanup());

  const list = async (env: NodeJS.ProcessEnv = CLI_TEST_ENV) => {
    const result = await cli.run(['--json', 'jobs', 'list'], { env });
    expectOk(result);
    return parseOneObject<{ serverRunning: boolean; jobs: ListedJob[] }>(result.stdout);
  };

  it('lists the six jobs with their schedules, none run yet, and says no server runs', async () => {
    const listed = await list({ ...CLI_TEST_ENV, DAYBOOK_JOB_OUTBOX: '*/5 * * * *' });
    expect(listed.serverRunning).to.equal(false);
    expect(listed.jobs.map((job) => [job.name, job.schedule, job.lastOutcome, job.runs])).to.deep.equal([
      ['rates', 'off', null, 0],
      ['overdue', '5 * * * *', null, 0],
      ['outbox', '*/5 * * * *', null, 0],
      ['backup', 'off', null, 0],
      ['housekeeping', '*/10 * * * *', null, 0],
      ['card-payments', '*/10 * * * *', null, 0],
    ]);
    const human = await cli.run(['jobs', 'list']);
    expectOk(human);
    expect(human.stdout.split('\n')[0]).to.match(/^job\s+schedule \(UTC\)\s+last run\s+next run$/);
    expect(human.stdout).to.match(/^overdue\s+5 \* \* \* \*\s+never\s+-$/m);
    expect(human.stdout).to.contain('No server is running on these books: nothing is scheduled until one starts.');
  });

  it('runs a job now, prints what it did, and records the run for the list', async () => {
    const ran = await cli.json<{ name: string; outcome: string; durationMs: number; result: unknown }>(['jobs', 'run', 'housekeeping']);
    expect(ran).to.include({ name: 'housekeeping', outcome: 'ok' });
    expect(ran.result).to.deep.include({ idempotencyRecords: 0, counterWindows: 0, walCheckpointed: false });
    const human = await cli.run(['jobs', 'run', 'overdue']);
    expectOk(human);
    expect(human.stdout).to.match(/^Job overdue ran in [0-9.]+ ms: \{"markedOverdue":0\}\n$/);

    const listed = await list();
    const overdue = listed.jobs.find((job) => job.name === 'overdue')!;
    expect(overdue).to.include({ lastOutcome: 'ok', runs: 1, failures: 0 });
    expect(overdue.lastResult).to.deep.equal({ markedOverdue: 0 });
    expect(listed.jobs.find((job) => job.name === 'housekeeping')).to.include({ lastOutcome: 'ok', runs: 1 });
    expect((await cli.run(['jobs', 'list'])).stdout).to.match(/^overdue\s+5 \* \* \* \*\s+ok at 2026-03-15 12:00:00Z, \d+ ms\s+-$/m);
  });

  it('runs a job that is off by configuration when asked by name', async () => {
    const ran = await cli.run(['--json', 'jobs', 'run', 'overdue'], { env: { ...CLI_TEST_ENV, DAYBOOK_JOB_OVERDUE: 'off' } });
    expectOk(ran);
    expect(parseOneObject<{ outcome: string }>(ran.stdout).outcome).to.equal('ok');
  });

  describe('a job that fails', () => {
    let provider: Server;
    let url: string;
    before(async () => {
      // A rate provider that answers every request with a server error.
      provider = createServer((_req, res) => res.writeHead(500).end('down for maintenance'));
      await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => provider.close(() => resolve())));

    it('exits 1 with the reason on one line, and the list shows the failure and how many in a row', async () => {
      const env = { ...CLI_TEST_ENV, DAYBOOK_FX_PROVIDER_URL: url };
      const first = await cli.run(['jobs', 'run', 'rates'], { env });
      expect(first.code).to.equal(1);
      expect(first.stdout).to.equal('');
      expect(first.stderr).to.match(/^daybook: job rates failed after [0-9.]+ ms: .*HTTP 500/m);
      await cli.run(['jobs', 'run', 'rates'], { env });
      const rates = (await list(env)).jobs.find((job) => job.name === 'rates')!;
      expect(rates).to.include({ lastOutcome: 'failed', runs: 2, failures: 2 });
      expect(rates.lastError).to.match(/HTTP 500/);
      const human = (await cli.run(['jobs', 'list'], { env })).stdout;
      expect(human).to.match(/^rates\s+off\s+failed at .*, \d+ ms \(2 in a row\)/m);
      expect(human).to.match(/^rates last failed: .*HTTP 500/m);
    });
  });

  it('refuses to run the outbox without a mail server, rather than count emails as sent to a log', async () => {
    expectBadArguments(await cli.run(['jobs', 'run', 'outbox']), /^daybook: jobs run outbox needs DAYBOOK_SMTP_URL/);
    expect((await list()).jobs.find((job) => job.name === 'outbox')?.runs).to.equal(0);
  });

  it("a run by hand keeps the next run the server planned", async () => {
    const planned = '2026-03-16T02:15:00.000Z';
    cli.withDb((db) => db.prepare("INSERT INTO job_runs (name, schedule, next_run_at, updated_at) VALUES ('overdue', '5 * * * *', ?, ?)").run(planned, planned));
    expectOk(await cli.run(['jobs', 'run', 'overdue']));
    expect(cli.withDb((db) => db.prepare("SELECT next_run_at, runs FROM job_runs WHERE name = 'overdue'").get())).to.deep.equal({ next_run_at: planned, runs: 1n });
  });

  it('refuses a job it does not have (exit 2)', async () => {
    expectBadArguments(await cli.run(['jobs', 'run', 'payroll']), /^daybook: command-argument value 'payroll' is invalid for argument 'name'. Allowed choices are rates, overdue, outbox, backup, housekeeping/);
  });

  it('refuses books that are not there rather than making them (exit 2)', async () => {
    expectBadArguments(await cli.run(['--db', `${cli.dir}/nothing.sqlite`, 'jobs', 'run', 'overdue']), /^daybook: no books at /);
  });

  it('while a server runs: the list says so, shows the runs it made at start and the next run it planned', async () => {
    const stop = new AbortController();
    const live = cli.start(['--json', 'serve', '--port', '0', '--host', '127.0.0.1'], { stop: stop.signal });
    try {
      await waitFor(live, () => live.stdout().endsWith('\n'), 'the serve object on stdout');
      let listed = await list();
      for (let tries = 0; tries < 50 && listed.jobs.some((job) => ['overdue', 'outbox', 'housekeeping'].includes(job.name) && job.lastOutcome !== 'ok'); tries += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        listed = await list();
      }
      expect(listed.serverRunning).to.equal(true);
      const byName = new Map(listed.jobs.map((job) => [job.name, job]));
      for (const name of ['overdue', 'outbox', 'housekeeping']) {
        expect(byName.get(name), name).to.include({ lastOutcome: 'ok', runs: 1 });
        expect(Date.parse(byName.get(name)!.nextRunAt!), `${name} next run`).to.be.greaterThan(Date.now() - 1000);
      }
      expect(byName.get('overdue')?.serverSchedule).to.equal('5 * * * *');
      expect(byName.get('rates')).to.include({ serverSchedule: null, nextRunAt: null, runs: 0 });
      // This shell turns rates off too; the table shows the server's schedules.
      const human = (await cli.run(['jobs', 'list'], { env: { ...CLI_TEST_ENV, DAYBOOK_JOB_RATES: '0 9 * * *' } })).stdout;
      expect(human).to.match(/^rates\s+off\s+never\s+off$/m);
      expect(human).to.match(/^overdue\s+5 \* \* \* \*\s+ok at /m);
    } finally {
      stop.abort();
    }
    expectOk(await live.done);
  });
});
