import { Buffer, isUtf8 } from 'node:buffer';

/**
 * A CSV reader for RFC 4180 text: fields separated by commas, records by CRLF or LF (a lone CR
 * is read as a line break too); a field in double quotes may hold commas, line breaks and
 * quotes written twice (""). A leading UTF-8 byte order mark is dropped. The reader never
 * refuses a file: it returns every record it can make out, each with the problems found in
 * it, so the caller can name every bad row at once.
 */

/** One record (one line, or several when a quoted field holds line breaks). */
export interface CsvRecord {
  /** Position among the file's records, from 1; a header, when there is one, is record 1. */
  number: number;
  fields: string[];
  /** What is wrong with the record's form (empty when nothing is). */
  problems: string[];
  /** True for an empty line: no characters at all between two line breaks. */
  blank: boolean;
}

export const CSV_PROBLEMS = {
  unterminatedQuote: 'a quoted field is never closed (a " is missing)',
  textAfterQuote: 'text follows the closing " of a quoted field',
  strayQuote: 'a " inside a field that is not quoted (quote the whole field and write the " twice)',
  invalidUtf8: 'is not valid UTF-8',
} as const;

/** Text decoded from bytes: where each invalid byte was replaced by U+FFFD, as offsets into `text`. */
export interface DecodedText {
  text: string;
  invalidAt: number[];
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;

/**
 * UTF-8 bytes to text, the byte order mark dropped. A file that is not valid UTF-8 is still
 * decoded (each bad byte becomes U+FFFD) so the records that hold a bad byte can be named.
 */
export function decodeUtf8(bytes: Uint8Array): DecodedText {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bom = buffer.length >= 3 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0;
  if (isUtf8(buffer)) return { text: buffer.toString('utf8', bom), invalidAt: [] };
  const parts: string[] = [];
  const invalidAt: number[] = [];
  let length = 0;
  let runStart = bom;
  let i = bom;
  const flush = (end: number) => {
    if (end > runStart) {
      const part = buffer.toString('utf8', runStart, end);
      parts.push(part);
      length += part.length;
    }
  };
  while (i < buffer.length) {
    const size = utf8SequenceLength(buffer, i);
    if (size > 0) {
      i += size;
      continue;
    }
    flush(i);
    invalidAt.push(length);
    parts.push('\uFFFD');
    length += 1;
    i += 1;
    runStart = i;
  }
  flush(i);
  return { text: parts.join(''), invalidAt };
}

/** The length of the well-formed UTF-8 sequence starting at `i` (Unicode table 3-7), or 0. */
function utf8SequenceLength(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i]!;
  if (b0 < 0x80) return 1;
  const within = (offset: number, low: number, high: number) => {
    const b = bytes[i + offset];
    return b !== undefined && b >= low && b <= high;
  };
  if (b0 >= 0xc2 && b0 <= 0xdf) return within(1, 0x80, 0xbf) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const low = b0 === 0xe0 ? 0xa0 : 0x80;
    const high = b0 === 0xed ? 0x9f : 0xbf;
    return within(1, low, high) && within(2, 0x80, 0xbf) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const low = b0 === 0xf0 ? 0x90 : 0x80;
    const high = b0 === 0xf4 ? 0x8f : 0xbf;
    return within(1, low, high) && within(2, 0x80, 0xbf) && within(3, 0x80, 0xbf) ? 4 : 0;
  }
  return 0;
}

/**
 * Reads CSV from bytes (UTF-8; a record holding a byte that is not gets the invalidUtf8
 * problem) or from text (a leading U+FEFF is dropped). A final line break ends the last
 * record; it does not start an empty one.
 */
export function parseCsv(input: Uint8Array | string): CsvRecord[] {
  const decoded: DecodedText = typeof input === 'string' ? { text: input.startsWith('\uFEFF') ? input.slice(1) : input, invalidAt: [] } : decodeUtf8(input);
  const { text, invalidAt } = decoded;
  const records: CsvRecord[] = [];
  const n = text.length;
  let nextInvalid = 0;
  let i = 0;
  while (i < n) {
    const start = i;
    const fields: string[] = [];
    const problems: string[] = [];
    for (;;) {
      if (text.charCodeAt(i) === QUOTE) {
        // A quoted field: runs to the next quote that is not doubled.
        let value = '';
        let closed = false;
        i += 1;
        while (i < n) {
          const quote = text.indexOf('"', i);
          if (quote === -1) break;
          if (text.charCodeAt(quote + 1) === QUOTE) {
            value += text.slice(i, quote + 1);
            i = quote + 2;
            continue;
          }
          value += text.slice(i, quote);
          i = quote + 1;
          closed = true;
          break;
        }
        if (!closed) {
          value += text.slice(i);
          i = n;
          problems.push(CSV_PROBLEMS.unterminatedQuote);
        } else if (i < n && !isFieldEnd(text.charCodeAt(i))) {
          // `"abc"def`: kept as text, but the record is malformed.
          const end = fieldEnd(text, i);
          value += text.slice(i, end);
          i = end;
          addOnce(problems, CSV_PROBLEMS.textAfterQuote);
        }
        fields.push(value);
      } else {
        const end = fieldEnd(text, i);
        const value = text.slice(i, end);
        if (value.includes('"')) addOnce(problems, CSV_PROBLEMS.strayQuote);
        fields.push(value);
        i = end;
      }
      if (i < n && text.charCodeAt(i) === COMMA) {
        i += 1;
        continue;
      }
      break;
    }
    const end = i;
    if (text.charCodeAt(i) === CR) i += text.charCodeAt(i + 1) === LF ? 2 : 1;
    else if (text.charCodeAt(i) === LF) i += 1;
    while (nextInvalid < invalidAt.length && invalidAt[nextInvalid]! < end) {
      if (invalidAt[nextInvalid]! >= start) addOnce(problems, CSV_PROBLEMS.invalidUtf8);
      nextInvalid += 1;
    }
    records.push({ number: records.length + 1, fields, problems, blank: end === start });
  }
  return records;
}

function isFieldEnd(code: number): boolean {
  return code === COMMA || code === CR || code === LF;
}

/** Where an unquoted field starting at `from` ends: the next comma, line break, or the end. */
function fieldEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length && !isFieldEnd(text.charCodeAt(i))) i += 1;
  return i;
}

function addOnce(list: string[], item: string): void {
  if (!list.includes(item)) list.push(item);
}
