/**
 * The categoriser's counts. Everything here is plain arithmetic over the booked examples in
 * the order they were booked (oldest first), so the same history always gives the same numbers.
 */

/**
 * Each later booking multiplies the weight of the earlier ones by this: a vendor the business
 * moved to another account follows the move after a few bookings, and one vendor's long history
 * counts as at most 1 / (1 - 0.98) = 50 effective examples.
 */
export const RECENCY_DECAY = 0.98;

export interface AccountEvidence {
  /** Bookings to the account, as counted for the rationale. */
  count: number;
  /** The same with recency decay, as used for confidence. */
  weight: number;
  /** Sum of weight x log(1 + amount in cents), for the amount tie-breaker. */
  logAmountWeight: number;
}

/** The bookings that share one key (a vendor, a merchant name, a prefix of one). */
export class Tally {
  total = 0;
  weight = 0;
  readonly accounts = new Map<string, AccountEvidence>();
  lastAccountId: string | null = null;
  /** How many of the latest bookings in a row went to lastAccountId. */
  lastRun = 0;
  /** Bookings added so far: what a value worked out from the tally is kept against. */
  changes = 0;

  constructor(
    /** How the rationale names the key: a vendor's canonical name, or a merchant key's words. */
    public label: string,
    /** Whether the label is a vendor's name (else words from a bank description). */
    public labelIsName: boolean,
  ) {}

  /** One booking; `weight` more than 1 for a booking that corrected a proposal (CORRECTION_WEIGHT). */
  add(accountId: string, logAmount: number, weight = 1): void {
    this.changes += 1;
    this.total += 1;
    this.weight = this.weight * RECENCY_DECAY + weight;
    for (const evidence of this.accounts.values()) {
      evidence.weight *= RECENCY_DECAY;
      evidence.logAmountWeight *= RECENCY_DECAY;
    }
    let evidence = this.accounts.get(accountId);
    if (!evidence) {
      evidence = { count: 0, weight: 0, logAmountWeight: 0 };
      this.accounts.set(accountId, evidence);
    }
    evidence.count += 1;
    evidence.weight += weight;
    evidence.logAmountWeight += weight * logAmount;
    if (this.lastAccountId === accountId) this.lastRun += 1;
    else {
      this.lastAccountId = accountId;
      this.lastRun = 1;
    }
  }
}

/**
 * Keys one typing slip apart ("starbuks", "starbucks"): a deletion index finds the candidates,
 * and the optimal-string-alignment distance confirms them. Short keys are left out, where one
 * letter makes another name ("bp", "bo").
 */
export class NearKeys {
  static readonly MIN_CHARS = 5;
  private readonly byVariant = new Map<string, string[]>();
  /** Keys already added: a payee's every booking adds its key again. */
  private readonly added = new Set<string>();

  add(key: string): void {
    if (this.added.has(key)) return;
    this.added.add(key);
    if ([...key].length < NearKeys.MIN_CHARS) return;
    for (const variant of variants(key)) {
      const keys = this.byVariant.get(variant);
      if (!keys) this.byVariant.set(variant, [key]);
      else if (!keys.includes(key)) keys.push(key);
    }
  }

  /** Known keys exactly one edit from `key` (not `key` itself), sorted. */
  near(key: string): string[] {
    if ([...key].length < NearKeys.MIN_CHARS) return [];
    const found = new Set<string>();
    for (const variant of variants(key)) {
      for (const candidate of this.byVariant.get(variant) ?? []) {
        if (candidate !== key && editDistance(candidate, key) === 1) found.add(candidate);
      }
    }
    return [...found].sort();
  }
}

function variants(key: string): Set<string> {
  const chars = [...key];
  const out = new Set<string>([key]);
  for (let i = 0; i < chars.length; i += 1) out.add([...chars.slice(0, i), ...chars.slice(i + 1)].join(''));
  return out;
}

/** Optimal string alignment distance (insert, delete, substitute, swap two neighbours). */
export function editDistance(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  const rows: number[][] = [];
  for (let i = 0; i <= x.length; i += 1) {
    const row: number[] = [i];
    for (let j = 1; j <= y.length; j += 1) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const above = rows[i - 1] as number[];
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) best = Math.min(best, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      row.push(best);
    }
    rows.push(row);
  }
  return (rows[x.length] as number[])[y.length] as number;
}

/** What one word says, counted per payee (source), not per payment. */
export interface WordEvidence {
  /** Payees whose bookings used the word. */
  sources: number;
  /** Per account, the share of those payees' bookings with the word that went to it, summed over payees. */
  byAccount: Map<string, number>;
}

/**
 * Word statistics by payee: a word seen in 200 payments to one vendor is one payee's habit,
 * not 200 independent votes, so a word counts as evidence for a new payee only as far as
 * several payees agree on it.
 */
export class WordStats {
  /** word -> payee key -> account -> bookings. */
  private readonly counts = new Map<string, Map<string, Map<string, number>>>();
  private readonly cache = new Map<string, WordEvidence>();
  /** word -> payee key -> the word's evidence without that payee's bookings, as worked out last. */
  private readonly withoutSource = new Map<string, Map<string, WordEvidence>>();

  add(words: readonly string[], source: string, accountId: string): void {
    for (const word of words) {
      let bySource = this.counts.get(word);
      if (!bySource) {
        bySource = new Map();
        this.counts.set(word, bySource);
      }
      let byAccount = bySource.get(source);
      if (!byAccount) {
        byAccount = new Map();
        bySource.set(source, byAccount);
      }
      byAccount.set(accountId, (byAccount.get(accountId) ?? 0) + 1);
      this.cache.delete(word);
      this.withoutSource.delete(word);
    }
  }

  /** The word's evidence, leaving out one payee's own bookings (the payee being categorised). */
  evidence(word: string, excludeSource: string | null): WordEvidence | undefined {
    const bySource = this.counts.get(word);
    if (!bySource) return undefined;
    let all = this.cache.get(word);
    if (!all) {
      all = { sources: 0, byAccount: new Map() };
      for (const byAccount of bySource.values()) addShares(all, byAccount, 1);
      this.cache.set(word, all);
    }
    const own = excludeSource === null ? undefined : bySource.get(excludeSource);
    if (!own) return all;
    let without = this.withoutSource.get(word);
    if (!without) this.withoutSource.set(word, (without = new Map()));
    let rest = without.get(excludeSource!);
    if (!rest) {
      rest = { sources: all.sources, byAccount: new Map(all.byAccount) };
      addShares(rest, own, -1);
      without.set(excludeSource!, rest);
    }
    return rest;
  }
}

function addShares(into: WordEvidence, byAccount: Map<string, number>, sign: 1 | -1): void {
  let bookings = 0;
  for (const count of byAccount.values()) bookings += count;
  into.sources += sign;
  for (const [accountId, count] of byAccount) {
    const share = (into.byAccount.get(accountId) ?? 0) + (sign * count) / bookings;
    if (Math.abs(share) < 1e-9) into.byAccount.delete(accountId);
    else into.byAccount.set(accountId, share);
  }
}
