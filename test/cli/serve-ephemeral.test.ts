import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { CliHarness } from './support.js';

/**
 * `daybook serve --ephemeral`: Daybook as a subprocess of another language's test suite. It
 * prints one JSON line once it answers and serves until its stdin closes or it gets SIGTERM.
 */

interface Ephemeral {
  child: ChildProcess;
  line: Promise<string>;
  exited: Promise<number | null>;
  /** How it ended: its exit code, or the signal that ended it. */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

/** `imports`: modules the child loads first (`node --import`). */
function startEphemeral(args: string[], env: NodeJS.ProcessEnv = {}, imports: string[] = []): Ephemeral {
  const preload = imports.flatMap((file) => ['--import', file]);
  const child = spawn(process.execPath, ['--import', 'tsx', ...preload, join(projectRoot, 'src/cli/run.ts'), 'serve', '--ephemeral', ...args], {
    cwd: projectRoot,
    env: { ...process.env, DAYBOOK_LOG_LEVEL: 'warn', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const exited = ended.then(({ code }) => code);
  const line = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('\n')) resolve(stdout.slice(0, stdout.indexOf('\n')));
    });
    void exited.then((code) => reject(new Error(`exited ${code} before its line; stderr: ${stderr}`)));
  });
  return { child, line, exited, ended, stderr: () => stderr };
}

/** A temporary folder to give a child as its TMPDIR, so the books it makes can be looked for. */
function childTmpdir(): { path: string; books(): string[]; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), 'daybook-ephemeral-tmp-'));
  return {
    path,
    books: () => readdirSync(path).filter((name) => name.startsWith('daybook-')),
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}

describe('daybook serve --ephemeral', function () {
  this.timeout(30_000);
  const running: ChildProcess[] = [];
  afterEach(() => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it('prints one JSON line {url, accountId, businesses, keys} once it answers, at the clock asked, and exits 0 when stdin closes', async () => {
    const ephemeral = startEphemeral(['--clock', '2027-01-04']);
    running.push(ephemeral.child);
    const ready = JSON.parse(await ephemeral.line) as { url: string; accountId: string; businesses: { id: string; name: string }[]; keys: { key: string; access: string }[] };
    expect(Object.keys(ready)).to.deep.equal(['url', 'accountId', 'businesses', 'keys']);
    expect(ready.businesses.map((business) => business.name)).to.deep.equal(['Test Business']);
    expect(ready.keys[0]!.access).to.equal('read_write');
    const headers = { authorization: `Bearer ${ready.keys[0]!.key}` };
    expect((await fetch(`${ready.url}/api/v1/businesses`, { headers })).status).to.equal(200);
    // The server's "now" is the clock asked for: a new invoice is issued that day.
    const post = (path: string, body: unknown) =>
      fetch(`${ready.url}/api/v1${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((res) => res.json() as Promise<any>);
    const accounts = (await (await fetch(`${ready.url}/api/v1/accounts?type=revenue`, { headers })).json()) as { accounts: { id: string }[] };
    const customer = await post('/customers', { name: 'Acme Corp' });
    const invoice = await post('/invoices', { customerId: customer.id, lines: [{ description: 'Work', quantity: '1', unitPriceCents: '100', accountId: accounts.accounts[0]!.id }] });
    const detail = (await (await fetch(`${ready.url}/api/v1/invoices/${invoice.invoiceId}`, { headers })).json()) as { issueDate: string };
    expect(detail.issueDate).to.equal('2027-01-04');
    ephemeral.child.stdin!.end();
    expect(await ephemeral.exited, ephemeral.stderr()).to.equal(0);
    expect(ephemeral.stderr()).to.contain('stdin closed: shutting down');
  });

  it('with --control, lets the test set the clock, run a job, read the outbox and ask for failures over HTTP', async () => {
    const ephemeral = startEphemeral(['--clock', '2027-01-04', '--control']);
    running.push(ephemeral.child);
    const ready = JSON.parse(await ephemeral.line) as { url: string; keys: { key: string }[] };
    const headers = { authorization: `Bearer ${ready.keys[0]!.key}`, 'content-type': 'application/json' };
    const control = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${ready.url}/__daybook${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const api = async (method: string, path: string, body?: unknown) =>
      (await fetch(`${ready.url}/api/v1${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })).json() as Promise<any>;

    const revenue = (await api('GET', '/accounts?type=revenue')).accounts[0].id;
    const customer = await api('POST', '/customers', { name: 'Acme Corp', email: 'ap@acme.example' });
    const invoice = await api('POST', '/invoices', { customerId: customer.id, paymentTermsDays: 30, lines: [{ description: 'Work', quantity: '1', unitPriceCents: '10000', accountId: revenue }] });
    await api('POST', `/invoices/${invoice.invoiceId}/send`);
    const outbox = await control('GET', '/outbox');
    expect(outbox.body.messages.map((email: { to: string }) => email.to)).to.deep.equal(['ap@acme.example']);
    expect(outbox.body.messages[0].payUrl.startsWith(`${ready.url}/pay/`)).to.equal(true);

    expect(await control('POST', '/clock', { at: '2027-02-20' })).to.deep.equal({ status: 200, body: { now: '2027-02-20T00:00:00.000Z' } });
    expect(await control('POST', '/jobs/overdue')).to.deep.equal({ status: 200, body: { ran: 'overdue' } });
    expect((await api('GET', `/invoices/${invoice.invoiceId}`)).status).to.equal('overdue');
    expect((await control('POST', '/clock', { advanceDays: 10 })).body).to.deep.equal({ now: '2027-03-02T00:00:00.000Z' });

    expect(await control('POST', '/fail-next', { count: 1, failure: { status: 500 } })).to.deep.equal({ status: 200, body: { ok: true } });
    expect((await api('GET', '/businesses')).error.code).to.equal('internal_error');

    const badClock = await control('POST', '/clock', { at: '2027-02-30' });
    expect(badClock.status).to.equal(422);
    expect(badClock.body.error.message).to.equal('at: "2027-02-30" is not a day (YYYY-MM-DD) or an ISO 8601 instant (2027-01-31T09:00:00Z)');
    expect((await control('POST', '/jobs/nothing')).body.error.code).to.equal('not_found');
    ephemeral.child.stdin!.end();
    expect(await ephemeral.exited).to.equal(0);
  });

  it('has no control surface without --control: /__daybook answers the JSON 404', async () => {
    const ephemeral = startEphemeral([]);
    running.push(ephemeral.child);
    const ready = JSON.parse(await ephemeral.line) as { url: string };
    const res = await fetch(`${ready.url}/__daybook/outbox`);
    expect(res.status).to.equal(404);
    expect(((await res.json()) as any).error.code).to.equal('not_found');
    ephemeral.child.stdin!.end();
    expect(await ephemeral.exited).to.equal(0);
  });

  it('with --fixture FILE, starts from the books the fixture describes', async () => {
    const cli = new CliHarness();
    try {
      const file = join(cli.dir, 'fixture.json');
      writeFileSync(file, JSON.stringify({ businesses: [{ name: 'From The File' }], customers: [{ name: 'Filed Customer' }] }));
      const ephemeral = startEphemeral(['--fixture', file]);
      running.push(ephemeral.child);
      const ready = JSON.parse(await ephemeral.line) as { url: string; businesses: { name: string }[]; keys: { key: string }[] };
      expect(ready.businesses.map((business) => business.name)).to.deep.equal(['From The File']);
      const customers = (await (await fetch(`${ready.url}/api/v1/customers`, { headers: { authorization: `Bearer ${ready.keys[0]!.key}` } })).json()) as { customers: { name: string }[] };
      expect(customers.customers.map((customer) => customer.name)).to.deep.equal(['Filed Customer']);
      ephemeral.child.stdin!.end();
      expect(await ephemeral.exited).to.equal(0);
    } finally {
      cli.cleanup();
    }
  });

  it('refuses a fixture that does not validate with the path of the bad field (exit 2)', async () => {
    const cli = new CliHarness();
    try {
      const file = join(cli.dir, 'bad.json');
      writeFileSync(file, JSON.stringify({ customers: [{ name: 'A', email: 7 }] }));
      const ephemeral = startEphemeral(['--fixture', file]);
      running.push(ephemeral.child);
      expect(await ephemeral.exited).to.equal(2);
      expect(ephemeral.stderr()).to.match(new RegExp(`^daybook: --fixture ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: customers\\.0\\.email: `));
    } finally {
      cli.cleanup();
    }
  });

  it('takes only its log level from the environment: a real server\'s settings exported in the shell do not stop it', async () => {
    const ephemeral = startEphemeral([], { DAYBOOK_TLS_CERT: '/nowhere/cert.pem', DAYBOOK_TRUST_PROXY: 'not-a-list', DAYBOOK_DB: '/nowhere/books.sqlite' });
    running.push(ephemeral.child);
    const ready = JSON.parse(await ephemeral.line) as { url: string };
    expect(ready.url).to.match(/^http:\/\/127\.0\.0\.1:[0-9]+$/);
    ephemeral.child.stdin!.end();
    expect(await ephemeral.exited, ephemeral.stderr()).to.equal(0);
  });

  it('with --control, refuses count 1e9, stallMs 1e11 and advanceDays 1e308 (422 naming each) and keeps serving; SIGTERM then leaves no books behind', async () => {
    const tmp = childTmpdir();
    try {
      const ephemeral = startEphemeral(['--control'], { TMPDIR: tmp.path });
      running.push(ephemeral.child);
      const ready = JSON.parse(await ephemeral.line) as { url: string; keys: { key: string }[] };
      expect(tmp.books(), 'its books, while it runs').to.have.lengthOf(1);
      const control = async (path: string, body: unknown) => {
        const res = await fetch(`${ready.url}/__daybook${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        return { status: res.status, body: (await res.json()) as any };
      };
      for (const [path, body, field] of [
        ['/fail-next', { count: 1e9, failure: { status: 500 } }, 'count'],
        ['/fail-next', { count: 1, failure: { stallMs: 1e11 } }, 'failure.stallMs'],
        ['/clock', { advanceDays: 1e308 }, 'advanceDays'],
      ] as const) {
        const answer = await control(path, body);
        expect(answer.status, JSON.stringify(answer.body)).to.equal(422);
        expect(answer.body.error.code).to.equal('validation_failed');
        expect(answer.body.error.message.startsWith(`${field}: `), answer.body.error.message).to.equal(true);
      }
      expect((await fetch(`${ready.url}/api/v1/businesses`, { headers: { authorization: `Bearer ${ready.keys[0]!.key}` } })).status, 'still serving, nothing queued').to.equal(200);
      ephemeral.child.kill('SIGTERM');
      expect(await ephemeral.exited, ephemeral.stderr()).to.equal(0);
      expect(tmp.books()).to.deep.equal([]);
    } finally {
      tmp.remove();
    }
  });

  it('removes its books when it dies of an uncaught error', async () => {
    const tmp = childTmpdir();
    try {
      const ephemeral = startEphemeral(['--control'], { TMPDIR: tmp.path }, [join(projectRoot, 'test/support/uncaught-on-signal.ts')]);
      running.push(ephemeral.child);
      JSON.parse(await ephemeral.line);
      expect(tmp.books(), 'its books, while it runs').to.have.lengthOf(1);
      ephemeral.child.kill('SIGUSR2');
      expect(await ephemeral.ended).to.deep.equal({ code: 1, signal: null });
      expect(ephemeral.stderr()).to.contain('an uncaught error, as the test asked');
      expect(tmp.books()).to.deep.equal([]);
    } finally {
      tmp.remove();
    }
  });

  it('exits 0 on SIGTERM', async () => {
    const ephemeral = startEphemeral([]);
    running.push(ephemeral.child);
    JSON.parse(await ephemeral.line);
    ephemeral.child.kill('SIGTERM');
    expect(await ephemeral.exited, ephemeral.stderr()).to.equal(0);
  });

  for (const [args, message] of [
    [['--clock', '2027-02-30'], 'daybook: --clock: "2027-02-30" is not a day (YYYY-MM-DD) or an ISO 8601 instant'],
    [['--port', '4000'], 'daybook: --ephemeral listens on a free loopback port: leave out --port and --host'],
  ] as const) {
    it(`refuses ${args.join(' ')} with one line and exit 2`, async () => {
      const ephemeral = startEphemeral([...args]);
      running.push(ephemeral.child);
      expect(await ephemeral.exited).to.equal(2);
      expect(ephemeral.stderr().trim().split('\n')[0]).to.equal(message.startsWith('daybook: --clock') ? `${message} (2027-01-31T09:00:00Z)` : message);
    });
  }

  for (const flag of [['--control'], ['--clock', '2027-01-04']]) {
    it(`refuses ${flag[0]} without --ephemeral (exit 2), serving nothing`, async () => {
      const cli = new CliHarness();
      try {
        const result = await cli.run(['serve', '--port', '0', ...flag]);
        expect(result.code).to.equal(2);
        expect(result.stderr).to.match(new RegExp(`^daybook: ${flag[0]} is for --ephemeral only`));
        expect(result.stdout).to.equal('');
      } finally {
        cli.cleanup();
      }
    });
  }
});
