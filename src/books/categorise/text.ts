import { foldName, isAscii, UNSAFE_TO_SHOW } from '../../names.js';

/**
 * How the categoriser reads a vendor name or a bank description. Bank text carries store
 * numbers, card-processor prefixes, cities and states around the merchant's name
 * ("SQ *BLUE BOTTLE COFFEE 0412 OAKLAND CA"); the merchant key keeps the name, the word list
 * keeps every meaningful word.
 */

/** Words a card processor or bank puts before the merchant's name. */
const LEADING_NOISE = new Set([
  'sq', 'tst', 'sp', 'pp', 'paypal', 'pos', 'debit', 'dbt', 'purchase', 'checkcard', 'chkcard', 'card', 'visa',
  'ach', 'recurring', 'pmt', 'pymt', 'payment', 'preauthorized', 'autopay', 'withdrawal', 'authorized', 'authorised',
]);

/** A word skipped only right after another: "PURCHASE AUTHORIZED ON 04/12 ...". */
const NOISE_AFTER: ReadonlyMap<string, string> = new Map([
  ['authorized', 'on'],
  ['authorised', 'on'],
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

/**
 * Cities that end bank descriptions before their state code ("... SEATTLE WA"): the largest
 * US cities and a few more that statements often carry, folded. Dropped only in front of a
 * state code, so a merchant named for a city ("Boston Market") keeps its name.
 */
const CITY_NAMES = new Set([
  'new york', 'los angeles', 'chicago', 'houston', 'phoenix', 'philadelphia', 'san antonio', 'san diego', 'dallas', 'san jose',
  'austin', 'jacksonville', 'fort worth', 'columbus', 'charlotte', 'san francisco', 'indianapolis', 'seattle', 'denver',
  'washington', 'boston', 'el paso', 'nashville', 'detroit', 'oklahoma city', 'portland', 'las vegas', 'memphis',
  'louisville', 'baltimore', 'milwaukee', 'albuquerque', 'tucson', 'fresno', 'mesa', 'sacramento', 'atlanta', 'kansas city',
  'colorado springs', 'omaha', 'raleigh', 'miami', 'long beach', 'virginia beach', 'oakland', 'minneapolis', 'tulsa',
  'tampa', 'arlington', 'new orleans', 'wichita', 'cleveland', 'bakersfield', 'aurora', 'anaheim', 'honolulu', 'santa ana',
  'riverside', 'corpus christi', 'lexington', 'pittsburgh', 'anchorage', 'stockton', 'cincinnati', 'saint paul', 'st paul',
  'st louis', 'saint louis', 'toledo', 'newark', 'greensboro', 'plano', 'henderson', 'lincoln', 'buffalo', 'orlando',
  'irvine', 'madison', 'durham', 'reno', 'boise', 'richmond', 'spokane', 'des moines', 'salt lake city', 'san mateo',
  'palo alto', 'mountain view', 'brooklyn', 'cambridge', 'berkeley', 'pasadena', 'scottsdale', 'tempe', 'provo',
]);
/** The most words a city name above has. */
const MAX_CITY_WORDS = 3;

/** `words` without a trailing "CITY ST" (or a lone state code): at least one word is always kept. */
function withoutPlaceTail(words: string[]): string[] {
  if (words.length < 2 || !STATE_CODES.has(words[words.length - 1] as string)) return words;
  const withoutState = words.slice(0, -1);
  for (let length = Math.min(MAX_CITY_WORDS, withoutState.length - 1); length >= 1; length -= 1) {
    if (CITY_NAMES.has(withoutState.slice(-length).join(' '))) return withoutState.slice(0, -length);
  }
  return withoutState;
}

/** Longest text read from one field; bank descriptions are short, anything longer is cut. */
const MAX_TEXT_CHARS = 300;
/** A merchant key keeps at most this many words. */
const MAX_KEY_WORDS = 4;
/** The word list keeps at most this many words. */
const MAX_WORDS = 16;

const BOUNDARY = '\u0000';

/** Accents dropped (é is e): the combining marks NFKD splits off. ASCII text has none. */
function withoutMarks(text: string): string {
  return isAscii(text) ? text : text.normalize('NFKD').replace(/\p{M}+/gu, '');
}

/**
 * The text as words and boundaries: folded (case, accents), apostrophes and ampersands dropped
 * (McDonald's, AT&T), and each chunk holding a digit (store and card numbers) or a star (the
 * processor's separator) turned into a boundary.
 */
function segments(text: string): readonly string[] {
  const known = recentSegments.get(text);
  if (known !== undefined) return known;
  const found = segmentsOf(text);
  if (recentSegments.size >= RECENT_TEXTS) recentSegments.clear();
  recentSegments.set(text, found);
  return found;
}

/**
 * The segments of the last texts read: one proposal reads the payee's name and the description
 * three or four times over (its merchant key, its words, built-in phrases).
 */
const recentSegments = new Map<string, readonly string[]>();
const RECENT_TEXTS = 16;

function segmentsOf(text: string): string[] {
  const folded = withoutMarks(foldName(text.slice(0, MAX_TEXT_CHARS))).replace(/['’&]/g, '');
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
  while (start < parts.length && (parts[start] === BOUNDARY || LEADING_NOISE.has(parts[start] as string) || (start > 0 && NOISE_AFTER.get(parts[start - 1] as string) === parts[start]))) start += 1;
  let end = parts.indexOf(BOUNDARY, start);
  if (end < 0) end = parts.length;
  let words = parts.slice(start, end).filter((word) => word.length > 1 && !STOP_WORDS.has(word));
  if (words.length === 0) words = parts.filter((word) => word !== BOUNDARY && word.length > 1 && !STOP_WORDS.has(word));
  return withoutPlaceTail(words).slice(0, MAX_KEY_WORDS);
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
