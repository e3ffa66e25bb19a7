import { expect } from 'chai';
import fc from 'fast-check';
import { schemaProblem } from '../../src/http/validate.js';
import { nameKey, searchForm, trimName, vendorNameProblem } from '../../src/names.js';
import { Text, VendorName } from '../../src/api/schemas/common.js';
import { textProblem } from '../../src/text.js';

/** How names compare (nameKey), which vendor names and free text are refused, the same in the books and the API's schemas. */
describe('name keys, vendor names and free text', () => {
  describe('nameKey (how customers are matched, and names ordered and searched)', () => {
    const alike: Array<[string, string]> = [
      ['Acme Roofing', 'Acme\u00a0Roofing'],
      ['Acme Roofing', 'Ac\u200bme Roofing'],
      ['Acme Roofing', '\ufeffAcme Roofing'],
      ['Acme Roofing', 'Ac\u00adme Roofing'],
      ['Acme Roofing', 'Ａｃｍｅ Ｒｏｏｆｉｎｇ'],
      ['Acme Roofing', '  Acme   Roofing\t'],
      ['Acme Roofing', 'Acme\u2800Roofing'],
      ['fish', 'ﬁsh'],
      ['Straße', 'STRAẞE'],
      ['Straße', 'STRASSE'],
    ];
    for (const [a, b] of alike) {
      it(`keys ${JSON.stringify(a)} and ${JSON.stringify(b)} alike`, () => {
        expect(nameKey(b)).to.equal(nameKey(a));
      });
    }

    it('keeps Cyrillic look-alikes apart (out of scope: NFKC does not fold across scripts)', () => {
      expect(nameKey('Асме')).to.not.equal(nameKey('Acme'));
    });

    it('is its own key, and a name\'s search form contains its key', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), (name) => {
          const key = nameKey(name);
          return nameKey(key) === key && searchForm(key) === key && searchForm(name).includes(key);
        }),
        { numRuns: 5000 },
      );
    });

    it('trims white space and invisible characters at the ends of a name, and only there', () => {
      expect(trimName('\u200b\u00a0Bay  Street\u200bDeli \ufeff')).to.equal('Bay  Street\u200bDeli');
    });
  });

  describe('vendor names refuse characters that show as nothing', () => {
    const cases: Array<[string, string, boolean]> = [
      ['a plain name', 'Miller & Sons', true],
      ['a no-break space (another vendor, matched exactly)', 'Miller\u00a0& Sons', true],
      ['a zero-width space', 'Miller\u200b & Sons', false],
      ['a joiner between letters', 'Mil\u200dler', false],
      ['a soft hyphen', 'Mil\u00adler', false],
      ['a variation selector after a letter', 'Miller\ufe0f', false],
      ['a joiner at the end of an emoji', 'Cafe 👍🏽\u200d', false],
      ['an emoji with its variation selector', 'Café ☕️', true],
      ['an emoji joined with ZWJ', 'Family 👩‍👩‍👧', true],
      ['a keycap', 'Keycap 1️⃣', true],
      ['a control character (the name rule)', 'Bell\u0007', false],
    ];
    for (const [title, value, ok] of cases) {
      it(`${ok ? 'accepts' : 'refuses'} ${title}, the same through the API's schema`, () => {
        expect(vendorNameProblem(value) === null).to.equal(ok);
        expect(schemaProblem(VendorName(), value) === null).to.equal(ok);
      });
    }
  });

  describe('free text (descriptions, memos, addresses)', () => {
    const cases: Array<[string, string, boolean]> = [
      ['plain text with accents and emoji', 'Café ☕️ for the office', true],
      ['newline and tab', 'Line one\n\tLine two', true],
      ['right-to-left text without override marks', 'مخبز البحيرة', true],
      ['a right-to-left override', 'Invoice\u202eFDP.exe', false],
      ['a left-to-right isolate', 'x\u2066y', false],
      ['NUL', 'a\u0000b', false],
      ['ESC', '\u001b[2J', false],
      ['BEL', 'a\u0007', false],
      ['DEL', 'a\u007f', false],
      ['a carriage return', 'a\r\nb', false],
      ['a C1 control', 'a\u0085b', false],
    ];
    for (const [title, value, ok] of cases) {
      it(`${ok ? 'accepts' : 'refuses'} ${title}, the same through the API's schema`, () => {
        expect(textProblem(value) === null).to.equal(ok);
        expect(schemaProblem(Text(2000), value) === null).to.equal(ok);
      });
    }
  });
});
