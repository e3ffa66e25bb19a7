import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { type Fixture, type RunningDaybook, startDaybook } from '../../src/testing/index.js';
import { readPdf } from '../support/pdf.js';

/**
 * Books a fixture can describe beyond customers, expenses and invoices (issue 27, finding 8):
 * a business on the cash basis, bills, period locks and voided invoices; and every link the
 * test server writes is under its own url.
 */

async function call(daybook: RunningDaybook, method: 'GET' | 'POST', path: string, body?: unknown) {
  const response = await fetch(`${daybook.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${daybook.keys[0]!.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function accountId(daybook: RunningDaybook, type: string, name: string): Promise<string> {
  const { accounts } = (await call(daybook, 'GET', `/accounts?type=${type}&entityId=${daybook.businesses[0]!.id}`)).body;
  return accounts.find((account: { name: string }) => account.name === name).id;
}

const line = (description: string, unitPriceCents: string) => ({ description, quantity: '1', unitPriceCents, account: 'Service Revenue' });

async function withDaybook(fixture: unknown, test: (daybook: RunningDaybook) => Promise<void>): Promise<void> {
  const daybook = await startDaybook({ at: '2027-03-10T12:00:00Z', fixture: fixture as Fixture });
  try {
    await test(daybook);
  } finally {
    await daybook.close();
  }
}

describe('daybook/testing: fixture businesses, bills, period locks and voided invoices', () => {
  it('a fixture business on the cash basis answers profit and loss on the cash basis; one without basis, on the accrual basis', () =>
    withDaybook(
      {
        businesses: [{ name: 'Cash Client', basis: 'cash' }, { name: 'Accrual Client' }],
        customers: [{ name: 'Acme Corp' }],
        invoices: [
          { customer: 'Acme Corp', issueDate: '2027-03-01', sent: true, lines: [line('Unpaid work', '40000')] },
          { business: 'Accrual Client', customer: 'Acme Corp', issueDate: '2027-03-01', sent: true, lines: [line('Unpaid work', '40000')] },
        ],
      },
      async (daybook) => {
        const [cash, accrual] = daybook.businesses;
        const profitAndLoss = async (entityId: string) => (await call(daybook, 'GET', `/reports/profit-and-loss?entityId=${entityId}&periodStart=2027-03-01&periodEnd=2027-03-31`)).body;
        const cashReport = await profitAndLoss(cash!.id);
        expect(cashReport.basis).to.equal('cash');
        expect(cashReport.totals.revenue.cents, 'an unpaid invoice is no revenue on the cash basis').to.equal('0');
        const accrualReport = await profitAndLoss(accrual!.id);
        expect(accrualReport.basis).to.equal('accrual');
        expect(accrualReport.totals.revenue.cents).to.equal('40000');
      },
    ));

  it('fixture bills, open and part-paid, show in payables aging', () =>
    withDaybook(
      {
        bills: [
          { vendor: 'Landlord LLC', number: 'R-03', issueDate: '2027-03-01', dueDate: '2027-03-31', amountCents: '150000', account: 'Rent' },
          { vendor: 'Staples', number: 'S-17', issueDate: '2027-01-05', dueDate: '2027-02-04', amountCents: '20000', account: 'Office Supplies', payments: [{ amountCents: '5000', date: '2027-01-20' }] },
        ],
      },
      async (daybook) => {
        const aging = (await call(daybook, 'GET', '/reports/ap-aging')).body;
        expect(aging.grandTotal.cents).to.equal('165000');
        expect(aging.items.map((item: { customerOrVendor: string }) => item.customerOrVendor).sort()).to.deep.equal(['Landlord LLC', 'Staples']);
      },
    ));

  it('a fixture period lock refuses an expense dated inside it with 409 period_locked', () =>
    withDaybook({ periodLocks: [{ through: '2027-02-28' }], expenses: [{ date: '2027-02-10', amountCents: '1000', vendor: 'Staples', account: 'Office Supplies' }] }, async (daybook) => {
      const body = { entityId: daybook.businesses[0]!.id, date: '2027-02-15', amountCents: '2500', vendorName: 'Staples', accountId: await accountId(daybook, 'expense', 'Office Supplies') };
      const refused = await call(daybook, 'POST', '/expenses', body);
      expect(refused.status).to.equal(409);
      expect(refused.body.error.code).to.equal('period_locked');
      expect((await call(daybook, 'POST', '/expenses', { ...body, date: '2027-03-01' })).status, 'after the lock').to.equal(201);
    }));

  it('a fixture invoice with void: true is sent, then voided, and shows status void', () =>
    withDaybook({ customers: [{ name: 'Acme Corp' }], invoices: [{ customer: 'Acme Corp', issueDate: '2027-03-01', void: true, lines: [line('Cancelled', '10000')] }] }, async (daybook) => {
      const invoices = (await call(daybook, 'GET', '/invoices')).body.invoices as { status: string }[];
      expect(invoices.map((invoice) => invoice.status)).to.deep.equal(['void']);
      const trial = (await call(daybook, 'GET', '/reports/trial-balance?asOf=2027-03-10')).body;
      expect(trial.totals.debit.cents).to.equal(trial.totals.credit.cents);
    }));

  for (const [what, bad, message] of [
    ['a basis that is neither', { businesses: [{ name: 'B', basis: 'hybrid' }] }, 'fixture: businesses.0.basis: must be one of accrual, cash'],
    ['a bill on an account the business does not have', { bills: [{ vendor: 'V', number: '1', issueDate: '2027-03-01', dueDate: '2027-03-31', amountCents: '100', account: 'Yachts' }] }, 'fixture: bills.0.account: no postable account named "Yachts"'],
    ['a bill payment over what is owed', { bills: [{ vendor: 'V', number: '1', issueDate: '2027-03-01', dueDate: '2027-03-31', amountCents: '100', account: 'Rent', payments: [{ amountCents: '500' }] }] }, 'fixture: bills.0.payments.0: '],
    ['a bill due before it is issued', { bills: [{ vendor: 'V', number: '1', issueDate: '2027-03-01', dueDate: '2027-02-01', amountCents: '100', account: 'Rent' }] }, 'fixture: bills.0: dueDate: '],
    ['a period lock that is not a date', { periodLocks: [{ through: 'March' }] }, 'fixture: periodLocks.0.through: must be a date YYYY-MM-DD'],
    ['a period lock that moves back', { periodLocks: [{ through: '2027-02-28' }, { through: '2027-01-31' }] }, 'fixture: periodLocks.1: periods are already locked through 2027-02-28'],
    ['a voided invoice with a payment', { customers: [{ name: 'A' }], invoices: [{ customer: 'A', void: true, lines: [line('x', '100')], payments: [{ amountCents: '1', method: 'cash' }] }] }, 'fixture: invoices.0.payments: a voided invoice takes no payment'],
    ['a voided invoice that is not sent', { customers: [{ name: 'A' }], invoices: [{ customer: 'A', void: true, sent: false, lines: [line('x', '100')] }] }, 'fixture: invoices.0.sent: a voided invoice is sent first'],
  ] as const) {
    it(`refuses ${what}, naming the path`, async () => {
      let refused: Error | undefined;
      await startDaybook({ at: '2027-03-10', fixture: bad as never }).catch((error: Error) => (refused = error));
      expect(refused?.message.startsWith(message), refused?.message).to.equal(true);
    });
  }
});

describe('daybook/testing: every link is under the server\'s own url', () => {
  it('the payUrl of a fixture invoice and of one made through the API start with daybook.url (port 0)', () =>
    withDaybook({ customers: [{ name: 'Acme Corp', email: 'ap@acme.example' }], invoices: [{ customer: 'Acme Corp', issueDate: '2027-03-01', sent: true, lines: [line('Fixture work', '10000')] }] }, async (daybook) => {
      expect(daybook.url).to.match(/^http:\/\/127\.0\.0\.1:[0-9]+$/);
      const [fixtureInvoice] = (await call(daybook, 'GET', '/invoices')).body.invoices;
      expect((await call(daybook, 'GET', `/invoices/${fixtureInvoice.id}`)).body.payUrl).to.match(new RegExp(`^${daybook.url}/pay/`));

      const customerId = (await call(daybook, 'GET', '/customers')).body.customers[0].id;
      const created = await call(daybook, 'POST', '/invoices', { entityId: daybook.businesses[0]!.id, customerId, lines: [{ description: 'API work', quantity: '1', unitPriceCents: '5000', accountId: await accountId(daybook, 'revenue', 'Service Revenue') }] });
      expect(created.body.webUrl).to.match(new RegExp(`^${daybook.url}/pay/`));
      const sent = await call(daybook, 'POST', `/invoices/${created.body.invoiceId}/send`);
      expect(sent.body.payUrl).to.match(new RegExp(`^${daybook.url}/pay/`));
      const email = await daybook.outbox.waitFor((message) => message.subject.includes(created.body.invoiceNumber));
      expect(email.text, 'the email itself').to.include(`${daybook.url}/pay/`);
      expect(email.text).not.to.include('localhost:3000');

      // A site address the caller gives is kept.
      const behindProxy = await startDaybook({ at: '2027-03-10', siteUrl: 'https://books.example', fixture: { customers: [{ name: 'A' }], invoices: [{ customer: 'A', sent: true, lines: [line('x', '100')] }] } as Fixture });
      try {
        const [invoice] = (await call(behindProxy, 'GET', '/invoices')).body.invoices;
        expect((await call(behindProxy, 'GET', `/invoices/${invoice.id}`)).body.payUrl).to.match(/^https:\/\/books\.example\/pay\//);
      } finally {
        await behindProxy.close();
      }
    }));

  it('under serve --ephemeral, payUrl, the PDF\'s pay link and Today\'s evidence urls are under the url it printed', async function () {
    this.timeout(20_000);
    const dir = mkdtempSync(join(tmpdir(), 'daybook-fixture-test-'));
    const file = join(dir, 'books.json');
    writeFileSync(file, JSON.stringify({ customers: [{ name: 'Acme Corp', email: 'ap@acme.example' }], invoices: [{ customer: 'Acme Corp', issueDate: '2027-01-04', paymentTermsDays: 30, sent: true, lines: [line('Work', '10000')] }] }));
    const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'src/cli/run.ts'), 'serve', '--ephemeral', '--clock', '2027-03-10', '--fixture', file], {
      cwd: projectRoot,
      env: { ...process.env, DAYBOOK_LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    try {
      let stdout = '';
      const ready = JSON.parse(
        await new Promise<string>((resolve, reject) => {
          child.stdout!.on('data', (chunk: Buffer) => {
            stdout += chunk.toString();
            if (stdout.includes('\n')) resolve(stdout.slice(0, stdout.indexOf('\n')));
          });
          child.on('exit', (code) => reject(new Error(`exited ${code} before its line`)));
        }),
      ) as { url: string; keys: { key: string }[] };
      const api = async (path: string) => (await fetch(`${ready.url}/api/v1${path}`, { headers: { authorization: `Bearer ${ready.keys[0]!.key}` } })).json() as Promise<any>;
      const [listed] = (await api('/invoices')).invoices;
      const { payUrl } = await api(`/invoices/${listed.id}`);
      expect(payUrl.startsWith(`${ready.url}/pay/`), payUrl).to.equal(true);
      expect((await fetch(payUrl)).status, 'the pay page opens').to.equal(200);
      const pdf = await readPdf(new Uint8Array(await (await fetch(`${payUrl}/invoice.pdf`)).arrayBuffer()));
      expect(pdf.links.filter((link) => link.includes('/pay/')), 'the PDF\'s pay link').to.deep.equal([payUrl]);
      const today = await api('/today');
      const urls = (today.signals as { evidence: { url?: string }[] }[]).flatMap((item) => item.evidence.map((evidence) => evidence.url).filter((url) => url !== undefined));
      expect(urls, 'the overdue invoice is named with a link').not.to.deep.equal([]);
      for (const url of urls) expect(url.startsWith(`${ready.url}/api/v1/`), url).to.equal(true);
    } finally {
      child.stdin!.end();
      await new Promise((resolve) => (child.exitCode === null ? child.on('exit', resolve) : resolve(undefined)));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
