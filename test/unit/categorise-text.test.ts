import { expect } from 'chai';
import { merchantKeyWords } from '../../src/books/categorise/text.js';

/**
 * How a bank line becomes a merchant's name (src/books/categorise/text.ts): the noise banks
 * and card processors put around it is dropped, the name is kept.
 */
describe('the merchant in a bank line', () => {
  const cases: Array<[string, string[]]> = [
    ['PURCHASE AUTHORIZED ON 04/12 STAPLES', ['staples']],
    ['Purchase authorised on 4/12 City of Austin Water #1569 BOSTON MA', ['city', 'austin', 'water']],
    ['CHECKCARD 0412 OFFICE DEPOT #1234 DENVER CO', ['office', 'depot']],
    ['POS DEBIT  COSTCO  CARD 7240', ['costco']],
    ['SQ *BLUE BOTTLE COFFEE OAKLAND CA', ['blue', 'bottle', 'coffee']],
    ['BLUE BOTTLE COFFEE SAN FRANCISCO CA', ['blue', 'bottle', 'coffee']],
    ['HERTZ SEATTLE WA', ['hertz']],
    ['MARRIOTT SALT LAKE CITY UT', ['marriott']],
    ['TST* JOES DINER TX', ['joes', 'diner']],
    ['SUBWAY TX', ['subway']],
    ['BOSTON MARKET', ['boston', 'market']],
    ['BOSTON MA', ['boston']],
    ['SHELL OIL 57442 AUSTIN TX', ['shell', 'oil']],
  ];
  for (const [line, words] of cases) {
    it(`reads ${JSON.stringify(line)} as ${words.join(' ')}`, () => {
      expect(merchantKeyWords(line)).to.deep.equal(words);
    });
  }

  it('keeps a merchant named for a city when no state code follows, and skips "on" only after "authorized"', () => {
    expect(merchantKeyWords('DENVER MATTRESS CO')).to.deep.equal(['denver', 'mattress']);
    expect(merchantKeyWords('ON THE BORDER 0042')).to.deep.equal(['border']);
  });
});
