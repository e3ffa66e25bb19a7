import { isIsoDate } from '../../dates.js';
import { AMOUNT_CEILING_CENTS } from '../../money.js';
import { UNSAFE_TO_SHOW, vendorNameProblem } from '../../names.js';
import { textProblem } from '../../text.js';
import { CSV_PROBLEMS, type CsvRecord, parseCsv } from './csv.js';

/**
 * A bank statement file read and checked: the CSV's header, then each data row's date,
 * description, amount and optional vendor, as StatementRows. A file is taken whole or
 * refused with every bad row named, so the person fixing it sees all at once.
 */

/** Largest statement file read; about a million rows, far beyond any monthly statement. */
export const MAX_STATEMENT_BYTES = 64 * 1024 * 1024;
/** Most data rows in one import (one database transaction). */
export const MAX_STATEMENT_ROWS = 500_000;
/** The transactions table's limit, in characters (code points). */
export const MAX_DESCRIPTION_CHARS = 2000;
/** The header names, in this order; `vendor` is optional. */
export const STATEMENT_COLUMNS = ['date', 'description', 'amount', 'vendor'] as const;
const REQUIRED_COLUMNS = 3;
/** How much of a bad value a problem quotes. */
const SHOWN_CHARS = 40;

/** One data row of a statement, validated. `amountCents` is signed: negative is money out. */
export interface StatementRow {
  /** Position among the data rows, from 1 (the header is not counted). */
  row: number;
  date: string;
  description: string;
  amountCents: bigint;
  vendorName: string | null;
}

/** Why a statement is refused: a problem with one data row (`row`), or with the whole file (`row` null). */
export interface StatementProblem {
  row: number | null;
  message: string;
}

/** A statement that cannot be imported; nothing was written. `problems` lists every bad row, in order. */
export class StatementRefused extends Error {
  override name = 'StatementRefused';
  constructor(readonly problems: StatementProblem[]) {
    super(problems.map(describeProblem).join('; '));
    if (problems.length === 0) throw new Error('StatementRefused: needs at least one problem');
  }
}

/** `row 7: amount "12,5" is not a number`, or the file's problem as it is. */
export function describeProblem(problem: StatementProblem): string {
  return problem.row === null ? problem.message : `row ${problem.row}: ${problem.message}`;
}

const refuseFile = (message: string) => new StatementRefused([{ row: null, message }]);

/**
 * Reads and checks a whole statement file (its bytes): every data row valid, or
 * StatementRefused naming every bad row (or the one problem of the file: empty, no header,
 * no data rows, too big, not UTF-8 at all).
 */
export function parseStatement(bytes: Uint8Array): StatementRow[] {
  if (bytes.byteLength === 0) throw refuseFile('the file is empty');
  if (bytes.byteLength > MAX_STATEMENT_BYTES) throw refuseFile(`the file is over ${MAX_STATEMENT_BYTES / 1024 / 1024} MiB; split the statement`);
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    throw refuseFile('the file is UTF-16; save it as UTF-8');
  }
  const records = parseCsv(bytes);
  // Blank lines at the end are an editor's habit, not rows.
  while (records.length > 0 && records[records.length - 1]!.blank) records.pop();
  const header = records[0];
  if (!header) throw refuseFile('the file is empty');
  const columns = checkHeader(header);
  const data = records.slice(1);
  if (data.length === 0) throw refuseFile('the file has a header row but no data rows');
  if (data.length > MAX_STATEMENT_ROWS) throw refuseFile(`the file has ${data.length} data rows; at most ${MAX_STATEMENT_ROWS} are imported at once: split the statement`);

  const rows: StatementRow[] = [];
  const problems: StatementProblem[] = [];
  data.forEach((record, index) => {
    const checked = checkRow(record, index + 1, columns);
    if (typeof checked === 'string') problems.push({ row: index + 1, message: checked });
    else rows.push(checked);
  });
  if (problems.length > 0) throw new StatementRefused(problems);
  return rows;
}

/** The number of columns the header declares (3, or 4 with vendor); refuses any other header. */
function checkHeader(header: CsvRecord): number {
  const names = header.fields.map((field) => field.toLowerCase());
  const matches =
    header.problems.length === 0 &&
    (names.length === REQUIRED_COLUMNS || names.length === STATEMENT_COLUMNS.length) &&
    names.every((name, column) => name === STATEMENT_COLUMNS[column]);
  if (matches) return names.length;
  if (header.problems.includes(CSV_PROBLEMS.invalidUtf8)) throw refuseFile('the header row is not valid UTF-8: save the file as UTF-8');
  const expected = 'the first row must be the header date,description,amount or date,description,amount,vendor';
  if (header.fields[0] !== undefined && isIsoDate(header.fields[0].trim())) throw refuseFile(`${expected}; it is missing (the file starts with a data row)`);
  throw refuseFile(`${expected} (found ${show(header.fields.join(','))})`);
}

/** The row, or what is wrong with it (every problem of the row, on one line). */
function checkRow(record: CsvRecord, row: number, columns: number): StatementRow | string {
  if (record.problems.length > 0) return record.problems.join('; ');
  if (record.blank) return 'is a blank line';
  if (record.fields.length !== columns) {
    return `has ${record.fields.length} ${record.fields.length === 1 ? 'column' : 'columns'}; the header has ${columns}`;
  }
  const [dateField = '', descriptionField = '', amountField = '', vendorField = ''] = record.fields;
  const problems: string[] = [];

  const date = dateField.trim();
  if (date === '') problems.push('date is empty');
  else if (!isIsoDate(date)) problems.push(`date ${show(dateField)} is not a date written YYYY-MM-DD`);

  // Line breaks inside a quoted description are kept, written as LF whatever the file used, so
  // the same statement saved either way is the same rows.
  const description = descriptionField.replace(/\r\n?/g, '\n').trim();
  const descriptionProblem = textProblem(description);
  if (description === '') problems.push('description is empty');
  else if (!withinDescriptionLimit(description)) problems.push(`description is longer than ${MAX_DESCRIPTION_CHARS} characters`);
  else if (descriptionProblem) problems.push(`description ${show(description)} ${descriptionProblem}`);

  const amount = parseStatementAmount(amountField);
  if (typeof amount === 'string') problems.push(amount);

  const vendorName = vendorField.trim();
  if (looksSplitAtThousands(amountField, vendorName)) {
    problems.push(`amount ${show(amountField)} and vendor ${show(vendorName)} look like one amount split at a thousands separator; write amounts without separators (-1200.00)`);
  } else if (vendorName !== '') {
    const problem = vendorNameProblem(vendorName);
    if (problem) problems.push(`vendor ${show(vendorName)} ${problem}`);
  }

  if (problems.length > 0 || typeof amount === 'string') return problems.join('; ');
  return { row, date, description, amountCents: amount, vendorName: vendorName === '' ? null : vendorName };
}

const AMOUNT = /^(-?)([0-9]{1,30})(?:\.([0-9]+))?$/;
const GROUPED_AMOUNT = /^-?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]{1,2})?$/;
const WHOLE_AMOUNT = /^-?[0-9]{1,3}$/;
const THOUSANDS_GROUP = /^[0-9]{3}(?:\.[0-9]{1,2})?$/;

/**
 * `-1,200.00` left unquoted reaches us as amount `-1` and vendor `200.00`: a whole amount of
 * at most three digits followed by a "vendor" that is a group of three digits (with cents).
 * Read as it stands it would book a dollar and name a vendor "200.00", so the row is refused.
 */
function looksSplitAtThousands(amountField: string, vendorName: string): boolean {
  return WHOLE_AMOUNT.test(amountField.trim()) && THOUSANDS_GROUP.test(vendorName);
}

/**
 * A statement amount in signed cents: `-23.45` is money out. Up to 2 decimals, no thousands
 * separators, no currency symbol, never zero. Returns the problem as text when it is not one.
 */
export function parseStatementAmount(field: string): bigint | string {
  const text = field.trim();
  if (text === '') return 'amount is empty';
  const match = AMOUNT.exec(text);
  if (!match && GROUPED_AMOUNT.test(text)) return `amount ${show(field)} has thousands separators; write it without them (${text.replace(/,/g, '')})`;
  if (!match) return `amount ${show(field)} is not a number`;
  const [, sign, whole = '', fraction = ''] = match;
  if (fraction.length > 2) return `amount ${show(field)} has more than 2 decimals`;
  const magnitude = BigInt(whole + fraction.padEnd(2, '0'));
  if (magnitude === 0n) return `amount ${show(field)} is zero`;
  if (magnitude >= AMOUNT_CEILING_CENTS) return `amount ${show(field)} is too large`;
  return sign === '-' ? -magnitude : magnitude;
}

/** At most MAX_DESCRIPTION_CHARS code points: what the transactions table takes as a description or rationale. */
export function withinDescriptionLimit(text: string): boolean {
  // No more characters than UTF-16 units: only a long text needs counting.
  if (text.length <= MAX_DESCRIPTION_CHARS) return true;
  let count = 0;
  for (const _ of text) count += 1;
  return count <= MAX_DESCRIPTION_CHARS;
}

/** What parseStatement guarantees of every row it returns; importBankStatement checks it again. */
export function isCheckedStatementRow(row: StatementRow): boolean {
  return (
    isIsoDate(row.date) &&
    typeof row.amountCents === 'bigint' &&
    row.amountCents !== 0n &&
    (row.amountCents < 0n ? -row.amountCents : row.amountCents) < AMOUNT_CEILING_CENTS &&
    row.description.length > 0 &&
    withinDescriptionLimit(row.description) &&
    textProblem(row.description) === null &&
    (row.vendorName === null || vendorNameProblem(row.vendorName) === null)
  );
}

/** A value quoted for a message: shortened, and nothing in it that acts on a terminal. */
function show(value: string): string {
  const chars = [...value];
  const shown = chars.length > SHOWN_CHARS ? `${chars.slice(0, SHOWN_CHARS).join('')}…` : value;
  return `"${shown.replace(UNSAFE_TO_SHOW, (char) => `\\u${char.codePointAt(0)!.toString(16).padStart(4, '0')}`)}"`;
}
