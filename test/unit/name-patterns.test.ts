import { expect } from 'chai';
import fc from 'fast-check';
import { schemaProblem } from '../../src/http/validate.js';
import { NAME_CHARACTER_RANGES, NAME_PATTERN, nameProblem, VENDOR_NAME_PATTERN, vendorNameProblem } from '../../src/names.js';
import { Name, VendorName } from '../../src/api/schemas/common.js';
import { TEXT_PATTERN } from '../../src/text.js';
import { TRICKY_TEXTS } from '../support/regex-engines.js';

/**
 * The name and vendor-name rules are written as explicit code point ranges (src/names.ts), so that
 * the OpenAPI document can publish them in a form every common regex engine reads. These tests
 * hold the ranges to the engine's own Unicode classes, and the patterns to the rule as it was
 * first written with `\p{…}` classes and lookarounds (kept below as the reference): the server
 * accepts exactly what it accepted before.
 */

/** The rule of src/names.ts as first written (2026-11-27), for ECMA-262 with `u` only. */
const REFERENCE = (() => {
  const forbidden = '\\p{Cc}\\p{Cs}\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
  const invisible = '\\p{Default_Ignorable_Code_Point}';
  const name = `^[^${forbidden}]*[^\\s\\u2800${invisible}${forbidden}][^${forbidden}]*$`;
  const emojiPart =
    '(?<=\\p{Extended_Pictographic}[\\ufe0f\\u{1f3fb}-\\u{1f3ff}]?)\\u200d(?=\\p{Extended_Pictographic})' +
    '|(?<=\\p{Extended_Pictographic})[\\ufe0e\\ufe0f]' +
    '|(?<=[0-9#*])\\ufe0f(?=\\u20e3)';
  const vendor = `^(?!.*(?!${emojiPart})[${invisible}])${name.slice(1)}`;
  return { name: new RegExp(name, 'u'), vendor: new RegExp(vendor, 'u') };
})();

const NAME = new RegExp(NAME_PATTERN, 'u');
const VENDOR_NAME = new RegExp(VENDOR_NAME_PATTERN, 'u');

/** Every code point of the ranges. */
function codePointsOf(ranges: readonly (readonly [number, number?])[]): Set<number> {
  const out = new Set<number>();
  for (const [first, last = first] of ranges) for (let codePoint = first; codePoint <= last; codePoint += 1) out.add(codePoint);
  return out;
}

/** Every code point the engine puts in `re` (a one-character pattern). */
function codePointsMatching(re: RegExp): Set<number> {
  const out = new Set<number>();
  for (let codePoint = 0; codePoint <= 0x10ffff; codePoint += 1) if (re.test(String.fromCodePoint(codePoint))) out.add(codePoint);
  return out;
}

/** The code points at and around the ends of every range: where an off-by-one would show. */
const EDGES = [
  ...new Set(
    Object.values(NAME_CHARACTER_RANGES)
      .flat()
      .flatMap(([first, last = first]) => [first - 1, first, first + 1, last - 1, last, last + 1])
      .filter((codePoint) => codePoint >= 0 && codePoint <= 0x10ffff),
  ),
].map((codePoint) => String.fromCodePoint(codePoint));

describe('name patterns (src/names.ts): explicit ranges, the same rule', () => {
  describe("the ranges are the engine's Unicode classes (Node 24, Unicode 17)", function () {
    this.timeout(60_000);
    const classes: Array<[keyof typeof NAME_CHARACTER_RANGES, RegExp]> = [
      ['CONTROLS', /^\p{Cc}$/u],
      ['SURROGATES', /^\p{Cs}$/u],
      ['SEPARATORS', /^[\p{Zl}\p{Zp}]$/u],
      ['BLANKS', /^[\s\u2800]$/u],
      ['IGNORABLES', /^\p{Default_Ignorable_Code_Point}$/u],
      ['PICTOGRAPHS', /^\p{Extended_Pictographic}$/u],
      ['SKIN_TONES', /^\p{Emoji_Modifier}$/u],
      ['KEYCAP_BASES', /^[0-9#*]$/u],
    ];
    for (const [name, re] of classes) {
      it(`${name} is ${re.source}`, () => {
        expect([...codePointsOf(NAME_CHARACTER_RANGES[name])]).to.deep.equal([...codePointsMatching(re)]);
      });
    }
  });

  describe('the patterns decide as the rule first written with \\p{…} and lookarounds', () => {
    const agree = (text: string) => {
      expect(NAME.test(text), `name ${JSON.stringify(text)}`).to.equal(REFERENCE.name.test(text));
      expect(VENDOR_NAME.test(text), `vendor name ${JSON.stringify(text)}`).to.equal(REFERENCE.vendor.test(text));
    };

    it('on the tricky names', () => {
      for (const text of TRICKY_TEXTS) agree(text);
    });

    it('on each code point at the edge of a range, alone and beside a letter, a space and an emoji', () => {
      for (const char of EDGES) {
        for (const text of [char, `a${char}`, `${char}a`, ` ${char} `, `☕${char}`, `☕${char}☕`, `👩${char}\u200d💻`, `1${char}\u20e3`, `${char}\ufe0f`, `${char}\u200d☕`]) agree(text);
      }
    });

    it('on every string of up to four pieces of emoji, blanks, invisible and forbidden characters', () => {
      const pieces = ['a', ' ', '\u00a0', '\u200d', '\ufe0f', '\ufe0e', '\u20e3', '1', '#', '👩', '☕', '\u{1f3fb}', '\u200b', '\ufeff', '\u2800', '\u0000', '\n', '\ud800', '©', '\u{e0061}'];
      const walk = (text: string, depth: number): void => {
        agree(text);
        if (depth > 0) for (const piece of pieces) walk(text + piece, depth - 1);
      };
      walk('', 4);
    });

    it('on generated text', () => {
      const unit = fc.oneof(fc.constantFrom(...TRICKY_TEXTS.filter((text) => [...text].length === 1)), fc.constantFrom('\u200d', '\ufe0f', '👩', '☕', '1', ' '), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }));
      fc.assert(
        fc.property(fc.array(unit, { maxLength: 12 }), (units) => {
          const text = units.join('');
          return NAME.test(text) === REFERENCE.name.test(text) && VENDOR_NAME.test(text) === REFERENCE.vendor.test(text);
        }),
        { numRuns: 20_000 },
      );
    });
  });

  describe('the patterns are written for every common engine', () => {
    for (const [name, pattern] of [
      ['NAME_PATTERN', NAME_PATTERN],
      ['VENDOR_NAME_PATTERN', VENDOR_NAME_PATTERN],
      ['TEXT_PATTERN', TEXT_PATTERN],
    ] as const) {
      it(`${name} has no \\p{…} class, \\s, lookaround or \\u{…} escape`, () => {
        expect(pattern).to.not.match(/\\[pP]\{|\\s|\(\?<?[=!]|\\u\{/);
        // A lead-surrogate escape followed by a trail-surrogate escape is one character in ECMA-262 and two in Python.
        expect(pattern).to.not.match(/\\ud[89ab][0-9a-f]{2}\\ud[c-f]/i);
      });
    }
  });

  describe('a refusal costs one pass over the text, however long (no quadratic backtracking)', function () {
    this.timeout(20_000);
    const long = 'a'.repeat(100_000);
    const cases: Array<[string, string]> = [
      ['letters then a NUL', `${long}\u0000`],
      ['letters then a zero-width space', `${long}\u200b`],
      ['emoji joined and then a NUL', `${'👩\u200d'.repeat(30_000)}👩\u0000`],
      ['spaces then a NUL', `${' '.repeat(100_000)}\u0000`],
    ];
    for (const [title, text] of cases) {
      it(`refuses ${title} (100,000 characters) in well under a second, in the books and through the API's schema`, () => {
        const started = performance.now();
        expect(nameProblem(text)).to.not.equal(null);
        expect(vendorNameProblem(text)).to.not.equal(null);
        expect(schemaProblem(Name(200), text)).to.not.equal(null);
        expect(schemaProblem(VendorName(), text)).to.not.equal(null);
        expect(performance.now() - started).to.be.below(1_000);
      });
    }
  });
});
