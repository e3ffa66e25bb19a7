import { expect } from 'chai';
import { openDb } from '../../src/db/connection.js';
import { startTestApp, type TestApp } from '../support/app.js';

/** GET /healthz, for a container's HEALTHCHECK: the process answers and the books take a write. */
describe('GET /healthz', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  it('answers 200 {"ok": true} without a key when the books can take a write', async () => {
    const res = await app.get('/healthz', null);
    expect([res.status, res.body]).to.deep.equal([200, { ok: true }]);
  });

  it('answers 503 at once, naming the problem, while another process holds the write lock, and 200 again after', async () => {
    const other = openDb(app.dbPath);
    try {
      other.exec('BEGIN IMMEDIATE');
      const started = Date.now();
      const res = await app.get('/healthz', null);
      expect(Date.now() - started, 'no busy wait').to.be.below(1000);
      expect(res.status).to.equal(503);
      expect(res.body.ok).to.equal(false);
      expect(res.body.problem).to.match(/^the books cannot take a write: database is locked/);
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    expect((await app.get('/healthz', null)).status).to.equal(200);
  });
});
