import { expect } from 'chai';
import { CSV_PROBLEMS, type CsvRecord, decodeUtf8, parseCsv } from '../../src/books/import/csv.js';

/** The fields of each record, for the common case of a well-formed file. */
const fieldsOf = (records: CsvRecord[]) => records.map((record) => record.fields);
const utf8 = (text: string) => new TextEncoder().encode(text);

describe('parseCsv (RFC 4180)', () => {
  it('reads plain records, numbered from 1, with no problems', () => {
    const records = parseCsv('date,description,amount\n2026-03-01,Coffee,-4.50\n');
    expect(fieldsOf(records)).to.deep.equal([
      ['date', 'description', 'amount'],
      ['2026-03-01', 'Coffee', '-4.50'],
    ]);
    expect(records.map((record) => record.number)).to.deep.equal([1, 2]);
    expect(records.every((record) => record.problems.length === 0 && !record.blank)).to.equal(true);
  });

  it('keeps commas inside a quoted field', () => {
    expect(fieldsOf(parseCsv('a,"Smith, Jones & Co",c\n'))).to.deep.equal([['a', 'Smith, Jones & Co', 'c']]);
  });

  it('reads a doubled quote inside a quoted field as one quote', () => {
    expect(fieldsOf(parseCsv('"He said ""hi""","""",x\n'))).to.deep.equal([['He said "hi"', '"', 'x']]);
  });

  it('keeps line breaks inside a quoted field (LF and CRLF), as one record', () => {
    const records = parseCsv('1,"two\nlines",3\r\n4,"crlf\r\ninside",6\r\n');
    expect(fieldsOf(records)).to.deep.equal([
      ['1', 'two\nlines', '3'],
      ['4', 'crlf\r\ninside', '6'],
    ]);
    expect(records.map((record) => record.number)).to.deep.equal([1, 2]);
  });

  it('reads CRLF line ends like LF ones, and a lone CR too', () => {
    expect(fieldsOf(parseCsv('a,b\r\nc,d\r\n'))).to.deep.equal([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    expect(fieldsOf(parseCsv('a,b\rc,d'))).to.deep.equal([
      ['a', 'b'],
      ['c', 'd'],
    ]);
  });

  it('drops a UTF-8 byte order mark, from bytes or text', () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('date,x\n1,2\n')]);
    expect(fieldsOf(parseCsv(bytes))).to.deep.equal([
      ['date', 'x'],
      ['1', '2'],
    ]);
    expect(fieldsOf(parseCsv('\uFEFFdate,x\n'))).to.deep.equal([['date', 'x']]);
  });

  it('reads the same records with a trailing line break or without one', () => {
    expect(fieldsOf(parseCsv('a,b\nc,d'))).to.deep.equal(fieldsOf(parseCsv('a,b\nc,d\n')));
    expect(fieldsOf(parseCsv('a,"b"'))).to.deep.equal([['a', 'b']]);
    expect(parseCsv('')).to.deep.equal([]);
  });

  it('reads empty fields, quoted or not, including a last one after a final comma', () => {
    expect(fieldsOf(parseCsv(',,\n"",x,""\na,\n'))).to.deep.equal([
      ['', '', ''],
      ['', 'x', ''],
      ['a', ''],
    ]);
  });

  it('marks an empty line as blank (one empty field), and a further line break at the end as a blank record', () => {
    const records = parseCsv('a\n\nb\n\n');
    expect(fieldsOf(records)).to.deep.equal([['a'], [''], ['b'], ['']]);
    expect(records.map((record) => record.blank)).to.deep.equal([false, true, false, true]);
    expect(parseCsv('""\n')[0]!.blank, 'an empty quoted field is not a blank line').to.equal(false);
  });

  it('reports an unterminated quote on the record where it opened, which runs to the end of the file', () => {
    const records = parseCsv('h1,h2\nok,1\n"never closed,2\nmore,3\n');
    expect(records).to.have.length(3);
    expect(records[2]).to.deep.include({ number: 3, problems: [CSV_PROBLEMS.unterminatedQuote] });
    expect(records[2]!.fields).to.deep.equal(['never closed,2\nmore,3\n']);
    expect(records[1]!.problems).to.deep.equal([]);
  });

  it('reports a quote inside an unquoted field, and keeps the text as it is', () => {
    const records = parseCsv('a,b\n12" pipe,x\n');
    expect(records[1]).to.deep.include({ number: 2, fields: ['12" pipe', 'x'], problems: [CSV_PROBLEMS.strayQuote] });
    expect(records[0]!.problems).to.deep.equal([]);
  });

  it('reports text after the closing quote of a quoted field', () => {
    const records = parseCsv('"abc"def,x\n');
    expect(records[0]).to.deep.include({ fields: ['abcdef', 'x'], problems: [CSV_PROBLEMS.textAfterQuote] });
  });

  it('names the records that hold bytes that are not UTF-8, and only those', () => {
    const bytes = new Uint8Array([...utf8('a,b\nok,1\n'), ...utf8('bad'), 0xff, ...utf8(',2\n"multi\nline'), 0xc3, ...utf8('",3\nfine,4\n')]);
    const records = parseCsv(bytes);
    expect(records.map((record) => record.problems)).to.deep.equal([[], [], [CSV_PROBLEMS.invalidUtf8], [CSV_PROBLEMS.invalidUtf8], []]);
    expect(records[2]!.fields).to.deep.equal(['bad\uFFFD', '2']);
  });

  it('keeps valid multi-byte characters (accents, emoji) as they are', () => {
    expect(fieldsOf(parseCsv(utf8('Café ☕,🥐\n')))).to.deep.equal([['Café ☕', '🥐']]);
  });
});

describe('decodeUtf8', () => {
  it('decodes valid UTF-8 with no invalid offsets', () => {
    expect(decodeUtf8(utf8('héllo'))).to.deep.equal({ text: 'héllo', invalidAt: [] });
  });

  it('replaces each bad byte (overlong, surrogate, truncated, stray continuation) and records where', () => {
    // C0 80: overlong; ED A0 80: a surrogate; E2 82: truncated; 80: a continuation on its own.
    const bytes = new Uint8Array([0x61, 0xc0, 0x80, 0x62, 0xed, 0xa0, 0x80, 0x63, 0xe2, 0x82, 0x64, 0x80]);
    const decoded = decodeUtf8(bytes);
    expect(decoded.text).to.equal('a\uFFFD\uFFFDb\uFFFD\uFFFD\uFFFDc\uFFFD\uFFFDd\uFFFD');
    expect(decoded.invalidAt).to.deep.equal([1, 2, 4, 5, 6, 8, 9, 11]);
  });
});
