import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { type Fixture, type RunningDaybook, startDaybook } from '../../src/testing/index.js';
import { readPdf } from '../support/pdf.js';

/**
 * daybook/testing: a throwaway server for other products' test suites. Each test talks to it
 * the way such a suite would: fetch, the keys it was given, its clock and its outbox.
 */

async function call(daybook: RunningDaybook, method: 'GET' | 'POST', path: string, body?: unknown, key = daybook.keys[0]!.key) {
  const response = await fetch(`${daybook.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** A customer with an address, a $250.00 invoice due in 30 days, sent; returns the invoice's id and number. */
async function sentInvoice(daybook: RunningDaybook): Promise<{ id: string; number: string }> {
  const customer = await call(daybook, 'POST', '/customers', { name: 'Acme Corp', email: 'ap@acme.example' });
  const entityId = daybook.businesses[0]!.id;
  const revenue = (await call(daybook, 'GET', `/accounts?type=revenue&entityId=${entityId}`)).body.accounts.find((account: { name: string }) => account.name === 'Service Revenue');
  const created = await call(daybook, 'POST', '/invoices', {
    entityId,
    customerId: customer.body.id,
    paymentTermsDays: 30,
    lines: [{ description: 'Consulting', quantity: '2', unitPriceCents: '12500', accountId: revenue.id }],
  });
  expect(created.status).to.equal(201);
  expect((await call(daybook, 'POST', `/invoices/${created.body.invoiceId}/send`)).status).to.equal(200);
  return { id: created.body.invoiceId, number: created.body.invoiceNumber };
}

const testingFolders = () => readdirSync(tmpdir()).filter((name) => name.startsWith('daybook-testing-')).sort();

describe('daybook/testing: startDaybook', () => {
  let daybook: RunningDaybook;
  before(async () => {
    const started = performance.now();
    daybook = await startDaybook({ at: '2027-01-04T09:00:00Z', businesses: ['Harbor Coffee', 'Harbor Catering'] });
    const listed = await call(daybook, 'GET', '/businesses');
    console.log(`      startDaybook: first request answered ${Math.round(performance.now() - started)} ms after the call (first in this process: migrations included)`);
    expect(listed.status).to.equal(200);
  });
  after(async () => {
    await daybook.close();
  });

  it('makes the account, its businesses and a Read and write key for all of them', async () => {
    expect(daybook.businesses.map((business) => business.name)).to.deep.equal(['Harbor Coffee', 'Harbor Catering']);
    expect(daybook.keys).to.have.lengthOf(1);
    expect(daybook.keys[0]).to.include({ access: 'read_write' });
    const listed = await call(daybook, 'GET', '/businesses');
    expect(listed.body.accountName).to.equal('Test Account');
    expect(listed.body.businesses.map((business: { id: string }) => business.id).sort()).to.deep.equal(daybook.businesses.map((business) => business.id).sort());
  });

  it('captures the invoice email in the outbox, with a pay link that opens on this server', async () => {
    const invoice = await sentInvoice(daybook);
    const email = await daybook.outbox.waitFor((candidate) => candidate.subject.includes(invoice.number));
    expect(email.to).to.equal('ap@acme.example');
    expect(email.text).to.contain(invoice.number);
    expect(email.payUrl?.startsWith(`${daybook.url}/pay/`), String(email.payUrl)).to.equal(true);
    const page = await fetch(email.payUrl!);
    expect(page.status).to.equal(200);
    expect(await page.text()).to.contain(invoice.number);
  });

  it('captures the invoice email’s PDF: named after the invoice number, application/pdf, its bytes in base64', async () => {
    const invoice = await sentInvoice(daybook);
    const email = await daybook.outbox.waitFor((candidate) => candidate.subject.includes(invoice.number));
    expect(email.attachments.map(({ filename, contentType }) => ({ filename, contentType }))).to.deep.equal([{ filename: `${invoice.number}.pdf`, contentType: 'application/pdf' }]);
    const pdf = Buffer.from(email.attachments[0]!.contentBase64, 'base64');
    expect(pdf.length).to.equal(email.attachments[0]!.size);
    expect(pdf.subarray(0, 5).toString('latin1')).to.equal('%PDF-');
    expect((await readPdf(pdf)).info.Title).to.equal(`Invoice ${invoice.number} from Harbor Coffee`);
  });

  it('moves "now" for everything with the clock: a sent invoice goes overdue and ages once the overdue job runs', async () => {
    const invoice = await sentInvoice(daybook);
    daybook.clock.set('2027-02-20T09:00:00Z'); // 47 days after issue, 17 past due
    await daybook.runJob('overdue');
    expect((await call(daybook, 'GET', `/invoices/${invoice.id}`)).body.status).to.equal('overdue');
    const aging = await call(daybook, 'GET', `/reports/ar-aging?entityId=${daybook.businesses[0]!.id}`);
    expect(aging.body.items.find((item: { id: string }) => item.id === invoice.id)).to.include({ daysOverdue: 17 });
    daybook.clock.set('2027-01-04T09:00:00Z');
  });

  it('refuses a clock date that does not parse, or names a day that does not exist, and leaves the clock as it was', () => {
    const now = daybook.clock.now().toISOString();
    for (const bad of ['2027-02-30', 'tomorrow', '2027-13-01', '31/01/2027', '2027-01-31T25:00:00Z']) {
      expect(() => daybook.clock.set(bad), bad).to.throw(`clock: "${bad}" is not a day (YYYY-MM-DD) or an ISO 8601 instant`);
    }
    expect(daybook.clock.now().toISOString()).to.equal(now);
    daybook.clock.set('2027-01-31');
    expect(daybook.clock.now().toISOString()).to.equal('2027-01-31T00:00:00.000Z');
    daybook.clock.set(now);
  });

  describe('failNext: failures for a client\'s retry logic, with the spec\'s error bodies', () => {
    const expectError = (answer: { status: number; body: any }, status: number, code: string) => {
      expect(answer.status).to.equal(status);
      expect(Object.keys(answer.body)).to.deep.equal(['error']);
      expect(answer.body.error.code).to.equal(code);
    };

    it('answers the next N requests 429 rate_limited with the retry-after asked, then serves again', async () => {
      daybook.failNext(2, { status: 429, retryAfterSeconds: 7 });
      for (let i = 0; i < 2; i++) {
        const response = await fetch(`${daybook.url}/api/v1/businesses`, { headers: { authorization: `Bearer ${daybook.keys[0]!.key}` } });
        expect(response.headers.get('retry-after')).to.equal('7');
        expectError({ status: response.status, body: await response.json() }, 429, 'rate_limited');
      }
      expect((await call(daybook, 'GET', '/businesses')).status).to.equal(200);
    });

    it('answers 500 internal_error without running the write, so a retry with the same Idempotency-Key writes it once', async () => {
      daybook.failNext(1, { status: 500 });
      const send = () =>
        fetch(`${daybook.url}/api/v1/customers`, {
          method: 'POST',
          headers: { authorization: `Bearer ${daybook.keys[0]!.key}`, 'content-type': 'application/json', 'idempotency-key': 'retry-me' },
          body: JSON.stringify({ name: 'Retried Customer' }),
        }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
      expectError(await send(), 500, 'internal_error');
      expect((await call(daybook, 'GET', '/customers?search=Retried')).body.customers).to.deep.equal([]);
      const retried = await send();
      expect(retried.status).to.equal(201);
      expect((await send()).body, 'a replay').to.deep.equal(retried.body);
      expect((await call(daybook, 'GET', '/customers?search=Retried')).body.customers).to.have.lengthOf(1);
    });

    it('holds a request for the stall asked, then answers it as usual', async () => {
      daybook.failNext(1, { stallMs: 300 });
      const started = performance.now();
      expect((await call(daybook, 'GET', '/businesses')).status).to.equal(200);
      expect(performance.now() - started, 'held at least the stall').to.be.at.least(290);
    });

    it('refuses a failure it cannot give, naming what is wrong', () => {
      expect(() => daybook.failNext(0, { status: 500 })).to.throw('failNext: count must be a whole number from 1 to 1000 (got 0)');
      expect(() => daybook.failNext(1, { status: 429, retryAfterSeconds: 0 })).to.throw('failNext: retryAfterSeconds must be a whole number from 1 to 86400 (got 0)');
      expect(() => daybook.failNext(1, { stallMs: -5 })).to.throw('failNext: stallMs must be a whole number from 0 to 60000 (got -5)');
      expect(() => daybook.failNext(1, { status: 503 } as never)).to.throw('failNext: failure must be {status: 429, retryAfterSeconds}, {status: 500} or {stallMs} (got {"status":503})');
    });

    it('refuses counts and stalls past their bounds, at once and without queueing anything (count 1e9 once ran out of memory)', async () => {
      const started = performance.now();
      expect(() => daybook.failNext(1e9, { status: 500 })).to.throw('failNext: count must be a whole number from 1 to 1000 (got 1000000000)');
      expect(() => daybook.failNext(1001, { status: 500 })).to.throw('failNext: count must be a whole number from 1 to 1000 (got 1001)');
      expect(() => daybook.failNext(1, { stallMs: 1e11 })).to.throw('failNext: stallMs must be a whole number from 0 to 60000 (got 100000000000)');
      expect(() => daybook.failNext(1, { status: 429, retryAfterSeconds: 86_401 })).to.throw('failNext: retryAfterSeconds must be a whole number from 1 to 86400 (got 86401)');
      expect(performance.now() - started, 'ms to refuse').to.be.below(100);
      expect((await call(daybook, 'GET', '/businesses')).status, 'nothing queued').to.equal(200);
    });
  });

  it('refuses a clock move past a century at once, or outside the years 0000 to 9999, and leaves the clock as it was', () => {
    const now = daybook.clock.now().toISOString();
    expect(() => daybook.clock.advanceDays(1e308)).to.throw('clock: advanceDays must be from -36500 to 36500 days (got 1e+308)');
    expect(() => daybook.clock.advanceDays(-36_501)).to.throw('clock: advanceDays must be from -36500 to 36500 days (got -36501)');
    expect(() => daybook.clock.advanceDays(Number.NaN)).to.throw('clock: advanceDays must be a finite number (got NaN)');
    expect(() => daybook.clock.advanceMs(1e308)).to.throw(`clock: advanceMs would take the clock from ${now} outside the years 0000 to 9999`);
    expect(() => daybook.clock.set(new Date(Date.UTC(10_000, 0, 1)))).to.throw('clock: +010000-01-01T00:00:00.000Z is outside the years 0000 to 9999 (UTC)');
    expect(daybook.clock.now().toISOString()).to.equal(now);
    daybook.clock.set('9999-12-31');
    expect(() => daybook.clock.advanceDays(1)).to.throw('clock: advanceDays would take the clock from 9999-12-31T00:00:00.000Z outside the years 0000 to 9999');
    expect(daybook.clock.now().toISOString()).to.equal('9999-12-31T00:00:00.000Z');
    daybook.clock.set(now);
  });

  it('refuses a key limited to a business it was not asked to make, naming it', async () => {
    let refused: Error | undefined;
    try {
      await startDaybook({ businesses: ['One'], keys: [{ businesses: ['Two'] }] });
    } catch (error) {
      refused = error as Error;
    }
    expect(refused?.message).to.contain('"Two", which is not one of the businesses (One)');
  });
});

describe('daybook/testing: the demo fixture', () => {
  it('starts from the demo books: two businesses with history, invoices, a review queue, and a working key', async () => {
    const started = performance.now();
    const daybook = await startDaybook({ fixture: 'demo', at: '2027-01-04T09:00:00Z' });
    try {
      console.log(`      startDaybook({fixture: 'demo'}): up in ${Math.round(performance.now() - started)} ms`);
      expect(daybook.businesses.map((business) => business.name)).to.have.lengthOf(2);
      const entityId = daybook.businesses[0]!.id;
      const invoices = await call(daybook, 'GET', `/invoices?entityId=${entityId}&limit=100`);
      expect(new Set(invoices.body.invoices.map((invoice: { status: string }) => invoice.status))).to.include.members(['draft', 'paid', 'overdue']);
      const aging = await call(daybook, 'GET', `/reports/ar-aging?entityId=${entityId}`);
      expect(BigInt(aging.body.grandTotal.cents) > 0n, 'receivables outstanding').to.equal(true);
      const queue = await call(daybook, 'GET', `/review-queue?entityId=${entityId}`);
      expect(queue.body.highConfidence.length + queue.body.needsReview.length).to.be.greaterThan(0);
    } finally {
      await daybook.close();
    }
  });

  it('refuses options the demo fixture makes itself', async () => {
    let refused: Error | undefined;
    await startDaybook({ fixture: 'demo', businesses: ['Mine'] }).catch((error: Error) => (refused = error));
    expect(refused?.message).to.equal('startDaybook: the demo fixture makes its own account, businesses and key; leave out businesses');
  });
});

describe('daybook/testing: books from a JSON fixture', () => {
  const fixture = {
    accountName: 'Fixture Firm',
    businesses: [{ name: 'Harbor Coffee' }],
    rates: [{ currency: 'EUR', date: '2027-01-04', usdPerUnit: '1.08' }],
    customers: [
      { name: 'Acme Corp', email: 'ap@acme.example', paymentTermsDays: 30 },
      { name: 'Berlin GmbH', email: 'ap@berlin.example', currency: 'EUR' },
    ],
    vendors: [{ name: 'Staples' }],
    expenses: [{ date: '2027-01-02', amountCents: '4599', vendor: 'Staples', account: 'Office Supplies', memo: 'paper' }],
    invoices: [
      { customer: 'Acme Corp', issueDate: '2027-01-04', lines: [{ description: 'Draft work', quantity: '1', unitPriceCents: '10000', account: 'Service Revenue' }] },
      { customer: 'Acme Corp', issueDate: '2027-01-04', lines: [{ description: 'Sent work', quantity: '2', unitPriceCents: '12500', account: 'Service Revenue' }], sent: true },
      {
        customer: 'Acme Corp',
        issueDate: '2027-01-04',
        lines: [{ description: 'Half paid', quantity: '1', unitPriceCents: '20000', account: 'Service Revenue' }],
        sent: true,
        payments: [{ amountCents: '5000', method: 'check' }],
      },
      {
        customer: 'Berlin GmbH',
        issueDate: '2027-01-04',
        currency: 'EUR',
        lines: [{ description: 'Euro work', quantity: '1', unitPriceCents: '30000', account: 'Service Revenue' }],
        sent: true,
        payments: [{ amountCents: '30000', method: 'wire' }],
      },
    ],
    bankStatements: [{ csv: 'date,description,amount,vendor\n2027-01-03,"Coffee beans",-84.20,Roastery\n2027-01-03,"Milk",-21.00,Dairy Co\n' }],
  };

  it('seeds customers, rates, expenses, invoices in each state and a bank statement, through the books functions', async () => {
    const daybook = await startDaybook({ at: '2027-01-04T12:00:00Z', fixture: fixture as Fixture });
    try {
      expect((await call(daybook, 'GET', '/businesses')).body.accountName).to.equal('Fixture Firm');
      const invoices = (await call(daybook, 'GET', '/invoices')).body.invoices as { status: string; total: { cents: string; currency: string } }[];
      expect(invoices.map((invoice) => invoice.status).sort()).to.deep.equal(['draft', 'paid', 'partially_paid', 'sent']);
      expect(invoices.find((invoice) => invoice.status === 'paid')?.total).to.include({ cents: '30000', currency: 'EUR' });
      const expenses = (await call(daybook, 'GET', '/transactions?text=Staples')).body.transactions;
      expect(expenses).to.have.lengthOf(1);
      const queue = (await call(daybook, 'GET', '/review-queue')).body;
      expect(queue.highConfidence.length + queue.needsReview.length).to.equal(2);
      const trial = (await call(daybook, 'GET', '/reports/trial-balance?asOf=2027-01-04')).body;
      expect(trial.totals.debit.cents).to.equal(trial.totals.credit.cents);
      expect(daybook.outbox.messages(), 'the fixture\'s emails are history').to.deep.equal([]);
    } finally {
      await daybook.close();
    }
  });

  for (const [what, bad, message] of [
    ['a field of the wrong type', { customers: [{ name: 'A', email: 7 }] }, 'fixture: customers.0.email: '],
    ['an unknown field', { customers: [{ name: 'A', nickname: 'a' }] }, 'fixture: customers.0.nickname: is not a recognized field'],
    ['a customer the fixture does not have', { invoices: [{ customer: 'Nobody', lines: [{ description: 'x', quantity: '1', unitPriceCents: '1', account: 'Service Revenue' }] }] }, 'fixture: invoices.0.customer: no customer named "Nobody"'],
    ['an account the business does not have', { expenses: [{ date: '2027-01-02', amountCents: '1', vendor: 'V', account: 'Yachts' }] }, 'fixture: expenses.0.account: no postable account named "Yachts"'],
    ['a payment on a draft', { customers: [{ name: 'A' }], invoices: [{ customer: 'A', lines: [{ description: 'x', quantity: '1', unitPriceCents: '100', account: 'Service Revenue' }], payments: [{ amountCents: '1', method: 'cash' }] }] }, 'fixture: invoices.0.payments: a draft takes no payment'],
    ['a payment over the balance', { customers: [{ name: 'A' }], invoices: [{ customer: 'A', sent: true, lines: [{ description: 'x', quantity: '1', unitPriceCents: '100', account: 'Service Revenue' }], payments: [{ amountCents: '500', method: 'cash' }] }] }, 'fixture: invoices.0.payments.0: amountCents: '],
  ] as const) {
    it(`refuses ${what}, naming the path, and leaves nothing behind`, async () => {
      const before = testingFolders();
      let refused: Error | undefined;
      await startDaybook({ at: '2027-01-04', fixture: bad as never }).catch((error: Error) => (refused = error));
      expect(refused?.message.startsWith(message), refused?.message).to.equal(true);
      expect(testingFolders()).to.deep.equal(before);
    });
  }
});

describe('daybook/testing: the package entry', () => {
  it('is exported as daybook/testing, with its types (built by npm ci)', async () => {
    const entry = (await import('daybook/testing')) as { startDaybook?: unknown };
    expect(entry.startDaybook).to.be.a('function');
    expect(existsSync(join(projectRoot, 'dist/src/testing/index.d.ts')), 'the types beside it').to.equal(true);
  });
});

describe('daybook/testing: instances side by side', () => {
  it('shares nothing between two servers started at once, and close() leaves no folder behind', async () => {
    const before = testingFolders();
    const started = performance.now();
    const [first, second] = await Promise.all([startDaybook(), startDaybook()]);
    const bothUp = Math.round(performance.now() - started);
    try {
      expect(first.url).to.not.equal(second.url);
      expect((await call(first, 'POST', '/customers', { name: 'Only In First' })).status).to.equal(201);
      const inSecond = await call(second, 'GET', '/customers?search=Only');
      expect(inSecond.body.customers).to.deep.equal([]);
      expect((await call(second, 'GET', '/businesses', undefined, first.keys[0]!.key)).status, "the first's key at the second").to.equal(401);
      expect(testingFolders().length).to.equal(before.length + 2);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
    expect(testingFolders()).to.deep.equal(before);
    const warm = performance.now();
    const third = await startDaybook();
    expect((await call(third, 'GET', '/businesses')).status).to.equal(200);
    console.log(`      startDaybook: two at once up in ${bothUp} ms; one more answering in ${Math.round(performance.now() - warm)} ms`);
    await third.close();
    let refused = false;
    await fetch(`${first.url}/healthz`).catch(() => (refused = true));
    expect(refused, 'a closed server answers nothing').to.equal(true);
  });
});

describe('daybook/testing: books removed however the process ends', function () {
  this.timeout(30_000);
  /**
   * A child process that starts a server and never closes it, then ends as `ending` says; with
   * TMPDIR a folder of the test's own, to see what it leaves behind.
   */
  async function endWithoutClose(ending: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; left: string[]; stderr: string }> {
    const tmp = mkdtempSync(join(tmpdir(), 'daybook-ending-'));
    try {
      const script = `
        import { readdirSync } from 'node:fs';
        import { startDaybook } from ${JSON.stringify(join(projectRoot, 'src/testing/index.ts'))};
        const daybook = await startDaybook({ control: true });
        await fetch(daybook.url + '/healthz');
        if (readdirSync(process.env.TMPDIR).filter((name) => name.startsWith('daybook-testing-')).length !== 1) throw new Error('no books made');
        ${ending}`;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: projectRoot, env: { ...process.env, TMPDIR: tmp }, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
      const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.on('exit', (exitCode, exitSignal) => {
          clearTimeout(timer);
          resolve({ code: exitCode, signal: exitSignal });
        });
      });
      return { code, signal, left: readdirSync(tmp).filter((name) => name.startsWith('daybook-')), stderr };
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  for (const [how, ending, expected] of [
    ['process.exit()', 'process.exit(3);', { code: 3, signal: null }],
    ['an uncaught exception', "setTimeout(() => { throw new Error('boom'); }, 10);", { code: 1, signal: null }],
    ['an unhandled rejection', "void Promise.reject(new Error('boom'));", { code: 1, signal: null }],
    ['SIGINT, which nothing else listens for (still ends the process as SIGINT)', "process.kill(process.pid, 'SIGINT'); setTimeout(() => {}, 10_000);", { code: null, signal: 'SIGINT' }],
    ['SIGTERM, which nothing else listens for', "process.kill(process.pid, 'SIGTERM'); setTimeout(() => {}, 10_000);", { code: null, signal: 'SIGTERM' }],
  ] as const) {
    it(`removes the books of a server never closed when the process ends by ${how}`, async () => {
      const ended = await endWithoutClose(ending);
      expect({ code: ended.code, signal: ended.signal }, ended.stderr).to.deep.equal(expected);
      expect(ended.left).to.deep.equal([]);
    });
  }

  it('leaves a process that handles SIGTERM itself running, books and all, until it exits', async () => {
    const ended = await endWithoutClose(`
      process.on('SIGTERM', () => setTimeout(async () => {
        const left = readdirSync(process.env.TMPDIR).filter((name) => name.startsWith('daybook-testing-')).length;
        const served = (await fetch(daybook.url + '/healthz')).status;
        process.exitCode = left === 1 && served === 200 ? 42 : 1;
        await daybook.close();
      }, 50));
      process.kill(process.pid, 'SIGTERM');`);
    expect({ code: ended.code, signal: ended.signal }, ended.stderr).to.deep.equal({ code: 42, signal: null });
    expect(ended.left).to.deep.equal([]);
  });
});

describe('daybook/testing: nothing left running', function () {
  this.timeout(30_000);
  it('lets a process that started, used and closed a server end by itself (no handle left open, as mocha without --exit needs)', async () => {
    const script = `
      import { startDaybook } from ${JSON.stringify(join(projectRoot, 'src/testing/index.ts'))};
      const daybook = await startDaybook();
      await daybook.outbox.waitFor(() => false, 50).catch(() => {});
      await fetch(daybook.url + '/healthz');
      await daybook.close();
      console.log('closed');`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => void (out += chunk.toString()));
    const ended = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(null);
      }, 20_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    expect(out.trim()).to.equal('closed');
    expect(ended, 'exit code; null means it was still running 20 s later').to.equal(0);
  });
});
