import { expect } from 'chai';
import { DEMO_TENANT_NAME, seedDemo } from '../../db/seeds/demo.js';
import { getTenant } from '../../src/books/tenants.js';
import { listBusinesses } from '../../src/books/businesses.js';
import { authenticateKey, listKeys } from '../../src/books/keys.js';
import { ledgerTotals } from '../../src/books/ledger.js';
import { fixedClock } from '../../src/clock.js';
import { addDays } from '../../src/dates.js';
import { all } from '../../src/db/statements.js';
import { freshDb, type TempDb } from '../support/db.js';
import { CLOCK_START } from './support.js';

describe('demo seed (db/seeds/demo.ts)', () => {
  let temp: TempDb;
  const clock = fixedClock(CLOCK_START);
  beforeEach(async () => (temp = await freshDb()));
  afterEach(() => temp.close());

  it('creates a middle-plan account on plan budgets, with an accrual and a cash business', () => {
    const demo = seedDemo(temp.db, clock);
    const account = getTenant(temp.db, demo.tenantId);
    expect(account).to.include({ name: DEMO_TENANT_NAME, plan: 'middle', billingState: 'active', apiAccess: true });
    expect(account.rateLimit).to.deep.equal({ mode: 'plan' });
    const businesses = listBusinesses(temp.db, demo.tenantId);
    expect(businesses.map((b) => b.basis).sort()).to.deep.equal(['accrual', 'cash']);
    expect(demo.businesses).to.deep.equal(businesses.map((b) => ({ id: b.id, name: b.name })));
  });

  it('makes one read-write key for every business that authenticates', () => {
    const demo = seedDemo(temp.db, clock);
    const principal = authenticateKey(temp.db, clock, demo.key);
    expect(principal).to.include({ keyId: demo.keyId, access: 'read_write', businessIds: null });
    expect(listKeys(temp.db, demo.tenantId)).to.have.length(1);
  });

  it('posts balanced entries, an opening deposit first, within the two months before the clock', () => {
    const demo = seedDemo(temp.db, clock);
    for (const business of demo.businesses) {
      for (const view of ['accrual', 'cash'] as const) {
        const totals = ledgerTotals(temp.db, business.id, view);
        expect(totals.debitCents).to.equal(totals.creditCents);
        expect(totals.debitCents > 0n).to.equal(true);
      }
      const entries = all<{ entry_date: string; source_type: string }>(
        temp.db,
        'SELECT entry_date, source_type FROM journal_entries WHERE business_id = ? ORDER BY entry_date',
        business.id,
      );
      expect(entries.length).to.be.at.least(3);
      expect(entries[0]?.source_type).to.equal('opening_balance');
      for (const entry of entries) {
        expect(entry.entry_date >= addDays('2026-03-15', -62) && entry.entry_date < '2026-03-15', entry.entry_date).to.equal(true);
      }
    }
  });
});
