import { type Business, listBusinesses } from '../../books/businesses.js';
import { type Evidence, refreshToday } from '../../books/today.js';
import type { AppContext, AppMiddleware } from '../../http/context.js';
import type { Services } from '../../services.js';
import { e, page, type Section, select } from './html.js';
import { sendPage, sendSignedOut, type SignedIn, signedIn } from './session.js';

/**
 * Today in the console: a business of the account (the first by name unless one is chosen) and
 * what needs attention in it, worked out as GET /api/v1/today works it out. Evidence that points
 * at something the console shows links there; the rest is plain text, since a browser has no key
 * for the API's own addresses.
 */

/** The business a console page shows, with every business of the account for the picker. */
export type ChosenBusiness = { business: Business; businesses: Business[] } | { business: null; businesses: Business[]; unknown: boolean };

/**
 * The business named by `?business=` (or by `named`), when it is one of the account's; with no
 * name, the first of the account's businesses by name. `unknown`: a name that is no business of
 * this account (another account's business is answered like one that does not exist).
 */
export function chooseBusiness(services: Services, who: SignedIn, named: unknown): ChosenBusiness {
  const businesses = listBusinesses(services.db, who.session.tenantId);
  if (typeof named === 'string' && named !== '') {
    const business = businesses.find((candidate) => candidate.id === named);
    return business ? { business, businesses } : { business: null, businesses, unknown: true };
  }
  const first = businesses[0];
  return first ? { business: first, businesses } : { business: null, businesses, unknown: false };
}

/** A GET form choosing which business `path` shows. */
export function businessPicker(path: string, businesses: readonly Business[], chosen: Business | null): string {
  if (businesses.length === 0) return '';
  const options = businesses.map((business) => [business.id, business.name] as const);
  return `<form method="get" action="${e(path)}" class="filters">${select('business', 'Business', options, chosen?.id)}<button type="submit">Show</button></form>`;
}

/** The page for a business that is not there to show: none chosen that the account has, or no business at all. */
export function sendNoBusiness(ctx: AppContext, who: SignedIn, section: Section, title: string, path: string, chosen: ChosenBusiness & { business: null }): void {
  if (chosen.unknown) {
    const body = `<p>This account has no such business.</p>${businessPicker(path, chosen.businesses, null)}`;
    return sendPage(ctx, 404, page({ title: 'No such business', section, accountName: who.accountName, csrf: who.csrf }, body));
  }
  sendPage(ctx, 200, page({ title, section, accountName: who.accountName, csrf: who.csrf }, '<p>This account has no businesses yet.</p>'));
}

/**
 * Where a piece of evidence leads in the console: the review queue's page for the queue; nothing
 * for what the console does not show (an invoice). Never the API's address itself.
 */
export function consoleLink(evidence: Evidence, business: Business): string | undefined {
  if (evidence.url === undefined) return undefined;
  let path: string;
  try {
    path = new URL(evidence.url).pathname;
  } catch {
    return undefined;
  }
  if (path === '/api/v1/review-queue') return `/console/review?business=${encodeURIComponent(business.id)}`;
  return undefined;
}

function evidenceItem(evidence: Evidence, business: Business): string {
  const href = consoleLink(evidence, business);
  return `<li>${href === undefined ? e(evidence.label) : `<a href="${e(href)}">${e(evidence.label)}</a>`}</li>`;
}

/** GET /console/today?business=ID: the Today page. */
export function todayRoute(services: Services): AppMiddleware {
  return async (ctx) => {
    const who = signedIn(ctx, services);
    if (!who) return sendSignedOut(ctx);
    const chosen = chooseBusiness(services, who, ctx.query.business);
    if (chosen.business === null) return sendNoBusiness(ctx, who, 'today', 'Today', '/console/today', chosen);
    const { business } = chosen;
    // As GET /api/v1/today does: reading Today refreshes when each signal was last seen.
    const feed = refreshToday(services.db, services.clock, business, { siteUrl: services.config.siteUrl });
    const signals = feed.signals
      .map(
        (signal) => `<li class="signal">
<p><span class="severity">${e(signal.severity)}</span>: ${e(signal.sentence)}</p>
<p><strong>What to do:</strong> ${e(signal.action)}</p>
${signal.evidence.length === 0 ? '' : `<p class="muted">Evidence:</p><ul>${signal.evidence.map((item) => evidenceItem(item, business)).join('')}</ul>`}
</li>`,
      )
      .join('');
    const body = `${businessPicker('/console/today', chosen.businesses, business)}
<h2>${e(business.name)}</h2>
<p class="headline">${e(feed.headline)}</p>
${feed.signals.length === 0 ? '' : `<ol class="signals">${signals}</ol>`}`;
    sendPage(ctx, 200, page({ title: 'Today', section: 'today', accountName: who.accountName, csrf: who.csrf }, body));
  };
}
