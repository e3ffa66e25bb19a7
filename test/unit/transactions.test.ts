import { expect } from 'chai';
import { recordAudit } from '../../src/store/audit.js';
import { createStandardChart } from '../../src/books/chart.js';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { claimInProgress, storeAnswer, storedAnswer } from '../../src/store/idempotency.js';
import { inTransaction } from '../../src/db/connection.js';
import { freshDb, type TempDb } from '../support/db.js';
import { TEST_ACTOR, buildTenant, testClock } from '../support/factories.js';

/** Functions whose writes belong to a caller's transaction refuse to run outside one. */
describe('the caller holds the transaction', () => {
  let temp: TempDb;
  const clock = testClock();
  before(async () => {
    temp = await freshDb();
  });
  after(() => temp.close());

  const claim = { apiKeyId: 'k', key: 'x', requestHash: 'h' };
  const outside: Array<[string, () => unknown]> = [
    ['recordAudit', () => recordAudit(temp.db, clock, TEST_ACTOR, { tenantId: 'none', action: 'x' })],
    ['createStandardChart', () => createStandardChart(temp.db, clock, 'none')],
    ['findOrCreateCustomer', () => findOrCreateCustomer(temp.db, clock, TEST_ACTOR, 'none', { name: 'x' })],
    ['storedAnswer', () => storedAnswer(temp.db, clock, claim)],
    ['storeAnswer', () => storeAnswer(temp.db, clock, claim, { status: 201, json: '{}' })],
    ['claimInProgress', () => claimInProgress(temp.db, clock, claim)],
  ];
  for (const [name, call] of outside) {
    it(`${name} throws outside a transaction and writes nothing`, () => {
      const audits = temp.db.prepare('SELECT count(*) AS n FROM audit_log').get();
      expect(call).to.throw(new RegExp(`^${name}: must run inside the caller's transaction`));
      expect(temp.db.prepare('SELECT count(*) AS n FROM audit_log').get()).to.deep.equal(audits);
    });
  }

  it('runs inside one', () => {
    const tenant = buildTenant(temp.db, clock);
    const created = inTransaction(temp.db, () => findOrCreateCustomer(temp.db, clock, TEST_ACTOR, tenant.id, { name: 'Inside Co' }));
    expect(created.created).to.equal(true);
  });
});
