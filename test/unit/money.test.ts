import { expect } from 'chai';
import fc from 'fast-check';
import {
  AMOUNT_CEILING_CENTS,
  CURRENCIES,
  type Currency,
  FX_RATE_SCALE,
  MAX_CENTS_DIGITS,
  MoneyError,
  QUANTITY_SCALE,
  centsToString,
  convertToUsdCents,
  divideRoundHalfAwayFromZero,
  formatMoney,
  isCurrency,
  isUnderCeiling,
  lineAmountCents,
  money,
  multiplyCents,
  parseCents,
  parseDecimal,
  parseSignedCents,
  sumCents,
  taxCents,
  usd,
} from '../../src/money.js';

describe('money', () => {
  describe('parseCents (the API money form: digits only)', () => {
    it('parses digit strings to bigint cents', () => {
      expect(parseCents('0')).to.equal(0n);
      expect(parseCents('5')).to.equal(5n);
      expect(parseCents('123456')).to.equal(123456n);
      expect(parseCents('999999999999999')).to.equal(999_999_999_999_999n);
    });

    it('accepts exactly 30 digits and refuses 31', () => {
      expect(parseCents('9'.repeat(MAX_CENTS_DIGITS))).to.equal(10n ** 30n - 1n);
      expect(() => parseCents('9'.repeat(MAX_CENTS_DIGITS + 1))).to.throw(MoneyError, /at most 30 digits/);
    });

    for (const bad of ['', '-1', '+1', '1.5', '1.', '.5', ' 1', '1 ', '1e3', '0x10', '1,000', '１２', '1\n', 'abc']) {
      it(`refuses ${JSON.stringify(bad)}`, () => {
        expect(() => parseCents(bad)).to.throw(MoneyError, /digits/);
      });
    }

    it('refuses numbers, bigints and null (a JS number never holds money)', () => {
      for (const bad of [12, 1.5, 12n, null, undefined, {}]) {
        expect(() => parseCents(bad as unknown as string)).to.throw(MoneyError, /string of digits/);
      }
    });
  });

  describe('parseSignedCents (report figures)', () => {
    it('parses a leading minus and refuses other forms', () => {
      expect(parseSignedCents('-123')).to.equal(-123n);
      expect(parseSignedCents('123')).to.equal(123n);
      for (const bad of ['', '-', '+1', '--1', '1.5', ' -1']) {
        expect(() => parseSignedCents(bad), bad).to.throw(MoneyError);
      }
    });
  });

  describe('centsToString', () => {
    it('writes digits, with a minus only for negative figures', () => {
      expect(centsToString(0n)).to.equal('0');
      expect(centsToString(5n)).to.equal('5');
      expect(centsToString(123456n)).to.equal('123456');
      expect(centsToString(-123n)).to.equal('-123');
      expect(centsToString(10n ** 15n - 1n)).to.equal('999999999999999');
    });

    it('refuses a number', () => {
      expect(() => centsToString(5 as unknown as bigint)).to.throw(TypeError, /bigint/);
    });
  });

  describe('formatMoney', () => {
    const cases: [bigint, Currency, string][] = [
      [0n, 'USD', '$0.00'],
      [5n, 'USD', '$0.05'],
      [50n, 'USD', '$0.50'],
      [100n, 'USD', '$1.00'],
      [99999n, 'USD', '$999.99'],
      [100000n, 'USD', '$1,000.00'],
      [123456n, 'USD', '$1,234.56'],
      [-123456n, 'USD', '-$1,234.56'],
      [-5n, 'USD', '-$0.05'],
      [123456789012n, 'USD', '$1,234,567,890.12'],
      [999_999_999_999_999n, 'USD', '$9,999,999,999,999.99'],
      [123456n, 'CAD', 'CA$1,234.56'],
      [123456n, 'EUR', '€1,234.56'],
      [-5n, 'EUR', '-€0.05'],
      [123456n, 'GBP', '£1,234.56'],
      [0n, 'GBP', '£0.00'],
      [123456n, 'MXN', 'MX$1,234.56'],
      [-100000000n, 'MXN', '-MX$1,000,000.00'],
    ];
    for (const [cents, currency, expected] of cases) {
      it(`formats ${cents} ${currency} as ${expected}`, () => {
        expect(formatMoney(cents, currency)).to.equal(expected);
      });
    }

    it('covers every currency', () => {
      expect(CURRENCIES.map((c) => formatMoney(100n, c))).to.deep.equal(['$1.00', 'CA$1.00', '€1.00', '£1.00', 'MX$1.00']);
    });

    it('refuses a number', () => {
      expect(() => formatMoney(5 as unknown as bigint, 'USD')).to.throw(TypeError);
    });

    it('money() and usd() carry cents, formatted text and currency', () => {
      expect(money(-123456n, 'GBP')).to.deep.equal({ cents: '-123456', formatted: '-£1,234.56', currency: 'GBP' });
      expect(usd(5n)).to.deep.equal({ cents: '5', formatted: '$0.05', currency: 'USD' });
    });
  });

  describe('isCurrency', () => {
    it('knows the five currencies only', () => {
      for (const c of CURRENCIES) expect(isCurrency(c)).to.equal(true);
      for (const c of ['usd', 'JPY', '', null, 1]) expect(isCurrency(c)).to.equal(false);
    });
  });

  describe('parseDecimal', () => {
    it('returns the value scaled to exactly maxScale', () => {
      expect(parseDecimal('3', 6)).to.deep.equal({ units: 3_000_000n, scale: 6 });
      expect(parseDecimal('0.5', 6)).to.deep.equal({ units: 500_000n, scale: 6 });
      expect(parseDecimal('12.000001', 6)).to.deep.equal({ units: 12_000_001n, scale: 6 });
      expect(parseDecimal('1.25', 2)).to.deep.equal({ units: 125n, scale: 2 });
      expect(parseDecimal('7', 0)).to.deep.equal({ units: 7n, scale: 0 });
      expect(parseDecimal('0', 6)).to.deep.equal({ units: 0n, scale: 6 });
    });

    it('refuses more decimal places than the scale allows', () => {
      expect(() => parseDecimal('1.0000001', 6)).to.throw(MoneyError, /at most 6 decimal places/);
      expect(() => parseDecimal('1.5', 0)).to.throw(MoneyError, /at most 0 decimal places/);
    });

    for (const bad of ['', '-1', '+1', '1e3', '1E3', '.', '.5', '5.', ' 1', '1 ', '1,5', '1.2.3', 'NaN', 'Infinity', '0x1']) {
      it(`refuses ${JSON.stringify(bad)}`, () => {
        expect(() => parseDecimal(bad, 6)).to.throw(MoneyError);
      });
    }

    it('refuses a whole part longer than 30 digits', () => {
      expect(parseDecimal('1'.repeat(30), 0).units).to.equal(BigInt('1'.repeat(30)));
      expect(() => parseDecimal('1'.repeat(31), 0)).to.throw(MoneyError);
    });

    it('refuses a number instead of a string', () => {
      expect(() => parseDecimal(1.5 as unknown as string, 6)).to.throw(MoneyError, /decimal string/);
    });

    it('refuses a nonsensical scale as a programming error', () => {
      for (const scale of [-1, 19, 1.5, Number.NaN]) {
        expect(() => parseDecimal('1', scale)).to.throw(Error, /bad scale/);
      }
    });
  });

  describe('divideRoundHalfAwayFromZero', () => {
    it('rounds ties away from zero for both signs', () => {
      expect(divideRoundHalfAwayFromZero(1n, 2n)).to.equal(1n);
      expect(divideRoundHalfAwayFromZero(-1n, 2n)).to.equal(-1n);
      expect(divideRoundHalfAwayFromZero(1n, -2n)).to.equal(-1n);
      expect(divideRoundHalfAwayFromZero(-1n, -2n)).to.equal(1n);
      expect(divideRoundHalfAwayFromZero(5n, 2n)).to.equal(3n);
      expect(divideRoundHalfAwayFromZero(-5n, 2n)).to.equal(-3n);
      expect(divideRoundHalfAwayFromZero(15n, 10n)).to.equal(2n);
      expect(divideRoundHalfAwayFromZero(-15n, 10n)).to.equal(-2n);
      expect(divideRoundHalfAwayFromZero(25n, 10n)).to.equal(3n);
      expect(divideRoundHalfAwayFromZero(-25n, 10n)).to.equal(-3n);
    });

    it('rounds below half toward zero and above half away, even denominators', () => {
      expect(divideRoundHalfAwayFromZero(14n, 10n)).to.equal(1n);
      expect(divideRoundHalfAwayFromZero(-14n, 10n)).to.equal(-1n);
      expect(divideRoundHalfAwayFromZero(16n, 10n)).to.equal(2n);
      expect(divideRoundHalfAwayFromZero(-16n, 10n)).to.equal(-2n);
      expect(divideRoundHalfAwayFromZero(3n, 4n)).to.equal(1n);
      expect(divideRoundHalfAwayFromZero(1n, 4n)).to.equal(0n);
      expect(divideRoundHalfAwayFromZero(-1n, 4n)).to.equal(0n);
    });

    it('never sees a tie with odd denominators', () => {
      expect(divideRoundHalfAwayFromZero(1n, 3n)).to.equal(0n);
      expect(divideRoundHalfAwayFromZero(2n, 3n)).to.equal(1n);
      expect(divideRoundHalfAwayFromZero(-2n, 3n)).to.equal(-1n);
      expect(divideRoundHalfAwayFromZero(7n, 3n)).to.equal(2n);
      expect(divideRoundHalfAwayFromZero(8n, 3n)).to.equal(3n);
      expect(divideRoundHalfAwayFromZero(-8n, 3n)).to.equal(-3n);
      expect(divideRoundHalfAwayFromZero(3n, 7n)).to.equal(0n);
      expect(divideRoundHalfAwayFromZero(4n, 7n)).to.equal(1n);
    });

    it('is exact for whole quotients and zero', () => {
      expect(divideRoundHalfAwayFromZero(0n, 7n)).to.equal(0n);
      expect(divideRoundHalfAwayFromZero(21n, 7n)).to.equal(3n);
      expect(divideRoundHalfAwayFromZero(-21n, 7n)).to.equal(-3n);
      expect(divideRoundHalfAwayFromZero(21n, -7n)).to.equal(-3n);
    });

    it('refuses division by zero', () => {
      expect(() => divideRoundHalfAwayFromZero(1n, 0n)).to.throw(Error, /division by zero/);
    });
  });

  describe('lineAmountCents (round(quantity x unit price))', () => {
    it('rounds half a cent up', () => {
      expect(lineAmountCents('0.5', 1n)).to.equal(1n);
      expect(lineAmountCents('0.5', 3n)).to.equal(2n);
      expect(lineAmountCents('1.5', 1n)).to.equal(2n);
      expect(lineAmountCents('0.499999', 1n)).to.equal(0n);
    });

    it('handles six decimals of quantity', () => {
      expect(lineAmountCents('0.333333', 3n)).to.equal(1n);
      expect(lineAmountCents('0.000001', 1_000_000n)).to.equal(1n);
      expect(lineAmountCents('0.000001', 499_999n)).to.equal(0n);
      expect(lineAmountCents('0.000001', 500_000n)).to.equal(1n);
      expect(lineAmountCents('2.123456', 10_000n)).to.equal(21235n);
    });

    it('multiplies whole quantities exactly', () => {
      expect(lineAmountCents('3', 1999n)).to.equal(5997n);
      expect(lineAmountCents('0', 1999n)).to.equal(0n);
      expect(lineAmountCents('10', 0n)).to.equal(0n);
      expect(lineAmountCents('1000000', 99_999_999n)).to.equal(99_999_999_000_000n);
    });

    it('refuses a seventh decimal and malformed quantities', () => {
      expect(() => lineAmountCents('0.0000001', 100n)).to.throw(MoneyError, /at most 6 decimal places/);
      for (const bad of ['-1', '1e2', '.5', '5.', '']) expect(() => lineAmountCents(bad, 100n), bad).to.throw(MoneyError);
    });

    it('refuses a number price', () => {
      expect(() => lineAmountCents('1', 100 as unknown as bigint)).to.throw(TypeError);
    });
  });

  describe('taxCents (round(subtotal x rate / 100))', () => {
    it('8.25% of 1999 cents is 165 (164.9175 rounds up)', () => {
      expect(taxCents(1999n, '8.25')).to.equal(165n);
    });

    it('rounds ties away from zero and below half down', () => {
      expect(taxCents(10n, '5')).to.equal(1n); // 0.5
      expect(taxCents(10n, '4.9')).to.equal(0n); // 0.49
      expect(taxCents(1n, '50')).to.equal(1n); // 0.5
      expect(taxCents(1n, '49.999999')).to.equal(0n);
    });

    it('0% is nothing and 100% is the subtotal', () => {
      expect(taxCents(123456n, '0')).to.equal(0n);
      expect(taxCents(123456n, '0.000000')).to.equal(0n);
      expect(taxCents(123456n, '100')).to.equal(123456n);
      expect(taxCents(0n, '8.25')).to.equal(0n);
    });

    it('takes up to six decimals of rate and refuses a seventh', () => {
      expect(taxCents(100_000_000n, '0.000001')).to.equal(1n);
      expect(() => taxCents(100n, '1.0000001')).to.throw(MoneyError);
      expect(() => taxCents(100n, '-1')).to.throw(MoneyError);
    });
  });

  describe('convertToUsdCents (round(amount x usd-per-unit))', () => {
    it('converts at the stated rate with half-away rounding', () => {
      expect(convertToUsdCents(10000n, '0.7312')).to.equal(7312n);
      expect(convertToUsdCents(1n, '0.5')).to.equal(1n);
      expect(convertToUsdCents(1n, '0.4999999999')).to.equal(0n);
      expect(convertToUsdCents(333n, '1.2345')).to.equal(411n); // 411.0885
      expect(convertToUsdCents(100n, '1')).to.equal(100n);
      expect(convertToUsdCents(12345n, '0.0585')).to.equal(722n); // 722.1825
    });

    it('takes ten decimals of rate and refuses an eleventh', () => {
      expect(FX_RATE_SCALE).to.equal(10);
      expect(convertToUsdCents(10_000_000_000n, '0.0000000001')).to.equal(1n);
      expect(() => convertToUsdCents(100n, '0.00000000001')).to.throw(MoneyError, /at most 10 decimal places/);
    });

    it('rounds negative amounts away from zero too', () => {
      expect(multiplyCents(-1n, parseDecimal('0.5', 1))).to.equal(-1n);
      expect(multiplyCents(-333n, parseDecimal('1.2345', FX_RATE_SCALE))).to.equal(-411n);
    });
  });

  describe('the ten-trillion-dollar ceiling', () => {
    it('is 10^15 cents', () => {
      expect(AMOUNT_CEILING_CENTS).to.equal(1_000_000_000_000_000n);
    });

    it('isUnderCeiling is true at 10^15 - 1 and false from 10^15', () => {
      expect(isUnderCeiling(10n ** 15n - 1n)).to.equal(true);
      expect(isUnderCeiling(10n ** 15n)).to.equal(false);
      expect(isUnderCeiling(10n ** 15n + 1n)).to.equal(false);
      expect(isUnderCeiling(0n)).to.equal(true);
    });
  });

  describe('sumCents', () => {
    it('adds bigints', () => {
      expect(sumCents([])).to.equal(0n);
      expect(sumCents([1n, 2n, 3n])).to.equal(6n);
      expect(sumCents([10n ** 15n - 1n, 1n])).to.equal(10n ** 15n);
      expect(sumCents(new Set([5n, -7n]))).to.equal(-2n);
    });

    it('refuses anything that is not a bigint', () => {
      expect(() => sumCents([1n, 2 as unknown as bigint])).to.throw(TypeError, /bigint cents, got number/);
      expect(() => sumCents(['3' as unknown as bigint])).to.throw(TypeError, /got string/);
      expect(() => sumCents([null as unknown as bigint])).to.throw(TypeError);
    });
  });

  describe('properties', () => {
    const bigNumerator = fc.bigInt({ min: -(10n ** 24n), max: 10n ** 24n });
    const nonZeroDenominator = fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }).filter((d) => d !== 0n);

    it('the rounding error is at most half a unit, and ties go away from zero', () => {
      fc.assert(
        fc.property(bigNumerator, nonZeroDenominator, (n, d) => {
          const q = divideRoundHalfAwayFromZero(n, d);
          const abs = (x: bigint) => (x < 0n ? -x : x);
          // |q - n/d| <= 1/2  <=>  |2(q*d - n)| <= |d|
          const twiceError = 2n * (q * d - n);
          expect(abs(twiceError) <= abs(d)).to.equal(true);
          // An exact tie rounds to the larger magnitude.
          if (abs(twiceError) === abs(d)) expect(abs(q * d) > abs(n)).to.equal(true);
          // Symmetric: negating the numerator negates the result.
          expect(divideRoundHalfAwayFromZero(-n, d)).to.equal(-q);
        }),
        { numRuns: 500 },
      );
    });

    const quantityUnits = fc.bigInt({ min: 0n, max: 10n ** 12n });
    const toQuantity = (units: bigint): string => {
      const whole = units / 10n ** BigInt(QUANTITY_SCALE);
      const fraction = (units % 10n ** BigInt(QUANTITY_SCALE)).toString().padStart(QUANTITY_SCALE, '0');
      return `${whole}.${fraction}`;
    };

    it('lineAmountCents is within half a cent of quantity x price', () => {
      fc.assert(
        fc.property(quantityUnits, fc.bigInt({ min: 0n, max: 10n ** 10n }), (units, priceCents) => {
          const amount = lineAmountCents(toQuantity(units), priceCents);
          const exactTimesScale = units * priceCents;
          const scale = 10n ** BigInt(QUANTITY_SCALE);
          const twiceError = 2n * (amount * scale - exactTimesScale);
          expect(twiceError <= scale && twiceError >= -scale).to.equal(true);
        }),
        { numRuns: 300 },
      );
    });

    it('lineAmountCents is monotonic in quantity', () => {
      fc.assert(
        fc.property(quantityUnits, quantityUnits, fc.bigInt({ min: 0n, max: 10n ** 10n }), (a, b, priceCents) => {
          const [low, high] = a <= b ? [a, b] : [b, a];
          expect(lineAmountCents(toQuantity(low), priceCents) <= lineAmountCents(toQuantity(high), priceCents)).to.equal(true);
        }),
        { numRuns: 300 },
      );
    });

    it('formatMoney keeps every digit: stripping the display text gives the cents back', () => {
      fc.assert(
        fc.property(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), fc.constantFrom(...CURRENCIES), (cents, currency) => {
          const text = formatMoney(cents, currency);
          const negative = text.startsWith('-');
          expect(negative).to.equal(cents < 0n);
          expect(text).to.match(/^-?(\$|CA\$|€|£|MX\$)\d{1,3}(,\d{3})*\.\d{2}$/);
          const magnitude = parseCents(text.replace(/[^0-9]/g, ''));
          expect(negative ? -magnitude : magnitude).to.equal(cents);
          expect(parseSignedCents(centsToString(cents))).to.equal(cents);
        }),
        { numRuns: 300 },
      );
    });

    it('parseCents(centsToString(x)) is x for every non-negative amount', () => {
      fc.assert(
        fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n - 1n }), (cents) => {
          expect(parseCents(centsToString(cents))).to.equal(cents);
        }),
        { numRuns: 300 },
      );
    });
  });
});
