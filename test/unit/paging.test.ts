import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { type ListScope, pageOf, pageStart } from '../../src/store/paging.js';
import { ensureServerSecrets } from '../../src/store/secrets.js';
import { ApiError } from '../../src/errors.js';
import { openDb } from '../../src/db/connection.js';
import { freshDb, type TempDb } from '../support/db.js';
import { testClock } from '../support/factories.js';

/** Cursors (src/store/paging.ts): opaque to clients, but signed, and bound to their list and filters. */
describe('cursor paging', () => {
  let temp: TempDb;
  let other: TempDb;
  const scope: ListScope = { list: 'customers', filters: { tenantId: 't1', search: 'acme', includeArchived: false } };
  const rows = ['a', 'b', 'c', 'd'];

  before(async () => {
    temp = await freshDb();
    other = await freshDb();
  });
  after(() => {
    temp.close();
    other.close();
  });

  /** The cursor of the first page of two rows. */
  const firstCursor = (db = temp.db, issuedFor = scope): string => {
    const page = pageOf(db, issuedFor, { limit: 2 }, rows.slice(0, 3), (row) => [row]);
    expect(page.rows).to.deep.equal(['a', 'b']);
    return page.nextCursor!;
  };

  const refusal = (work: () => unknown): string => {
    try {
      work();
    } catch (error) {
      expect(error).to.be.instanceOf(ApiError);
      expect((error as ApiError).code).to.equal('validation_failed');
      return (error as ApiError).message;
    }
    return expect.fail('the cursor should have been refused');
  };

  it('carries the position of the last row served, and nothing else a client needs to read', () => {
    expect(pageStart(temp.db, scope, { cursor: firstCursor(), limit: 2 })).to.deep.equal(['b']);
    expect(pageStart(temp.db, scope, { limit: 2 })).to.equal(null);
  });

  it('gives no cursor when the rows fetched (limit + 1) show nothing follows, so a cursor never leads to an empty page', () => {
    expect(pageOf(temp.db, scope, { limit: 2 }, ['a', 'b'], (row) => [row]).nextCursor).to.equal(null);
    expect(pageOf(temp.db, scope, { limit: 2 }, ['a'], (row) => [row]).nextCursor).to.equal(null);
  });

  it('treats an absent filter and an undefined one as the same filter set', () => {
    const cursor = firstCursor(temp.db, { list: 'x', filters: { tenantId: 't1' } });
    expect(pageStart(temp.db, { list: 'x', filters: { tenantId: 't1', search: undefined } }, { cursor, limit: 2 })).to.deep.equal(['b']);
  });

  it('refuses a cursor for another list ("cursor: belongs to another list")', () => {
    expect(refusal(() => pageStart(temp.db, { ...scope, list: 'vendors' }, { cursor: firstCursor(), limit: 2 }))).to.equal('cursor: belongs to another list');
  });

  it('refuses a cursor issued under other filters, or for another tenant', () => {
    for (const filters of [{ ...scope.filters, search: 'acm' }, { ...scope.filters, includeArchived: true }, { ...scope.filters, tenantId: 't2' }]) {
      expect(refusal(() => pageStart(temp.db, { ...scope, filters }, { cursor: firstCursor(), limit: 2 }))).to.match(/^cursor: was issued for other filters/);
    }
  });

  it('refuses text the server did not issue: garbage, a changed position, a changed signature, extra parts', () => {
    const cursor = firstCursor();
    const [body, mac] = cursor.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { after: string[] };
    const moved = Buffer.from(JSON.stringify({ ...payload, after: ['a'] })).toString('base64url');
    const flipped = `${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const forged of ['nonsense', `${moved}.${mac}`, `${body}.${flipped}`, `${cursor}.extra`, `.${mac}`, `${body}.`]) {
      expect(refusal(() => pageStart(temp.db, scope, { cursor: forged, limit: 2 })), forged).to.match(/^cursor: was not issued by this server/);
    }
  });

  it('refuses a cursor signed by another installation (another secret), even for the same list and filters', () => {
    expect(refusal(() => pageStart(temp.db, scope, { cursor: firstCursor(other.db), limit: 2 }))).to.match(/^cursor: was not issued by this server/);
  });

  it('refuses a cursor signed with a guessable key', () => {
    const body = Buffer.from(JSON.stringify({ v: 1, list: scope.list, filters: 'x', after: ['z'] })).toString('base64url');
    const mac = createHmac('sha256', '').update(body).digest('base64url');
    expect(refusal(() => pageStart(temp.db, scope, { cursor: `${body}.${mac}`, limit: 2 }))).to.match(/^cursor: was not issued by this server/);
  });

  it('keeps its secret across restarts: a cursor issued before still works after', () => {
    const cursor = firstCursor();
    ensureServerSecrets(temp.db, testClock());
    const reopened = openDb(temp.path);
    try {
      expect(pageStart(reopened, scope, { cursor, limit: 2 })).to.deep.equal(['b']);
    } finally {
      reopened.close();
    }
  });
});
