import type { Db } from '../../db/connection.js';
import { type Basis, getBusiness } from '../businesses.js';
import { type AccountType, type ChartNode, chartTree } from '../chart.js';

/**
 * A business's journal as plain-text accounting (the journal format hledger and ledger-cli
 * both read), so an independent engine can recompute every balance. One transaction per
 * journal entry, in date order then the order entries were written, holding the entry's lines
 * of one view (basis `both` plus the view's own); an entry with no line in the view is left
 * out. Amounts are USD with two decimals, debits positive and credits negative.
 *
 * The text is handed to `write` in chunks as the lines are read, so a book of millions of
 * lines never sits in memory. Pure of the CLI: the caller decides where the chunks go.
 */

/** Text handed to `write` at a time (UTF-16 code units; a flush happens once a chunk passes it). */
export const CHUNK_CHARS = 64 * 1024;

/** How often (in lines written) the caller hears of progress. */
export const PROGRESS_EVERY_LINES = 100_000;

/** ledger-cli reads dates from this day on (its calendar starts in 1400); hledger reads any. */
export const LEDGER_CLI_FIRST_DATE = '1400-01-01';

/** hledger's account type letters, declared on each account (subaccounts would inherit them). */
const TYPE_LETTER: Record<AccountType, string> = { asset: 'A', liability: 'L', equity: 'E', revenue: 'R', expense: 'X' };

/**
 * First characters that the tools read as a mark when a posting or an account name starts
 * with them: `*` `!` (cleared/pending), `(` `[` (virtual postings), `<` (ledger's deferred
 * postings), `;` (a comment); `{` `#` `%` `|` start comments or lot prices in some positions,
 * so they are covered too. A component starting with one gets `_` in front.
 */
const LEADING_ACCOUNT_MARK = /^[([<{*!;#%|]/;

/** A description starting with `*` or `!` reads as a status, with `(` as a transaction code. */
const LEADING_DESCRIPTION_MARK = /^[(*!]/;

/** The bidirectional embedding, override and isolate marks (src/names.ts keeps them out of names too). */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/gu;
/** A lone UTF-16 surrogate cannot be written as UTF-8. */
const LONE_SURROGATE = /\p{Cs}/gu;
/**
 * Control characters and every Unicode space. hledger reads any Unicode space (no-break,
 * em, ideographic...) as a space, so a name holding one would read differently in the two
 * tools, and two of them in a row would end the account name: all become one ASCII space.
 */
const SPACES = /[\p{Cc}\s]+/gu;

/**
 * Text on one line, NFC, with control characters, bidi marks and odd spaces gone and every
 * run of white space one ASCII space, trimmed: two spaces in a row end an account name in
 * both tools, and a tab or line break ends a posting.
 */
export function plainText(text: string): string {
  return text.normalize('NFC').replace(LONE_SURROGATE, '\ufffd').replace(BIDI_CONTROLS, '').replace(SPACES, ' ').trim();
}

/**
 * One account name as a component of a ledger account path: plain text, `:` (the path
 * separator in both tools) written `-`, `_` in front of a leading mark, and `_` for a name
 * with nothing left.
 */
export function safeAccountComponent(name: string): string {
  const text = plainText(name).replaceAll(':', '-');
  if (text === '') return '_';
  return LEADING_ACCOUNT_MARK.test(text) ? `_${text}` : text;
}

/**
 * A transaction description: plain text, `;` (hledger starts a comment there) written `,`,
 * and `_` in front of a leading status mark or code parenthesis.
 */
export function safeDescription(text: string): string {
  const plain = plainText(text).replaceAll(';', ',');
  return LEADING_DESCRIPTION_MARK.test(plain) ? `_${plain}` : plain;
}

/**
 * Each account's full ledger path, by account id: the safe names from the top of the chart
 * down, joined by `:`. Siblings whose safe names are the same (the same name twice, or names
 * that differ only in what was made safe) each get their code appended, `Meals (6150)`; if
 * that still collides, the account id. No two accounts ever share a path: it is asserted.
 */
export function ledgerAccountPaths(tree: readonly ChartNode[]): Map<string, string> {
  const siblings = new Map<string | null, ChartNode[]>();
  for (const node of tree) siblings.set(node.parentId, [...(siblings.get(node.parentId) ?? []), node]);
  const component = new Map<string, string>();
  for (const group of siblings.values()) {
    let names = group.map((node) => safeAccountComponent(node.name));
    for (const suffix of [(node: ChartNode) => plainText(node.code).replaceAll(':', '-'), (node: ChartNode) => node.id]) {
      const counts = countOf(names);
      names = names.map((name, index) => (counts.get(name)! > 1 ? `${safeAccountComponent(group[index]!.name)} (${suffix(group[index]!)})` : name));
    }
    if (countOf(names).size !== names.length) {
      throw new Error(`ledger export: sibling accounts ${group.map((node) => node.id).join(', ')} still share a ledger name`);
    }
    group.forEach((node, index) => component.set(node.id, names[index]!));
  }
  const paths = new Map<string, string>();
  // chartTree lists every parent before its children.
  for (const node of tree) {
    const parentPath = node.parentId === null ? null : paths.get(node.parentId);
    if (parentPath === undefined) throw new Error(`ledger export: account ${node.id} comes before its parent ${node.parentId}`);
    paths.set(node.id, parentPath === null ? component.get(node.id)! : `${parentPath}:${component.get(node.id)!}`);
  }
  if (new Set(paths.values()).size !== paths.size) throw new Error('ledger export: two accounts share a ledger path');
  return paths;
}

function countOf(names: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}

/** Signed cents as a ledger amount: `USD 1234.56`, `USD -0.05`; two decimals, no separators. */
export function ledgerAmount(cents: bigint): string {
  const negative = cents < 0n;
  const digits = (negative ? -cents : cents).toString().padStart(3, '0');
  return `USD ${negative ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

export interface LedgerExportOptions {
  /** The view to export; the business's own basis when left out. */
  basis?: Basis;
  /** Called every PROGRESS_EVERY_LINES lines with the count written so far. */
  onProgress?: (lines: number) => void;
}

export interface LedgerExportSummary {
  businessId: string;
  businessName: string;
  basis: Basis;
  /** Transactions written (entries with at least one line in the view). */
  entries: number;
  /** Postings written. */
  lines: number;
  /** Accounts declared (the whole chart). */
  accounts: number;
  /** The first and last transaction dates, or null when nothing was written. */
  firstDate: string | null;
  lastDate: string | null;
}

/** entry id, date, memo, source type, account id, direction, amount (raw rows: arrays are the cheapest to read). */
type LineRow = [string, string, string | null, string, string, string, bigint];

/*
 * Entries in date order, then as written: created_at, and the rowid for entries made in the
 * same millisecond (rowids only grow; entries are never deleted). The entries' index on
 * (business_id, entry_date) gives the date order; only each day's rows are sorted further.
 */
const LINES_SQL = `
  SELECT e.id, e.entry_date, e.memo, e.source_type, l.ledger_account_id, l.direction, l.amount_cents
  FROM journal_entries e JOIN journal_lines l ON l.entry_id = e.id
  WHERE e.business_id = ? AND l.basis IN ('both', ?)
  ORDER BY e.entry_date, e.created_at, e.rowid, l.line_no`;

/**
 * Writes the business's journal in one view to `write`, in chunks of about CHUNK_CHARS, and
 * returns what was written. Everything is read in one read transaction, so the chart and the
 * lines agree even while the server posts. Each entry is checked to balance before it is
 * written; a failure is a bug in the books and stops the export.
 */
export function writeLedgerJournal(db: Db, businessId: string, write: (chunk: string) => void, options: LedgerExportOptions = {}): LedgerExportSummary {
  return db.transaction(() => {
    const business = getBusiness(db, businessId);
    const basis = options.basis ?? business.basis;
    const tree = chartTree(db, businessId);
    const paths = ledgerAccountPaths(tree);

    let buffer = '';
    const emit = (text: string): void => {
      buffer += text;
      if (buffer.length >= CHUNK_CHARS) {
        write(buffer);
        buffer = '';
      }
    };

    emit(`; Daybook journal of ${plainText(business.name)} (business ${business.id}), ${basis} basis.\n`);
    emit('; Amounts in US dollars: debits positive, credits negative.\n\n');
    emit('commodity USD\n    format USD 1000.00\n\n');
    // Declared in chart order, with hledger's account type; ledger-cli reads the type line as a note.
    for (const node of tree) emit(`account ${paths.get(node.id)!}\n    ; type: ${TYPE_LETTER[node.type]}\n`);

    let entries = 0;
    let lines = 0;
    let firstDate: string | null = null;
    let lastDate: string | null = null;

    let entryId: string | null = null;
    let entryText = '';
    let entrySumCents = 0n;
    const finishEntry = (): void => {
      if (entryId === null) return;
      if (entrySumCents !== 0n) throw new Error(`ledger export: entry ${entryId} does not balance in the ${basis} view (${entrySumCents} cents)`);
      emit(entryText);
      entries += 1;
    };

    const statement = db.prepare(LINES_SQL).raw(true).safeIntegers(true);
    for (const row of statement.iterate(businessId, basis) as IterableIterator<LineRow>) {
      const [id, date, memo, sourceType, accountId, direction, amountCents] = row;
      if (id !== entryId) {
        finishEntry();
        if (lastDate !== null && date < lastDate) throw new Error(`ledger export: entry ${id} dated ${date} came after ${lastDate}`);
        entryId = id;
        entrySumCents = 0n;
        firstDate ??= date;
        lastDate = date;
        const memoText = memo === null ? '' : safeDescription(memo);
        entryText = `\n${date} ${memoText === '' ? safeDescription(sourceType) : memoText}\n`;
      }
      const path = paths.get(accountId);
      if (path === undefined) throw new Error(`ledger export: entry ${id} posts to account ${accountId}, not in the chart of ${businessId}`);
      if (typeof amountCents !== 'bigint' || amountCents <= 0n) throw new Error(`ledger export: entry ${id} has an amount that is not positive cents`);
      if (direction !== 'debit' && direction !== 'credit') throw new Error(`ledger export: entry ${id} has direction ${direction}`);
      const signedCents = direction === 'debit' ? amountCents : -amountCents;
      entrySumCents += signedCents;
      entryText += `    ${path}  ${ledgerAmount(signedCents)}\n`;
      lines += 1;
      if (options.onProgress && lines % PROGRESS_EVERY_LINES === 0) options.onProgress(lines);
    }
    finishEntry();
    if (buffer !== '') write(buffer);

    return { businessId, businessName: business.name, basis, entries, lines, accounts: tree.length, firstDate, lastDate };
  })();
}
