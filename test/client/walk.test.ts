import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { type BankImportResult, importBankStatement } from '../../src/books/import/bank-import.js';
import { parseStatement } from '../../src/books/import/statement.js';
import { projectRoot } from '../../src/paths.js';
import { buildApiTenant, type ApiTenant } from '../support/api.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { TEST_ACTOR } from '../support/factories.js';
import type { DayOptions, DayResult } from './day-types.js';
import { frankfurterBody, type FakeProvider, startFakeProvider } from '../support/rate-provider.js';

const run = promisify(execFile);
const CLIENT_DIR = join(projectRoot, 'test/client');
const TODAY = '2026-11-20';
const DAY_MODULE = './day.js';

/**
 * A typed client made the way a developer would make one: TypeScript types generated with
 * openapi-typescript from the document the server serves, compiled with the walk in day.ts,
 * then the walk run with openapi-fetch against the real server. A change to the document that
 * breaks a client's code fails here at compile time; one that breaks its answers fails the walk.
 */
describe('a typed client generated from /openapi/v1.json walks a day', function () {
  this.timeout(120_000);
  let app: TestApp;
  let tenant: ApiTenant;
  let provider: FakeProvider;

  before(async () => {
    provider = await startFakeProvider();
    provider.reply = (path) => ({ body: frankfurterBody(/\d{4}-\d{2}-\d{2}/.exec(path)?.[0] ?? TODAY, { USD: '1.0512', GBP: '0.8573', CAD: '1.4591', MXN: '19.6543' }) });
    app = await startTestApp(`${TODAY}T09:00:00.000Z`, { config: { fxProviderUrl: provider.url } });
    tenant = buildApiTenant(app, { plan: 'large', name: 'Lakeside Studio' });
  });
  after(async () => {
    await app.close();
    await provider.close();
  });

  it('generates the types, type-checks the walk against them, and walks the day', async () => {
    const document = (await app.get('/openapi/v1.json', null)).body as Record<string, unknown>;
    mkdirSync(join(CLIENT_DIR, 'generated'), { recursive: true });
    writeFileSync(join(CLIENT_DIR, 'generated/daybook-api.ts'), astToString(await openapiTS(document as never)));
    const compiled = await run(join(projectRoot, 'node_modules/.bin/tsc'), ['-p', join(CLIENT_DIR, 'tsconfig.json')]).catch((error: { stdout: string }) => ({ stdout: error.stdout, failed: true }));
    expect(compiled, compiled.stdout).not.to.have.property('failed');

    // Named through a variable: the main type-check must not follow it to day.ts, whose types
    // exist only once this test has generated them.
    const { walkADay } = (await import(DAY_MODULE)) as { walkADay: (options: DayOptions) => Promise<DayResult> };
    let imported: BankImportResult | undefined;
    const day = await walkADay({
      baseUrl: `${app.url}/api/v1`,
      key: tenant.key,
      today: TODAY,
      importStatement: async (businessId) => {
        const statement = ['date,description,amount,vendor', `${TODAY},CARD 4411 HOSTING CO,-49.00,Hosting Co`, `${TODAY},BAKERY SUPPLIES LTD,-125.40,Bakery Supplies`].join('\n');
        imported = importBankStatement(app.db, app.clock, TEST_ACTOR, { businessId, fileName: 'november.csv', rows: parseStatement(Buffer.from(statement)) });
      },
    });

    expect(day.businessName).to.equal(tenant.business.name);
    expect(day.invoiceStatus).to.equal('partially_paid');
    // 2 × 950.00 + 184.50 = 2,084.50, plus 20 % tax = 2,501.40; 1,000.00 paid.
    expect(day.balanceDueCents).to.equal('150140');
    // The hosting charge is the expense the walk recorded that morning: matched, not queued.
    expect(imported).to.include({ rows: 2, alreadyRecorded: 1 });
    expect(day.acceptedItems).to.equal(1);
    expect(day.trialBalanceDebitsCents).to.equal(day.trialBalanceCreditsCents);
    // Assets = liabilities + equity, this year's profit included in equity.
    expect(BigInt(day.assetsCents)).to.equal(BigInt(day.liabilitiesCents) + BigInt(day.equityCents));
    // The register: the recorded expense (matched by the hosting row) and the accepted bakery row.
    expect(day.transactionsSeen).to.equal(2);
    expect(day.expenseTransactionId).to.be.a('string');
    expect(day.receivablesCurrentCents).to.not.equal('0');
    expect(day.payablesCurrentCents).to.equal('0');
  });
});
