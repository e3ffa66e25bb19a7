/** Calendar dates are `YYYY-MM-DD` strings in UTC; these helpers keep them honest. */

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a real calendar date written YYYY-MM-DD (2026-02-30 is not one). */
export function isIsoDate(value: string): boolean {
  const match = DATE_PATTERN.exec(value);
  if (!match) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}


export function addDays(isoDate: string, days: number): string {
  if (!isIsoDate(isoDate)) throw new Error(`addDays: not a date: ${isoDate}`);
  const date = new Date(`${isoDate}T00:00:00.000Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (positive when `to` is later). */
export function daysBetween(from: string, to: string): number {
  const ms = Date.parse(`${to}T00:00:00.000Z`) - Date.parse(`${from}T00:00:00.000Z`);
  return Math.round(ms / 86_400_000);
}

/** The first and last dates the books can hold (four-digit years). */
export const FIRST_DATE = '0000-01-01';
export const LAST_DATE = '9999-12-31';

function assertDate(isoDate: string, caller: string): void {
  if (!isIsoDate(isoDate)) throw new Error(`${caller}: not a date: ${isoDate}`);
}

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/** Days in a month (1 to 12) of a year, proleptic Gregorian as the dates are. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** The first day of the date's month. */
export function monthStart(isoDate: string): string {
  assertDate(isoDate, 'monthStart');
  return `${isoDate.slice(0, 7)}-01`;
}

/** The last day of the date's month. */
export function monthEnd(isoDate: string): string {
  assertDate(isoDate, 'monthEnd');
  const days = daysInMonth(Number(isoDate.slice(0, 4)), Number(isoDate.slice(5, 7)));
  return `${isoDate.slice(0, 7)}-${String(days).padStart(2, '0')}`;
}

/** The first day of the date's year. */
export function yearStart(isoDate: string): string {
  assertDate(isoDate, 'yearStart');
  return `${isoDate.slice(0, 4)}-01-01`;
}

/** The last day of the date's year. */
export function yearEnd(isoDate: string): string {
  assertDate(isoDate, 'yearEnd');
  return `${isoDate.slice(0, 4)}-12-31`;
}

/**
 * The first and last day of the calendar month before the date's month, or null for a date in
 * January of year 0000 (no earlier month can be written).
 */
export function previousMonth(isoDate: string): { start: string; end: string } | null {
  const start = monthStart(isoDate);
  if (start === FIRST_DATE) return null;
  const end = addDays(start, -1);
  return { start: monthStart(end), end };
}
