import { foldName, UNSAFE_TO_SHOW } from '../../names.js';

/**
 * How the categoriser reads a vendor name or a bank description. Bank text carries store
 * numbers, card-processor prefixes, cities and states around the merchant's name
 * ("SQ *BLUE BOTTLE COFFEE 0412 OAKLAND CA"); the merchant key keeps the name, the word list
 * keeps every meaningful word.
 */

/** Words a card processor or bank puts before the merchant's name. */
const LEADING_NOISE = new Set([
  'sq', 'tst', 'sp', 'pp', 'paypal', 'pos', 'debit', 'dbt', 'purchase', 'checkcard', 'chkcard', 'card', 'visa',
  'ach', 'recurring', 'pmt', 'pymt', 'payment', 'preauthorized', 'autopay', 'withdrawal',
]);

/** Words that say nothing about what was bought. */
const STOP_WORDS = new Set([
  ...LEADING_NOISE,
  'inc', 'llc', 'ltd', 'llp', 'co', 'corp', 'corporation', 'company', 'the', 'and', 'of', 'for', 'to', 'at', 'in', 'on',
  'com', 'www', 'net', 'org', 'http', 'https', 'store', 'str', 'us', 'usa', 'intl', 'ref', 'id', 'no', 'nr', 'txn',
]);

/** US state and territory codes: they end bank descriptions ("... AUSTIN TX"), never name a merchant. */
const STATE_CODES = new Set(
  'al ak az ar ca co ct de dc fl ga hi id il in ia ks ky la me md ma mi mn ms mo mt ne nv nh nj nm ny nc nd oh ok or pa pr ri sc sd tn tx ut vt va wa wv wi wy'.split(' '),
);

/** Longest text read from one field; bank descriptions are short, anything longer is cut. */
const MAX_TEXT_CHARS = 300;
/** A merchant key keeps at most this many words. */
const MAX_KEY_WORDS = 4;
/** The word list keeps at most this many words. */
const MAX_WORDS = 16;

const BOUNDARY = '\u0000';

/**
 * The text as words and boundaries: folded (case, accents), apostrophes and ampersands dropped
 * (McDonald's, AT&T), and each chunk holding a digit (store and card numbers) or a star (the
 * processor's separator) turned into a boundary.
 */
function segments(text: string): string[] {
  const folded = foldName(text.slice(0, MAX_TEXT_CHARS))
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/['’&]/g, '');
  const out: string[] = [];
  for (const chunk of folded.replace(/[*#]/g, ' * ').split(/\s+/)) {
    if (chunk === '') continue;
    if (chunk === '*' || /\p{N}/u.test(chunk)) {
      if (out.length > 0 && out[out.length - 1] !== BOUNDARY) out.push(BOUNDARY);
      continue;
    }
    for (const word of chunk.split(/[^\p{L}]+/u)) if (word !== '') out.push(word);
  }
  return out;
}

/**
 * The merchant's name as a list of words: processor prefixes skipped, then the words up to the
 * first store number or star, without filler words or a trailing state code. "SHELL OIL 12931
 * DALLAS TX" and "Shell Oil, Inc." both give [shell, oil].
 */
export function merchantKeyWords(text: string | null): string[] {
  if (text === null) return [];
  const parts = segments(text);
  let start = 0;
  while (start < parts.length && (parts[start] === BOUNDARY || LEADING_NOISE.has(parts[start] as string))) start += 1;
  let end = parts.indexOf(BOUNDARY, start);
  if (end < 0) end = parts.length;
  let words = parts.slice(start, end).filter((word) => word.length > 1 && !STOP_WORDS.has(word));
  if (words.length === 0) words = parts.filter((word) => word !== BOUNDARY && word.length > 1 && !STOP_WORDS.has(word));
  if (words.length > 1 && STATE_CODES.has(words[words.length - 1] as string)) words = words.slice(0, -1);
  return words.slice(0, MAX_KEY_WORDS);
}

/** Meaningful words for word statistics: three letters or more, no filler, each once, in order. */
export function meaningfulWords(...texts: Array<string | null>): string[] {
  const seen = new Set<string>();
  for (const text of texts) {
    if (text === null) continue;
    for (const word of segments(text)) {
      if (seen.size >= MAX_WORDS) break;
      if (word !== BOUNDARY && word.length >= 3 && !STOP_WORDS.has(word)) seen.add(word);
    }
  }
  return [...seen];
}

/** Every word, short ones included, for matching built-in phrases ("bp", "att"). */
export function allWords(...texts: Array<string | null>): string[] {
  const words: string[] = [];
  for (const text of texts) if (text !== null) for (const word of segments(text)) if (word !== BOUNDARY) words.push(word);
  return words;
}

/** Text fit to quote in a rationale: no control or direction characters, one line, at most `maxChars`. */
export function quotable(text: string, maxChars = 80): string {
  const clean = text.replace(UNSAFE_TO_SHOW, ' ').replace(/\s+/g, ' ').trim();
  const chars = [...clean];
  return chars.length <= maxChars ? clean : `${chars.slice(0, maxChars - 1).join('')}…`;
}
