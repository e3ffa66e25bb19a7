import type { Business } from '../../books/businesses.js';
import { type AccountType, findLedgerAccount, type LedgerAccount, listPostableAccounts, systemAccountId, takesExpenses } from '../../books/chart.js';
import { findReviewItem, isHighConfidence, listReviewQueue, type ReviewItem } from '../../books/review.js';
import { acceptReviewItemCommand } from '../../door/commands/spending.js';
import { writeNow } from '../../door/door.js';
import { ApiError } from '../../errors.js';
import type { AppContext, AppMiddleware } from '../../http/context.js';
import { formatMoney } from '../../money.js';
import type { Services } from '../../services.js';
import { e, form, notice, page } from './html.js';
import { checkedForm, type Notice, noticeFrom, noticeQuery, seeOther, sendPage, sendSignedOut, type SignedIn, signedIn } from './session.js';
import { businessPicker, chooseBusiness, sendNoBusiness } from './today.js';

/**
 * The review queue in the console: a business's waiting bank lines with the categoriser's
 * proposals, each accepted (to the proposal or another account) through the same door command
 * as POST /api/v1/review-queue/{id}/accept; and the confident proposals accepted together after
 * a confirmation that lists them, only those the owner was shown.
 */

/** As many items as one read of the API's queue may ask for. */
const QUEUE_LIMIT = 100;
/** How many refusals a batch's notice names before it says how many more there were. */
const NAMED_REFUSALS = 5;

/** What the owner reads an item by: its vendor, else its description. */
function itemLabel(item: Pick<ReviewItem, 'vendor' | 'description' | 'amountCents'>): string {
  return `${item.vendor ?? item.description ?? 'Bank line'}, ${formatMoney(item.amountCents, 'USD')}`;
}

function confidenceText(confidence: number | null): string {
  return confidence === null ? 'Not scored' : `${Math.round(confidence * 100)}%`;
}

function queueAddress(who: SignedIn, businessId: string, message?: Notice): string {
  const query = new URLSearchParams({ business: businessId });
  if (message) for (const [name, value] of noticeQuery(who, message)) query.set(name, value);
  return `/console/review?${query.toString()}`;
}

const TYPE_GROUPS: readonly (readonly [AccountType, string])[] = [
  ['expense', 'Expenses'],
  ['asset', 'Assets'],
  ['liability', 'Liabilities'],
  ['equity', 'Equity'],
  ['revenue', 'Revenue'],
];

/** The accounts a bank line going out may be booked to: what assertExpenseAccount (src/books/expenses.ts) accepts. */
function expenseAccounts(services: Services, business: Business): LedgerAccount[] {
  return listPostableAccounts(services.db, business.id).filter((account) => {
    const role = findLedgerAccount(services.db, account.id)?.systemRole ?? null;
    return takesExpenses(role);
  });
}

/** How a row's item may be booked, which decides what its form offers. */
type Booking =
  /** Money out: any account an expense may go to. */
  | { kind: 'expense' }
  /** A card processor's payout (money in): Card Payments Clearing only. */
  | { kind: 'payout'; clearingId: string }
  /** A line already recorded as an expense: linked to it, on the expense's account. */
  | { kind: 'recorded' };

function bookingOf(services: Services, business: Business, item: ReviewItem): Booking {
  const found = findReviewItem(services.db, item.id);
  if (found?.recordedExpenseId) return { kind: 'recorded' };
  if (found?.direction === 'in') return { kind: 'payout', clearingId: systemAccountId(services.db, business.id, 'card_clearing') };
  return { kind: 'expense' };
}

function accountChoice(item: ReviewItem, accounts: readonly LedgerAccount[], booking: Booking): string {
  const label = itemLabel(item);
  if (booking.kind === 'recorded') {
    return `<p class="muted">Linked to the expense already recorded${item.proposedAccount ? ` (${e(item.proposedAccount)})` : ''}; nothing new is posted.</p>`;
  }
  if (booking.kind === 'payout') {
    return `<input type="hidden" name="accountId" value="${e(booking.clearingId)}"><p class="muted">A payout: booked to Card Payments Clearing.</p>`;
  }
  const none = item.proposedAccountId === null ? '<option value="" selected>Choose an account</option>' : '';
  const groups = TYPE_GROUPS.map(([type, heading]) => {
    const options = accounts
      .filter((account) => account.type === type)
      .map((account) => `<option value="${e(account.id)}"${account.id === item.proposedAccountId ? ' selected' : ''}>${e(account.name)} (${e(account.code)})</option>`)
      .join('');
    return options === '' ? '' : `<optgroup label="${heading}">${options}</optgroup>`;
  }).join('');
  const id = `account-${item.id}`;
  return `<label for="${e(id)}" class="visually-hidden">Account for ${e(label)}</label><select id="${e(id)}" name="accountId"${item.proposedAccountId === null ? ' required' : ''}>${none}${groups}</select>`;
}

function itemCells(item: ReviewItem): string {
  const line = [item.vendor, item.description].filter((part): part is string => part !== null && part !== '');
  const named = line.length === 0 ? 'Bank line' : `${e(line[0]!)}${line[1] ? `<br><span class="muted">${e(line[1])}</span>` : ''}`;
  return `<td class="date">${e(item.date)}</td><th scope="row">${named}</th><td class="num">${e(formatMoney(item.amountCents, 'USD'))}</td>`;
}

function itemRow(services: Services, who: SignedIn, business: Business, item: ReviewItem, accounts: readonly LedgerAccount[]): string {
  const booking = bookingOf(services, business, item);
  const accept = form(
    `/console/review/${item.id}/accept`,
    who.csrf,
    `<input type="hidden" name="business" value="${e(business.id)}">${accountChoice(item, accounts, booking)}<button type="submit">Accept<span class="visually-hidden"> ${e(itemLabel(item))}</span></button>`,
    'accept',
  );
  return `<tr data-item="${e(item.id)}">${itemCells(item)}<td>${e(item.proposedAccount ?? 'None')}</td><td class="num">${confidenceText(item.confidence)}</td><td>${e(item.rationale ?? '')}</td><td>${accept}</td></tr>`;
}

const QUEUE_HEAD =
  '<thead><tr><th scope="col">Date</th><th scope="col">Bank line</th><th scope="col" class="num">Amount</th><th scope="col">Proposal</th><th scope="col" class="num">Confidence</th><th scope="col">Why</th><th scope="col">Book to</th></tr></thead>';

function queueTable(services: Services, who: SignedIn, business: Business, items: readonly ReviewItem[], caption: string, accounts: readonly LedgerAccount[]): string {
  return `<table><caption class="muted">${e(caption)}</caption>${QUEUE_HEAD}<tbody>${items.map((item) => itemRow(services, who, business, item, accounts)).join('')}</tbody></table>`;
}

const KEYBOARD_HINT =
  '<p class="muted" id="review-keys">Keyboard: <kbd>j</kbd> and <kbd>k</kbd> move to the next and previous item, <kbd>a</kbd> accepts the item with the account shown, <kbd>e</kbd> moves to its account to choose another.</p>';

function reviewPage(services: Services, who: SignedIn, ctx: AppContext, business: Business, businesses: readonly Business[], status: number, message?: Notice): void {
  const threshold = services.config.reviewConfidence;
  const queue = listReviewQueue(services.db, [business.id], QUEUE_LIMIT, threshold);
  const accounts = expenseAccounts(services, business);
  const waiting = queue.highConfidence.length + queue.needsReview.length;
  const confident =
    queue.highConfidence.length === 0
      ? ''
      : `<h2>Confident proposals (${queue.highConfidence.length})</h2>
<p>Proposals scored at ${confidenceText(threshold)} or more.</p>
<form method="get" action="/console/review/accept-confident"><input type="hidden" name="business" value="${e(business.id)}"><button type="submit">Accept the confident ones together…</button></form>
${queueTable(services, who, business, queue.highConfidence, `Confident proposals of ${business.name}`, accounts)}`;
  const unsure =
    queue.needsReview.length === 0
      ? ''
      : `<h2>Needs a look (${queue.needsReview.length})</h2>
${queueTable(services, who, business, queue.needsReview, `Items of ${business.name} to check`, accounts)}`;
  const body = `${message ? notice(message.text, message.kind) : ''}
${businessPicker('/console/review', businesses, business)}
${
  waiting === 0
    ? `<p>Nothing waits in the review queue of ${e(business.name)}.</p>`
    : `<p>${waiting} ${waiting === 1 ? 'bank line waits' : 'bank lines wait'} in the review queue of ${e(business.name)}, oldest first.${queue.hasMore ? ' More wait behind these; they show once these are accepted.' : ''}</p>
${KEYBOARD_HINT}
${confident}
${unsure}`
}`;
  sendPage(ctx, status, page({ title: 'Review queue', section: 'review', accountName: who.accountName, csrf: who.csrf }, body));
}

function itemIdOf(ctx: AppContext): string {
  return (ctx as AppContext & { params: { id: string } }).params.id;
}

/** GET /console/review?business=ID: the waiting items of one business. */
export function reviewRoute(services: Services): AppMiddleware {
  return async (ctx) => {
    const who = signedIn(ctx, services);
    if (!who) return sendSignedOut(ctx);
    const chosen = chooseBusiness(services, who, ctx.query.business);
    if (chosen.business === null) return sendNoBusiness(ctx, who, 'review', 'Review queue', '/console/review', chosen);
    reviewPage(services, who, ctx, chosen.business, chosen.businesses, 200, noticeFrom(ctx, who));
  };
}

/** POST /console/review/{id}/accept: books the item to the account chosen (its proposal unless another is). */
export function acceptItemRoute(services: Services): AppMiddleware {
  return async (ctx) => {
    const who = signedIn(ctx, services);
    if (!who) return sendSignedOut(ctx);
    const fields = await checkedForm(ctx, who);
    if (!fields) return;
    const itemId = itemIdOf(ctx);
    const accountId = fields.get('accountId') || undefined;
    let accepted;
    try {
      accepted = writeNow(services, who.writer, acceptReviewItemCommand, { itemId, ...(accountId !== undefined ? { accountId } : {}) });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const named = chooseBusiness(services, who, fields.get('business'));
      const chosen = named.business === null ? chooseBusiness(services, who, undefined) : named;
      if (chosen.business === null) return sendNoBusiness(ctx, who, 'review', 'Review queue', '/console/review', { ...chosen, unknown: true });
      return reviewPage(services, who, ctx, chosen.business, chosen.businesses, error.status, { text: `Nothing was accepted: ${error.message}`, kind: 'problem' });
    }
    // The door found the item within the account's reach; what it booked is read back to say so.
    const item = findReviewItem(services.db, itemId)!;
    const account = listPostableAccounts(services.db, item.businessId).find((candidate) => candidate.id === (accountId ?? item.proposedAccountId));
    const text = `Accepted: ${itemLabel(item)}${account ? `, booked to ${account.name}` : ''}${accepted.status === 'edited' ? ' (not the proposal)' : ''}.`;
    seeOther(ctx, queueAddress(who, item.businessId, { text, kind: 'ok' }));
  };
}

/** GET /console/review/accept-confident?business=ID: the confident proposals, to accept together after this look. */
export function confirmConfidentRoute(services: Services): AppMiddleware {
  return async (ctx) => {
    const who = signedIn(ctx, services);
    if (!who) return sendSignedOut(ctx);
    const chosen = chooseBusiness(services, who, ctx.query.business);
    if (chosen.business === null) return sendNoBusiness(ctx, who, 'review', 'Accept the confident proposals', '/console/review', chosen);
    const { business } = chosen;
    const threshold = services.config.reviewConfidence;
    const items = listReviewQueue(services.db, [business.id], QUEUE_LIMIT, threshold).highConfidence;
    const back = `<a href="${e(queueAddress(who, business.id))}">Back to the review queue</a>`;
    const frame = { title: 'Accept the confident proposals', section: 'review' as const, accountName: who.accountName, csrf: who.csrf };
    if (items.length === 0) {
      return sendPage(ctx, 200, page(frame, `<p>No proposal in the review queue of ${e(business.name)} is scored at ${confidenceText(threshold)} or more.</p><p>${back}</p>`));
    }
    const rows = items
      .map((item) => `<tr>${itemCells(item)}<td>${e(item.proposedAccount ?? '')}</td><td class="num">${confidenceText(item.confidence)}</td></tr>`)
      .join('');
    const shown = items.map((item) => `<input type="hidden" name="item" value="${e(`${item.id}:${item.proposedAccountId}`)}">`).join('');
    const these = items.length === 1 ? 'this item' : `these ${items.length} items`;
    const body = `<p>Accept ${these} of ${e(business.name)}, each booked to its proposal (scored at ${confidenceText(threshold)} or more)? Only the items listed here are accepted.</p>
<table><caption class="muted">Confident proposals of ${e(business.name)}</caption><thead><tr><th scope="col">Date</th><th scope="col">Bank line</th><th scope="col" class="num">Amount</th><th scope="col">Booked to</th><th scope="col" class="num">Confidence</th></tr></thead><tbody>${rows}</tbody></table>
${form('/console/review/accept-confident', who.csrf, `<input type="hidden" name="business" value="${e(business.id)}">${shown}<p><button type="submit">Accept ${these}</button> ${back}</p>`)}`;
    sendPage(ctx, 200, page(frame, body));
  };
}

/** Why one item of the batch was not accepted, or undefined once it was. */
function acceptShown(services: Services, who: SignedIn, business: Business, shown: string): { label: string; why: string } | undefined {
  const [itemId = '', accountId = ''] = shown.split(':');
  const item = findReviewItem(services.db, itemId);
  // Only an item of this business's queue, as it was shown: confident, and proposed to the same account.
  if (!item || item.businessId !== business.id) return { label: itemId, why: 'No such review item.' };
  const label = itemLabel(item);
  if (item.acceptedAt !== null) return { label, why: 'it was accepted already.' };
  if (!isHighConfidence(item, services.config.reviewConfidence)) return { label, why: 'its proposal is not a confident one.' };
  if (item.proposedAccountId !== accountId) return { label, why: 'its proposal changed since it was shown.' };
  try {
    writeNow(services, who.writer, acceptReviewItemCommand, { itemId: item.id, accountId });
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { label, why: error.message };
  }
  return undefined;
}

/** POST /console/review/accept-confident: accepts the items the confirmation listed, each through the door; reports the ones that could not be. */
export function acceptConfidentRoute(services: Services): AppMiddleware {
  return async (ctx) => {
    const who = signedIn(ctx, services);
    if (!who) return sendSignedOut(ctx);
    const fields = await checkedForm(ctx, who);
    if (!fields) return;
    // The business whose queue was shown must be named: the batch never falls back to another.
    const businessId = fields.get('business');
    const chosen = chooseBusiness(services, who, businessId);
    if (!businessId || chosen.business === null) return sendNoBusiness(ctx, who, 'review', 'Review queue', '/console/review', { ...chosen, business: null, unknown: true });
    const { business } = chosen;
    const shown = [...new Set(fields.getAll('item'))];
    let accepted = 0;
    const refused: { label: string; why: string }[] = [];
    for (const one of shown) {
      const refusal = acceptShown(services, who, business, one);
      if (refusal) refused.push(refusal);
      else accepted += 1;
    }
    const named = refused.slice(0, NAMED_REFUSALS).map((refusal) => `${refusal.label}: ${refusal.why.replace(/\.$/, '')}`);
    if (refused.length > NAMED_REFUSALS) named.push(`and ${refused.length - NAMED_REFUSALS} more`);
    const text = refused.length === 0 ? `Accepted ${accepted}.` : `Accepted ${accepted}; ${refused.length} could not be: ${named.join('; ')}.`;
    seeOther(ctx, queueAddress(who, business.id, { text, kind: refused.length === 0 ? 'ok' : 'problem' }));
  };
}
