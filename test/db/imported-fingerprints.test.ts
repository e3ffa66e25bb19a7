import { expect } from 'chai';
import { importBankStatement, importedFingerprints, importFingerprint, matchWindow } from '../../src/books/import/bank-import.js';
import { parseStatement } from '../../src/books/import/statement.js';
import { freshDb, type TempDb } from '../support/db.js';
import { buildBusiness, TEST_ACTOR, testClock } from '../support/factories.js';

/** The import reads the fingerprints it may meet once (src/books/import/bank-import.ts), or looks each up past a bound. */
describe('importedFingerprints', () => {
  let temp: TempDb;
  before(async () => {
    temp = await freshDb();
  });
  after(() => temp.close());

  it('answers as the index does, read ahead or looked up one by one past its bound', () => {
    const clock = testClock();
    const business = buildBusiness(temp.db, clock);
    const csv = ['date,description,amount', '2026-03-01,Coffee,-4.50', '2026-03-02,Paper,-12.00', '2026-03-02,Paper,-12.00', '2026-03-09,Rent,-900.00'].join('\n');
    const rows = parseStatement(Buffer.from(csv));
    importBankStatement(temp.db, clock, TEST_ACTOR, { businessId: business.id, fileName: 'march.csv', rows });
    const stored = [importFingerprint(business.id, rows[0]!, 1), importFingerprint(business.id, rows[1]!, 1), importFingerprint(business.id, rows[1]!, 2), importFingerprint(business.id, rows[3]!, 1)];
    const absent = [importFingerprint(business.id, rows[1]!, 3), importFingerprint(business.id, { ...rows[0]!, date: '2026-03-03' }, 1)];
    // Read ahead (4 rows in the dates, at most 2 a file row); past the bound; a one-row file among more rows of its dates.
    for (const [file, maxRead] of [[rows, 200_000], [rows, 2], [rows.slice(0, 1), 200_000]] as const) {
      const known = importedFingerprints(temp.db, business.id, matchWindow(file), file.length, maxRead);
      expect(known instanceof Set, `read ahead for ${file.length} rows, bound ${maxRead}`).to.equal(file.length === rows.length && maxRead > 2);
      for (const fingerprint of stored) expect(known.has(fingerprint), `stored, ${file.length} rows, bound ${maxRead}`).to.equal(true);
      for (const fingerprint of absent) expect(known.has(fingerprint), `absent, ${file.length} rows, bound ${maxRead}`).to.equal(false);
    }
  });
});
