import type { Db } from '../../db/connection.js';
import { all, flag } from '../../db/statements.js';
import { type SystemRole, takesExpenses } from '../chart.js';
import { type AccountEvidence, NearKeys, Tally, WordStats } from './evidence.js';
import { findKnownPhrase, KEYWORD_CONFIDENCE, type KnowledgeKind, type KnownPhrase, MERCHANT_CONFIDENCE } from './knowledge.js';
import { allWords, meaningfulWords, merchantKeyWords, quotable } from './text.js';

/**
 * The expense categoriser: proposes the account an outgoing payment belongs to, how sure it
 * is, and why. It learns from the business's own booked history and knows common merchants and
 * keywords out of the box (knowledge.ts). No network, no clock, no randomness: the same history
 * and input always give the same proposal. Evidence, first found first used:
 *  1. the payee's own bookings: the vendor's exact name, then its folded merchant key (the bank
 *     description's when there is no vendor: "SHELL OIL 57442 AUSTIN TX" is "shell oil"), then
 *     a known name this one begins with or names beginning with this one, then a name one
 *     typing slip away; a less specific match replaces a more specific one when it names the
 *     same account more surely (a bank line with a city, seen twice, and the chain, seen 80 times);
 *  2. description and name words, counted per payee, from other payees' bookings;
 *  3. built-in merchants and keywords, resolved by the standard chart's account names.
 * The amount only breaks near ties between accounts.
 *
 * Confidence is the chance, estimated from the counts, that the proposal is the account the
 * bookkeeper would choose. For the payee's own history it is Laplace's rule of succession over
 * its (recency-weighted) bookings, (agreeing + 1) / (all + 2): 1 of 1 gives 0.66, 8 of 8 gives
 * 0.9, and a vendor split between two accounts never reaches the review threshold. Words or
 * built-in knowledge naming the same account count as up to two more agreeing bookings. Matches
 * on part of a name carry one booking's worth of doubt. A near-miss spelling and word
 * statistics alone stay below 0.9, and so does built-in knowledge in books too young to
 * measure it: such a payee gets a look. With enough history (MIN_CALIBRATION_HISTORY), a score
 * from the payee's own bookings is then replaced by how often proposals in its band of 0.1
 * were right on the business's own bookings (calibrationFrom), and built-in knowledge's by how
 * often the business books what it names to the account it names (knowledgeAccuracyFrom), so
 * that a score says how often such a proposal is right.
 * Confidence is cut, never rounded up, to two decimals.
 */

export interface CategoriseInput {
  description: string | null;
  vendorName: string | null;
  amountCents: bigint;
}

export interface Proposal {
  accountId: string | null;
  confidence: number | null;
  rationale: string;
}

/** A booked payment the categoriser learns from. */
export type BookedExample = CategoriseInput & {
  accountId: string;
  /** Booked to another account than the one proposed (an `edited` review item): it counts as CORRECTION_WEIGHT bookings. */
  corrected?: boolean;
};

/**
 * How many bookings a correction counts as: a bookkeeper who booked a line elsewhere than
 * proposed said more about the payee than one who agreed with a proposal, which may only have
 * been accepted in a batch.
 */
export const CORRECTION_WEIGHT = 2;

export interface Categoriser {
  propose(input: CategoriseInput): Proposal;
  /** Adds one booked example (e.g. an item just accepted, or an expense recorded) without reloading. */
  learn(example: BookedExample): void;
}

/** The most recent booked rows a categoriser reads; older ones add little and cost memory. */
export const MAX_HISTORY_ROWS = 100_000;
/** The highest confidence words from other payees can give: a new payee always gets a look. */
export const WORDS_CONFIDENCE_CAP = 0.85;
/** The highest confidence a near-miss spelling of a known payee can give. */
export const NEAR_NAME_CONFIDENCE_CAP = 0.85;
/** Outside evidence (words, built-in knowledge) agreeing with the payee's history counts as up to this many bookings. */
const AGREEMENT_BOOKINGS = 2;
/** Accounts whose recency weights are closer than this are a near tie, which the amount breaks. */
const NEAR_TIE_WEIGHT = 0.5;
/** A less specific match replaces a more specific one that agrees with it only when surer by this much. */
const UPGRADE_MARGIN = 0.02;
/** Names that share only their first words with this one are a guess only at this agreement or more. */
const MIN_SHARED_NAME_CONFIDENCE = 0.6;
/** A word counts only when at least this many payees used it. */
const MIN_WORD_SOURCES = 2;
/** ... and when its own estimate reaches this. */
const MIN_WORD_CONFIDENCE = 0.6;
const MAX_RATIONALE_CHARS = 2000;


interface ChartAccount {
  id: string;
  code: string;
  name: string;
  /** A postable, non-archived account an expense may be booked to. */
  allowed: boolean;
}

interface AccountRow {
  id: string;
  code: string;
  name: string;
  is_heading: bigint;
  archived: bigint;
  system_role: SystemRole | null;
}

interface HistoryRow {
  account_id: string;
  amount_cents: bigint;
  description: string | null;
  vendor_name: string | null;
  status: 'accepted' | 'edited';
}

/**
 * Loads the business's booked history once (transactions with direction 'out', status
 * 'accepted' or 'edited', a ledger account; with vendor name and description) and its
 * postable accounts.
 */
export function categoriserFor(db: Db, businessId: string): Categoriser {
  const rows = all<AccountRow>(
    db,
    'SELECT id, code, name, is_heading, archived, system_role FROM ledger_accounts WHERE business_id = ? ORDER BY code, id',
    businessId,
  );
  if (rows.length === 0) throw new Error(`categoriserFor: business ${businessId} has no chart of accounts`);
  const chart = rows.map((row) => ({
    id: row.id,
    code: row.code,
    name: row.name,
    allowed: !flag(row.is_heading) && !flag(row.archived) && takesExpenses(row.system_role),
  }));
  const categoriser = new LearnedCategoriser(chart);
  // Newest rows within the limit, then replayed oldest first: recency weights follow booking order.
  const history = all<HistoryRow>(
    db,
    `SELECT t.ledger_account_id AS account_id, t.amount_cents, t.description, v.name AS vendor_name, t.status
     FROM transactions t LEFT JOIN vendors v ON v.id = t.vendor_id
     WHERE t.business_id = ? AND t.direction = 'out' AND t.status IN ('accepted', 'edited') AND t.ledger_account_id IS NOT NULL
     ORDER BY t.txn_date DESC, t.created_at DESC, t.id DESC LIMIT ?`,
    businessId,
    MAX_HISTORY_ROWS,
  );
  const oldestFirst = [...history]
    .reverse()
    .map((row): BookedExample => ({ accountId: row.account_id, amountCents: row.amount_cents, description: row.description, vendorName: row.vendor_name, corrected: row.status === 'edited' }));
  for (const example of oldestFirst) categoriser.learn(example);
  categoriser.calibrate(calibrationFrom(chart, oldestFirst), knowledgeAccuracyFrom(categoriser, oldestFirst));
  return categoriser;
}

/** Calibration needs this many booked payments: with fewer, scores stay as estimated. */
export const MIN_CALIBRATION_HISTORY = 500;
/** ... and at least this many held-out proposals in a score band to move that band. */
export const MIN_CALIBRATION_PROPOSALS = 30;
/** Calibration reads at most this many of the latest booked payments. */
const MAX_CALIBRATION_HISTORY = 10_000;
/** The share of the history, the oldest, learned before any payment is proposed to see how often each score band is right. */
const CALIBRATION_WARM_UP = 0.2;

/**
 * How often proposals from the payee's own history are right, by score band (0 to 0.1, ...,
 * 0.9 to 1), measured on the business's own books: a categoriser learns the oldest fifth of
 * the (latest) history, then proposes each later payment as it was booked, from every payment
 * before it, before learning it; the bands' accuracies, made non-decreasing and pooled until
 * each pool holds enough proposals (monotoneBands), replace their scores. Word statistics and
 * near-miss spellings are not calibrated: they keep their caps below the threshold.
 */
function calibrationFrom(chart: readonly ChartAccount[], oldestFirst: readonly BookedExample[]): Calibration {
  if (oldestFirst.length < MIN_CALIBRATION_HISTORY) return NO_CALIBRATION;
  // The latest payments only: calibrating costs a second categoriser and a proposal each.
  const recent = oldestFirst.slice(-MAX_CALIBRATION_HISTORY);
  const warmUp = Math.floor(recent.length * CALIBRATION_WARM_UP);
  const trial = new LearnedCategoriser(chart);
  const bands = Array.from({ length: CALIBRATION_BANDS }, () => ({ right: 0, all: 0 }));
  recent.forEach((example, index) => {
    // Each payment after the first fifth is proposed as it was booked, from all the payments before it.
    const scored = index < warmUp ? undefined : trial.scoredFromPayee(example);
    if (scored) {
      const band = bands[bandOf(scored.confidence)]!;
      band.all += 1;
      if (scored.accountId === example.accountId) band.right += 1;
    }
    trial.learn(example);
  });
  return monotoneBands(bands);
}

/**
 * How often the business booked a payee that built-in knowledge names to the account it names,
 * by kind (merchant, keyword), each payee (its vendor, else its description's merchant) counted
 * once, by its first booked payment among the latest: that first booking is when knowledge is
 * all there is to go on. Once MIN_CALIBRATION_PROPOSALS payees name a phrase of a kind, that
 * share is the confidence of the kind's proposals, above 0.9 when the books bear it out;
 * before, the fixed MERCHANT_CONFIDENCE and KEYWORD_CONFIDENCE. Fresh books so still give
 * every new merchant a look.
 */
function knowledgeAccuracyFrom(categoriser: LearnedCategoriser, oldestFirst: readonly BookedExample[]): KnowledgeAccuracy {
  if (oldestFirst.length < MIN_CALIBRATION_HISTORY) return NO_KNOWLEDGE_ACCURACY;
  const counts = { merchant: { right: 0, all: 0 }, keyword: { right: 0, all: 0 } };
  // Knowledge speaks only for a payee's first payment, so each payee counts once, as it was first booked.
  const payees = new Set<string>();
  for (const example of oldestFirst.slice(-MAX_CALIBRATION_HISTORY)) {
    const agreement = categoriser.knowledgeAgreement(example);
    if (!agreement || payees.has(agreement.payee)) continue;
    payees.add(agreement.payee);
    counts[agreement.kind].all += 1;
    if (agreement.agrees) counts[agreement.kind].right += 1;
  }
  const measured = ({ right, all }: { right: number; all: number }) => (all >= MIN_CALIBRATION_PROPOSALS ? right / all : null);
  return { merchant: measured(counts.merchant), keyword: measured(counts.keyword) };
}

export type KnowledgeAccuracy = Readonly<Record<KnowledgeKind, number | null>>;
const NO_KNOWLEDGE_ACCURACY: KnowledgeAccuracy = { merchant: null, keyword: null };

/** Score bands of width 0.1, from 0 to 1 (the last holds 1 too). */
const CALIBRATION_BANDS = 10;
function bandOf(confidence: number): number {
  return Math.min(CALIBRATION_BANDS - 1, Math.floor(confidence * 10 + 1e-9));
}

/** Per band, the accuracy measured, or null (too few proposals: the band keeps its scores). */
export type Calibration = readonly (number | null)[];
const NO_CALIBRATION: Calibration = Array.from({ length: CALIBRATION_BANDS }, () => null);

/** The score where band `index` begins (bands of 0.1 from 0, as bandOf makes them). */
function bandFloor(index: number): number {
  return index / CALIBRATION_BANDS;
}

/** The default of DAYBOOK_REVIEW_CONFIDENCE (config/default.json): the caps below keep guesses under it. */
const DEFAULT_REVIEW_THRESHOLD = 0.9;

/**
 * Each band's accuracy, made non-decreasing from band to band by pooling adjacent bands that
 * break the order (weighted by their proposals); then a pool of fewer than
 * MIN_CALIBRATION_PROPOSALS joins the neighbouring pool nearer to it in accuracy (pooling two
 * neighbours keeps the order), until every pool is large enough. A band with no proposals, or
 * every band when all of them together are too few, is null and keeps its scores; so is a band
 * with too few proposals of its own that pooling would lift from under the review threshold
 * to it or above (its few proposals cannot say it belongs there).
 */
export function monotoneBands(bands: ReadonlyArray<{ right: number; all: number }>): Calibration {
  type Pool = { bands: number[]; right: number; all: number };
  const rate = (pool: Pool) => pool.right / pool.all;
  const pools: Pool[] = [];
  bands.forEach((band, index) => {
    if (band.all === 0) return;
    pools.push({ bands: [index], right: band.right, all: band.all });
    while (pools.length > 1 && rate(pools[pools.length - 2]!) > rate(pools[pools.length - 1]!)) {
      const [before, last] = pools.splice(-2, 2) as [Pool, Pool];
      pools.push(joined(before, last));
    }
  });
  for (let small = smallest(pools); small >= 0 && pools.length > 1; small = smallest(pools)) {
    const pool = pools[small]!;
    const below = pools[small - 1];
    const above = pools[small + 1];
    const withBelow = below !== undefined && (above === undefined || rate(pool) - rate(below) <= rate(above) - rate(pool));
    if (withBelow) pools.splice(small - 1, 2, joined(below, pool));
    else pools.splice(small, 2, joined(pool, above!));
  }
  const out: Array<number | null> = bands.map(() => null);
  for (const pool of pools) {
    if (pool.all < MIN_CALIBRATION_PROPOSALS) continue;
    for (const index of pool.bands) {
      // A band too small to speak for itself is never pooled up to the review threshold.
      const lifted = bands[index]!.all < MIN_CALIBRATION_PROPOSALS && rate(pool) >= DEFAULT_REVIEW_THRESHOLD && bandFloor(index) < DEFAULT_REVIEW_THRESHOLD;
      out[index] = lifted ? null : rate(pool);
    }
  }
  return out;

  function joined(a: Pool, b: Pool): Pool {
    return { bands: [...a.bands, ...b.bands], right: a.right + b.right, all: a.all + b.all };
  }
  /** The first pool with too few proposals, or -1. */
  function smallest(all: readonly Pool[]): number {
    return all.findIndex((pool) => pool.all < MIN_CALIBRATION_PROPOSALS);
  }
}

/** Where payee evidence came from, most specific first. */
const LEVEL_ORDER = ['vendor', 'name', 'begins', 'extends', 'shares', 'near'] as const;
type PayeeLevel = (typeof LEVEL_ORDER)[number];

interface PayeeEvidence {
  level: PayeeLevel;
  tally: Tally;
  key: string;
  /** The input text (vendor name or description) the match was made on. */
  text: string;
  choice: Choice;
  /** No more specific match agrees with it (for 'shares': then only a guess). */
  alone: boolean;
}

interface Choice {
  accountId: string;
  evidence: AccountEvidence;
  /** The account of a near tie this one won on amount, if any. */
  amountBeat: { accountId: string; evidence: AccountEvidence } | null;
}

interface WordsFinding {
  accountId: string;
  confidence: number;
  word: string;
  agreeing: number;
  sources: number;
}

interface Candidate {
  accountId: string;
  confidence: number;
  rationale: string;
}

class LearnedCategoriser implements Categoriser {
  private readonly accounts: Map<string, ChartAccount>;
  private readonly allowedByName = new Map<string, ChartAccount>();
  /** By the vendor's canonical name, exactly. */
  private readonly byVendor = new Map<string, Tally>();
  /** By merchant key: the folded vendor name, or a bank description's merchant words when there is no vendor. */
  private readonly byKey = new Map<string, Tally>();
  /** By the leading words of merchant keys ("shell" and "shell oil" for "shell oil"): all names beginning so. */
  private readonly byLeadingWords = new Map<string, Tally>();
  private readonly nearKeys = new NearKeys();
  private readonly words = new WordStats();
  private calibration: Calibration = NO_CALIBRATION;
  /** rankedAccounts, per tally, as of its last change. */
  private readonly ranked = new WeakMap<Tally, { changes: number; allowed: Array<[string, AccountEvidence]> }>();
  /** How often this business books what built-in knowledge names where it says, by kind; null where not measured. */
  private knowledgeAccuracy: KnowledgeAccuracy = NO_KNOWLEDGE_ACCURACY;

  constructor(chart: readonly ChartAccount[]) {
    this.accounts = new Map(chart.map((account) => [account.id, account]));
    for (const account of chart) if (account.allowed && !this.allowedByName.has(account.name)) this.allowedByName.set(account.name, account);
  }

  learn(example: BookedExample): void {
    if (!this.accounts.has(example.accountId)) throw new Error(`categoriser.learn: ${example.accountId} is not an account of this business`);
    assertAmount(example.amountCents);
    const vendorName = present(example.vendorName);
    const description = present(example.description);
    const logAmount = Math.log1p(Number(example.amountCents));
    const weight = example.corrected ? CORRECTION_WEIGHT : 1;
    if (vendorName !== null) tallyFor(this.byVendor, vendorName, vendorName, true).add(example.accountId, logAmount, weight);
    const keyWords = merchantKeyWords(vendorName ?? description);
    const key = keyWords.join(' ');
    if (key !== '') {
      const tally = tallyFor(this.byKey, key, vendorName ?? key, vendorName !== null);
      // A vendor's name reads better in a rationale than words cut from a bank line.
      if (vendorName !== null && !tally.labelIsName) {
        tally.label = vendorName;
        tally.labelIsName = true;
      }
      tally.add(example.accountId, logAmount, weight);
      this.nearKeys.add(key);
      for (let length = keyWords.length; length >= 1; length -= 1) {
        const prefix = keyWords.slice(0, length).join(' ');
        tallyFor(this.byLeadingWords, prefix, prefix, false).add(example.accountId, logAmount, weight);
      }
      this.words.add(meaningfulWords(vendorName, description), key, example.accountId);
    }
  }

  /** Replaces the scores of proposals from the payee's own history by the accuracy measured for their band (calibrationFrom). */
  calibrate(calibration: Calibration, knowledgeAccuracy: KnowledgeAccuracy = NO_KNOWLEDGE_ACCURACY): void {
    this.calibration = calibration;
    this.knowledgeAccuracy = knowledgeAccuracy;
  }

  /** Whether built-in knowledge names a phrase of this booked payment, and whether the payment was booked where it says. */
  knowledgeAgreement(example: BookedExample): { kind: KnowledgeKind; agrees: boolean; payee: string } | undefined {
    const vendorName = present(example.vendorName);
    const description = present(example.description);
    const known = findKnownPhrase(allWords(vendorName, description), (name) => this.allowedByName.has(name));
    if (!known) return undefined;
    const payee = vendorName ?? merchantKeyWords(description).join(' ');
    return { kind: known.kind, agrees: this.allowedByName.get(known.accountName)?.id === example.accountId, payee };
  }

  /** What the payee's own history alone proposes, uncalibrated: for measuring calibration. */
  scoredFromPayee(input: CategoriseInput): { accountId: string; confidence: number } | undefined {
    const { payee, words, known } = this.evidence(input);
    if (!payee || payee.alone) return undefined;
    const candidate = this.fromPayee(payee, words, known);
    return { accountId: candidate.accountId, confidence: candidate.confidence };
  }

  /** A score from the payee's own history, as calibrated: its band's measured accuracy, when known. */
  private calibrated(confidence: number): number {
    return this.calibration[bandOf(confidence)] ?? confidence;
  }

  propose(input: CategoriseInput): Proposal {
    assertAmount(input.amountCents);
    const { vendorName, description, payee, words, known } = this.evidence(input);
    const inputText = vendorName ?? description ?? '';
    const fromPayee = payee && this.fromPayee(payee, words, known);
    // A guess from a near-miss spelling or a shared first word keeps its cap: it is not calibrated.
    const candidate = fromPayee
      ? { ...fromPayee, confidence: payee.alone ? fromPayee.confidence : this.calibrated(fromPayee.confidence) }
      : best(words && this.fromWords(words, inputText), known && this.fromKnowledge(known, inputText));
    const proposal: Proposal = candidate
      ? { accountId: candidate.accountId, confidence: floorToHundredths(candidate.confidence), rationale: candidate.rationale }
      : { accountId: null, confidence: null, rationale: unplaced(vendorName, description) };
    assertBookableProposal(proposal, (accountId) => this.accounts.get(accountId)?.allowed === true);
    return proposal;
  }

  /** Everything a proposal weighs: the payee's own history, words from other payees, built-in knowledge. */
  private evidence(input: CategoriseInput) {
    const vendorName = present(input.vendorName);
    const description = present(input.description);
    const key = merchantKeyWords(vendorName ?? description).join(' ');
    const known = findKnownPhrase(allWords(vendorName, description), (name) => this.allowedByName.has(name));
    const payee = this.payeeEvidence(vendorName, description, Math.log1p(Number(input.amountCents)));
    // Words are evidence from other payees: the payee's own bookings are left out.
    const words = this.wordsFinding(meaningfulWords(vendorName, description), payee?.key ?? (key === '' ? null : key));
    return { vendorName, description, payee, words, known };
  }

  /**
   * The payee's own history: the most specific match that names an allowed account (the
   * vendor's exact name, its folded name, a known name this one begins with, known names that
   * begin with this one, a name one typing slip away). A less specific match that names the
   * same account with more certainty is used instead (a bank line's merchant words with its city,
   * "blue bottle coffee austin", seen twice, and "blue bottle coffee", seen 80 times); so is the
   * bank description's merchant when the vendor named is new or thinly booked.
   */
  private payeeEvidence(vendorName: string | null, description: string | null, logAmount: number): PayeeEvidence | undefined {
    const keyWords = merchantKeyWords(vendorName ?? description);
    // The bank description's merchant, when a vendor is named too.
    const descriptionKeyWords = vendorName === null ? [] : merchantKeyWords(description);
    const found: PayeeEvidence[] = [];
    const consider = (level: PayeeLevel, tally: Tally | undefined, key: string, text: string): void => {
      const choice = tally && this.choose(tally, logAmount);
      if (tally && choice) found.push({ level, tally, key, text, choice, alone: false });
    };
    const key = keyWords.join(' ');
    if (vendorName !== null) consider('vendor', this.byVendor.get(vendorName), key, vendorName);
    for (const [words, text] of [[keyWords, vendorName ?? description ?? ''], [descriptionKeyWords, description ?? '']] as const) {
      const wordsKey = words.join(' ');
      if (wordsKey === '') continue;
      // Shorter and shorter: the first words.length - 1 words, down to the first alone.
      const prefixes = leadingPhrases(words);
      consider('name', this.byKey.get(wordsKey), wordsKey, text);
      for (const prefix of prefixes) consider('begins', this.byKey.get(prefix), prefix, text);
      consider('extends', this.byLeadingWords.get(wordsKey), wordsKey, text);
      for (const prefix of prefixes) consider('shares', this.byLeadingWords.get(prefix), prefix, text);
    }
    // A name that only shares its first words with known ones ("marriott houston", "marriott
    // boston") is a guess on its own, like a near-miss spelling: capped below the threshold.
    const primary = found.find((evidence) => evidence.level !== 'shares');
    if (!primary) {
      const near = this.nearKeys.near(key).find((nearKey) => this.byKey.has(nearKey));
      if (near !== undefined) consider('near', this.byKey.get(near), near, vendorName ?? description ?? '');
      // Names sharing only their first words must mostly agree to be a guess worth showing.
      const guess = found.find((evidence) => evidence.level === 'near') ?? found.find((evidence) => payeeConfidence(evidence, 0, false) >= MIN_SHARED_NAME_CONFIDENCE);
      return guess && { ...guess, alone: true };
    }
    // From the most specific: by kind of match, then more words matched.
    const ordered = found
      .map((evidence, index) => ({ evidence, index }))
      .sort((a, b) => LEVEL_ORDER.indexOf(a.evidence.level) - LEVEL_ORDER.indexOf(b.evidence.level) || b.evidence.key.split(' ').length - a.evidence.key.split(' ').length || a.index - b.index)
      .map(({ evidence }) => evidence);
    let chosen = primary;
    for (const other of ordered) {
      const surer = payeeConfidence(other, 0, false) >= payeeConfidence(chosen, 0, false) + UPGRADE_MARGIN;
      if (other.choice.accountId === primary.choice.accountId && surer) chosen = other;
    }
    return chosen;
  }

  /**
   * The allowed account with the most (recency-weighted) bookings; among accounts within a near
   * tie of it, the one whose earlier amounts are closest to this one; then by code.
   */
  private choose(tally: Tally, logAmount: number): Choice | undefined {
    if (tally.accounts.size === 1) {
      // One account: no tie to break (most payees).
      const [accountId, evidence] = tally.accounts.entries().next().value!;
      return this.accounts.get(accountId)?.allowed === true ? { accountId, evidence, amountBeat: null } : undefined;
    }
    const allowed = this.rankedAccounts(tally);
    const top = allowed[0];
    if (!top) return undefined;
    const distance = (evidence: AccountEvidence) => Math.abs(evidence.logAmountWeight / evidence.weight - logAmount);
    let winner = top;
    for (const contender of allowed.slice(1)) {
      if (top[1].weight - contender[1].weight >= NEAR_TIE_WEIGHT) break;
      const closer = distance(contender[1]) - distance(winner[1]);
      if (closer < -1e-9 || (Math.abs(closer) <= 1e-9 && this.byCode(contender[0], winner[0]) < 0)) winner = contender;
    }
    const runnerUp = winner === top ? allowed[1] : top;
    const amountBeat = runnerUp && Math.abs(top[1].weight - runnerUp[1].weight) < NEAR_TIE_WEIGHT ? { accountId: runnerUp[0], evidence: runnerUp[1] } : null;
    return { accountId: winner[0], evidence: winner[1], amountBeat };
  }

  /** A tally's allowed accounts, most (recency-weighted) bookings first, then by code; kept until the tally changes. */
  private rankedAccounts(tally: Tally): ReadonlyArray<[string, AccountEvidence]> {
    const kept = this.ranked.get(tally);
    if (kept && kept.changes === tally.changes) return kept.allowed;
    const allowed = [...tally.accounts]
      .filter(([accountId]) => this.accounts.get(accountId)?.allowed === true)
      .sort(([a, x], [b, y]) => y.weight - x.weight || this.byCode(a, b));
    this.ranked.set(tally, { changes: tally.changes, allowed });
    return allowed;
  }

  /**
   * Word evidence from other payees: the most telling word (estimated per payee, Laplace), and
   * as confidence the mean of every sufficiently seen word's estimate for that word's account,
   * so words that point elsewhere pull it down.
   */
  private wordsFinding(words: readonly string[], ownSource: string | null): WordsFinding | undefined {
    const seen: Array<{ word: string; sources: number; byAccount: Map<string, number>; accountId: string; estimate: number }> = [];
    for (const word of words) {
      const evidence = this.words.evidence(word, ownSource);
      if (!evidence || evidence.sources < MIN_WORD_SOURCES) continue;
      let top: [string, number] | undefined;
      for (const [accountId, share] of evidence.byAccount) {
        if (this.accounts.get(accountId)?.allowed !== true) continue;
        if (!top || share > top[1] + 1e-9 || (Math.abs(share - top[1]) <= 1e-9 && this.byCode(accountId, top[0]) < 0)) top = [accountId, share];
      }
      if (!top) continue;
      seen.push({ word, sources: evidence.sources, byAccount: evidence.byAccount, accountId: top[0], estimate: (top[1] + 1) / (evidence.sources + 2) });
    }
    let lead: (typeof seen)[number] | undefined;
    for (const entry of seen) if (!lead || entry.estimate > lead.estimate + 1e-9 || (Math.abs(entry.estimate - lead.estimate) <= 1e-9 && entry.sources > lead.sources)) lead = entry;
    if (!lead || lead.estimate < MIN_WORD_CONFIDENCE) return undefined;
    const accountId = lead.accountId;
    const mean = seen.reduce((sum, entry) => sum + ((entry.byAccount.get(accountId) ?? 0) + 1) / (entry.sources + 2), 0) / seen.length;
    return {
      accountId,
      confidence: Math.min(mean, WORDS_CONFIDENCE_CAP),
      word: lead.word,
      agreeing: lead.byAccount.get(accountId) ?? 0,
      sources: lead.sources,
    };
  }

  private fromPayee(payee: PayeeEvidence, words: WordsFinding | undefined, known: KnownPhrase | undefined): Candidate {
    const { tally, choice, level } = payee;
    const accountId = choice.accountId;
    // Outside evidence naming the same account counts as up to two more bookings, for a payee
    // matched by name (words are then counted without this payee's own bookings).
    let agreement = 0;
    let agreeingReason = '';
    if (level === 'vendor' || level === 'name') {
      if (words && words.accountId === accountId && words.confidence > agreement) {
        agreement = words.confidence;
        agreeingReason = `as payments mentioning '${quotable(words.word, 40)}' to other payees usually are`;
      }
      const knownAccount = known && this.allowedByName.get(known.accountName);
      const knownConfidence = known ? knowledgeConfidence(known) : 0;
      if (knownAccount && knownAccount.id === accountId && knownConfidence > agreement) {
        agreement = knownConfidence;
        agreeingReason = `as '${known.phrase}' usually is`;
      }
    }
    const { alone } = payee;
    const confidence = payeeConfidence(payee, agreement, alone);
    // Say so only where the agreement moves the figure shown.
    if (floorToHundredths(confidence) === floorToHundredths(payeeConfidence(payee, 0, alone))) agreeingReason = '';

    const account = this.name(accountId);
    const payees = this.payeePhrase(payee);
    const count = choice.evidence.count;
    let sentence: string;
    const others = [...tally.accounts.values()].reduce((max, evidence) => (evidence === choice.evidence ? max : Math.max(max, evidence.count)), 0);
    if (tally.lastAccountId === accountId && tally.lastRun >= 2 && others >= count) {
      sentence = `The last ${tally.lastRun} payments ${payees} were booked to ${account} (${count} of ${tally.total} in all)`;
    } else if (tally.total === 1) {
      sentence = `The one earlier payment ${payees} was booked to ${account}`;
    } else if (count === tally.total) {
      sentence = `All ${tally.total} earlier payments ${payees} were booked to ${account}`;
    } else {
      sentence = `${count} of ${tally.total} earlier payments ${payees} were booked to ${account}`;
    }
    if (choice.amountBeat) {
      sentence += ` and ${choice.amountBeat.evidence.count} to ${this.name(choice.amountBeat.accountId)}; this amount is closer to the ${account} ones`;
    }
    if (level === 'near') sentence = `'${quotable(payee.text, 60)}' looks like ${tally.labelIsName ? quotable(tally.label, 120) : `'${quotable(tally.label, 60)}'`}: ${lowerFirst(sentence)}`;
    if (level === 'begins') sentence += `, and '${quotable(payee.text, 60)}' carries that name`;
    if (agreeingReason !== '') sentence += `, ${agreeingReason}`;
    return { accountId, confidence, rationale: `${sentence}.` };
  }

  private payeePhrase(payee: PayeeEvidence): string {
    const { tally, level, key } = payee;
    if (level === 'extends' || level === 'shares') return `to payees whose names begin '${quotable(key, 60)}'`;
    return tally.labelIsName ? `to ${quotable(tally.label, 120)}` : `described as '${quotable(tally.label, 60)}'`;
  }

  private fromWords(words: WordsFinding, inputText: string): Candidate {
    const subject = inputText === '' ? 'this payee' : `'${quotable(inputText, 60)}'`;
    const agreeing = Math.round(words.agreeing);
    return {
      accountId: words.accountId,
      confidence: words.confidence,
      rationale:
        `There is no earlier payment to ${subject}, but payments mentioning '${quotable(words.word, 40)}' were booked to ` +
        `${this.name(words.accountId)} for ${agreeing} of ${words.sources} other payees.`,
    };
  }

  private fromKnowledge(known: KnownPhrase, inputText: string): Candidate {
    const account = this.allowedByName.get(known.accountName) as ChartAccount;
    const subject = inputText === '' ? 'this payee' : `'${quotable(inputText, 60)}'`;
    const what = known.kind === 'merchant' ? `'${known.phrase}' is ${known.what}` : `'${known.phrase}' suggests ${known.what}`;
    return {
      accountId: account.id,
      confidence: this.knowledgeAccuracy[known.kind] ?? knowledgeConfidence(known),
      rationale: `There is no earlier payment to ${subject}, but ${what}, usually booked to ${account.name}.`,
    };
  }

  private name(accountId: string): string {
    return (this.accounts.get(accountId) as ChartAccount).name;
  }

  private byCode(a: string, b: string): number {
    const x = this.accounts.get(a) as ChartAccount;
    const y = this.accounts.get(b) as ChartAccount;
    return x.code < y.code ? -1 : x.code > y.code ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
  }
}

/**
 * Laplace's rule of succession over the payee's recency-weighted bookings, (agreeing + 1) /
 * (all + 2), with agreeing outside evidence as up to AGREEMENT_BOOKINGS more agreeing bookings.
 * A match on part of a name carries one booking's worth of doubt; a near-miss spelling, or a name
 * that only shares its first words with known ones and has nothing more specific to agree
 * with (`alone`), is capped below the threshold.
 */
function payeeConfidence(payee: PayeeEvidence, agreement: number, alone: boolean): number {
  const extra = AGREEMENT_BOOKINGS * agreement;
  const doubt = payee.level === 'vendor' || payee.level === 'name' ? 0 : 1;
  const confidence = (payee.choice.evidence.weight + 1 + extra) / (payee.tally.weight + 2 + extra + doubt);
  const guess = payee.level === 'near' || (alone && payee.level === 'shares');
  return guess ? Math.min(confidence, NEAR_NAME_CONFIDENCE_CAP) : confidence;
}

function knowledgeConfidence(known: KnownPhrase): number {
  return known.kind === 'merchant' ? MERCHANT_CONFIDENCE : KEYWORD_CONFIDENCE;
}

/** The surer of two candidates; learned words win a tie over built-in knowledge (given first). */
function best(learned: Candidate | undefined, builtIn: Candidate | undefined): Candidate | undefined {
  if (!learned) return builtIn;
  if (!builtIn) return learned;
  return builtIn.confidence > learned.confidence ? builtIn : learned;
}

function unplaced(vendorName: string | null, description: string | null): string {
  const text = [vendorName, description].filter((part): part is string => part !== null).join(' ');
  if (quotable(text) === '') return 'There is no vendor or description to go on; choose the account yourself.';
  return `No earlier payment or known merchant matches '${quotable(text)}'; choose the account yourself.`;
}

/** The phrases made of a name's first words, longest first, without the whole name: [a b, a] for [a, b, c]. */
function leadingPhrases(words: readonly string[]): string[] {
  const phrases: string[] = [];
  for (let length = words.length - 1; length >= 1; length -= 1) phrases.push(words.slice(0, length).join(' '));
  return phrases;
}

function tallyFor(map: Map<string, Tally>, key: string, label: string, labelIsName: boolean): Tally {
  let tally = map.get(key);
  if (!tally) {
    tally = new Tally(label, labelIsName);
    map.set(key, tally);
  }
  return tally;
}

function present(text: string | null): string | null {
  if (text === null) return null;
  const trimmed = text.trim();
  return trimmed === '' ? null : trimmed;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** Confidence is a score, not money: a JS number, cut (never rounded up) to two decimals. */
function floorToHundredths(value: number): number {
  return Math.floor(value * 100 + 1e-9) / 100;
}

function assertAmount(amountCents: bigint): void {
  if (typeof amountCents !== 'bigint' || amountCents < 0n) throw new Error(`categoriser: amountCents must be a bigint of at least 0, got ${String(amountCents)}`);
}

/**
 * What the categoriser promises of every proposal: an account an expense may be booked to
 * (`mayBook`) with a confidence in [0, 1], or neither; and a rationale of 1 to 2000 characters.
 * Stricter than what the review queue can hold (bank-import's assertProposal: any account of
 * the business, any rationale up to 2000 characters); test/unit/proposal-rules.test.ts keeps
 * this one within that one.
 */
export function assertBookableProposal(proposal: Proposal, mayBook: (accountId: string) => boolean): void {
  const { accountId, confidence, rationale } = proposal;
  if ((accountId === null) !== (confidence === null)) throw new Error('categoriser: a proposal has both an account and a confidence, or neither');
  if (accountId !== null && !mayBook(accountId)) throw new Error(`categoriser: proposed ${accountId}, which an expense may not be booked to`);
  if (confidence !== null && !(confidence >= 0 && confidence <= 1)) throw new Error(`categoriser: confidence ${confidence} is outside 0 to 1`);
  // A string has no more characters than UTF-16 units: only a long one needs counting.
  const chars = rationale.length <= MAX_RATIONALE_CHARS ? rationale.length : [...rationale].length;
  if (chars === 0 || chars > MAX_RATIONALE_CHARS) throw new Error(`categoriser: rationale of ${chars} characters`);
}
