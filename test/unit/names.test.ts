import { expect } from 'chai';
import fc from 'fast-check';
import { createBusiness } from '../../src/books/businesses.js';
import { createKey } from '../../src/books/keys.js';
import { createTenant } from '../../src/books/tenants.js';
import { ApiError } from '../../src/errors.js';
import { foldName, nameProblem } from '../../src/names.js';
import { Name } from '../../src/api/schemas/common.js';
import { schemaProblem } from '../../src/http/validate.js';
import { freshDb, type TempDb } from '../support/db.js';
import { TEST_ACTOR, buildTenant, testClock } from '../support/factories.js';

/** One name rule for the API and the admin command (src/names.ts). */
describe('names', () => {
  const cases: Array<[string, string, string | null]> = [
    ['a plain name', 'Harbor & Pine', null],
    ['a name with accents and emoji', 'Café Ōsaka 🍜', null],
    ['200 characters', 'x'.repeat(200), null],
    ['an empty name', '', 'must not be empty'],
    ['201 characters', 'x'.repeat(201), 'must be at most 200 characters'],
    ['only spaces', '   ', 'must not be blank or contain control characters'],
    ['a tab inside', 'Harbor\tPine', 'must not be blank or contain control characters'],
    ['a newline inside', 'Harbor\nPine', 'must not be blank or contain control characters'],
    ['a bell character', 'Harbor\u0007', 'must not be blank or contain control characters'],
    ['an escape sequence', '\u001b[31mRed', 'must not be blank or contain control characters'],
    ['DEL', 'Harbor\u007f', 'must not be blank or contain control characters'],
    ['a C1 control (CSI, which terminals act on)', 'Evil\u009b31mCo', 'must not be blank or contain control characters'],
    ['a right-to-left override', 'Invoice\u202eFDP.exe', 'must not be blank or contain control characters'],
    ['a bidirectional isolate', 'Name\u2067x\u2069', 'must not be blank or contain control characters'],
    ['a line separator', 'Harbor\u2028Pine', 'must not be blank or contain control characters'],
    ['a lone surrogate', 'Harbor\ud800', 'must not be blank or contain control characters'],
    ['200 emoji (400 UTF-16 units, 200 characters)', '🍜'.repeat(200), null],
    ['201 emoji', '🍜'.repeat(201), 'must be at most 200 characters'],
    ['a joined emoji (zero-width joiner is allowed)', 'Family 👩‍👩‍👧', null],
    ['right-to-left text without override marks', 'مخبز البحيرة', null],
  ];

  for (const [title, value, problem] of cases) {
    it(`${problem === null ? 'accepts' : 'refuses'} ${title}, the same through the API's schema`, () => {
      expect(nameProblem(value)).to.equal(problem);
      expect(schemaProblem(Name(200), value) === null).to.equal(problem === null);
    });
  }

  describe('foldName (how names are compared and searched)', () => {
    const same: Array<[string, string]> = [
      ['Harbor & Pine', 'HARBOR & PINE'],
      ['Émile', 'émile'],
      ['E\u0301mile', 'Émile'],
      ['Straße', 'STRASSE'],
      ['ΟΔΥΣΣΕΑΣ', 'οδυσσεας'],
      ['ΟΔΥΣ', 'οδυσ'],
    ];
    for (const [a, b] of same) {
      it(`folds "${a}" and "${b}" alike`, () => {
        expect(foldName(a)).to.equal(foldName(b));
      });
    }

    it('lets a search ending in capital sigma find the name it starts', () => {
      expect(foldName('ΟΔΥΣΣΕΑΣ Travel').includes(foldName('ΟΔΥΣ'))).to.equal(true);
    });

    it('folds ASCII text (its shortcut) exactly as the full Unicode fold does', () => {
      const fullFold = (text: string) => text.normalize('NFC').toLocaleUpperCase('en-US').toLocaleLowerCase('en-US').replace(/ς/g, 'σ').normalize('NFC');
      fc.assert(
        fc.property(fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map((code) => String.fromCharCode(code)) }), (text) => {
          expect(foldName(text)).to.equal(fullFold(text));
        }),
        { numRuns: 2000 },
      );
      expect(foldName('POS DEBIT SHELL OIL 57442')).to.equal('pos debit shell oil 57442');
      // One character past ASCII takes the full fold.
      expect(foldName('CAFÉ STRASSE ß')).to.equal(fullFold('CAFÉ STRASSE ß'));
    });
  });

  describe('the books refuse a bad name whatever the caller (422 validation_failed "name:")', () => {
    let temp: TempDb;
    const clock = testClock();
    before(async () => {
      temp = await freshDb();
    });
    after(() => temp.close());

    const refusal = (work: () => unknown): ApiError => {
      try {
        work();
      } catch (error) {
        expect(error).to.be.instanceOf(ApiError);
        return error as ApiError;
      }
      expect.fail('the name should have been refused');
    };

    it('for a tenant, a business and a key, and writes nothing', () => {
      const tenant = buildTenant(temp.db, clock);
      const count = (table: string) => Number((temp.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: bigint }).n);
      const before = [count('tenants'), count('businesses'), count('api_keys')];
      expect(refusal(() => createTenant(temp.db, clock, TEST_ACTOR, { name: 'Bad\u0007Firm' })).message).to.equal(
        'name: must not be blank or contain control characters',
      );
      expect(refusal(() => createBusiness(temp.db, clock, TEST_ACTOR, { tenantId: tenant.id, name: 'Line\nBreak' })).message).to.match(/^name:/);
      expect(refusal(() => createKey(temp.db, clock, TEST_ACTOR, { tenantId: tenant.id, name: ' ', access: 'read' })).message).to.match(/^name:/);
      expect([count('tenants'), count('businesses'), count('api_keys')]).to.deep.equal(before);
    });
  });
});
