import { listBusinesses } from '../../books/businesses.js';
import { listKeys } from '../../books/keys.js';
import { isIsoDate } from '../../dates.js';
import type { AppContext, AppMiddleware } from '../../http/context.js';
import type { Services } from '../../services.js';
import { ACTOR_TYPES, type Actor, type ActorType, type AuditFilter, type AuditRow, listAudit } from '../../store/audit.js';
import { e, notice, page } from './html.js';
import { sendPage, sendSignedOut, type SignedIn, signedIn } from './session.js';

/**
 * The account's audit trail in the console: who wrote what, when, to which record of which
 * business, newest first, 50 rows a page. Only the account's own rows show; the installation's
 * (exchange rates, restores, migrations) belong to no account and never do. The filters are a
 * GET form, so a filtered page is a link; "Older" carries the filters and the last row's id.
 */

export const AUDIT_PAGE_SIZE = 50;

/** How the page names each kind of writer. */
const ACTOR_LABELS: Record<ActorType, string> = {
  api_key: 'API key',
  console: 'Console',
  cli: 'Admin command',
  job: 'Job',
  pay_page: 'Pay page',
  webhook: 'Card processor’s webhook',
};

/** The "who" choices that are a kind of writer, in the order the form lists them. */
const WHO_TYPES: readonly ActorType[] = ['console', 'cli', 'job', 'pay_page', 'webhook'];

/** A "who" value naming one key: `key:` and the key's name. */
const KEY_PREFIX = 'key:';

/** The filters as sent: shown back in the form, and carried by the "Older" link. */
interface Sent {
  business: string;
  who: string;
  since: string;
  until: string;
}

type Read = { filter: Omit<AuditFilter, 'limit'>; problems: [] } | { filter: null; problems: string[] };

/** One value of the query: '' when absent; null when sent more than once (a link no form makes). */
function queryValue(ctx: AppContext, name: string): string | null {
  const value = ctx.query[name];
  if (value === undefined) return '';
  return typeof value === 'string' ? value.trim() : null;
}

/** The filter the query asks for, or what is wrong with it. */
function readFilter(ctx: AppContext, tenantId: string, businessIds: ReadonlySet<string>, keyNames: ReadonlySet<string>): { sent: Sent; read: Read } {
  const problems: string[] = [];
  const values = { business: queryValue(ctx, 'business'), who: queryValue(ctx, 'who'), since: queryValue(ctx, 'since'), until: queryValue(ctx, 'until'), before: queryValue(ctx, 'before') };
  for (const [name, value] of Object.entries(values)) if (value === null) problems.push(`Give "${name}" once.`);
  const sent: Sent = { business: values.business ?? '', who: values.who ?? '', since: values.since ?? '', until: values.until ?? '' };
  const filter: Omit<AuditFilter, 'limit'> = { scope: { accountId: tenantId } };

  if (sent.business !== '') {
    if (businessIds.has(sent.business)) filter.businessId = sent.business;
    else problems.push('The business chosen is not one of this account’s businesses.');
  }
  if (sent.who.startsWith(KEY_PREFIX)) {
    const keyName = sent.who.slice(KEY_PREFIX.length);
    if (keyNames.has(keyName)) filter.keyName = keyName;
    else problems.push('No API key of this account has that name.');
  } else if (sent.who !== '') {
    if ((ACTOR_TYPES as readonly string[]).includes(sent.who)) filter.actorType = sent.who as ActorType;
    else problems.push('Choose who wrote from the list.');
  }
  for (const [name, label] of [
    ['since', 'From'],
    ['until', 'To'],
  ] as const) {
    if (sent[name] === '') continue;
    if (isIsoDate(sent[name])) filter[name] = sent[name];
    else problems.push(`"${label}" must be a date written YYYY-MM-DD (got "${sent[name]}").`);
  }
  if (filter.since !== undefined && filter.until !== undefined && filter.until < filter.since) problems.push('"To" is before "From": no day is in between.');
  const before = values.before ?? '';
  if (before !== '') {
    if (/^[1-9][0-9]{0,15}$/.test(before) && Number.isSafeInteger(Number(before))) filter.beforeId = Number(before);
    else problems.push('The link to older rows is damaged: start again from the newest rows.');
  }
  return { sent, read: problems.length === 0 ? { filter, problems: [] } : { filter: null, problems } };
}

/** The query of a page with these filters (only those given), and a cursor if any. */
function queryOf(sent: Sent, before?: number): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(sent)) if (value !== '') params.set(name, value);
  if (before !== undefined) params.set('before', String(before));
  const query = params.toString();
  return query === '' ? '' : `?${query}`;
}

function describeWho(actor: Actor): string {
  const label = ACTOR_LABELS[actor.type];
  switch (actor.type) {
    case 'pay_page':
      return `${label} (the customer)`;
    case 'cli':
      return `${label}: ${actor.name}${actor.command ? ` (${actor.command})` : ''}`;
    default:
      return `${label}: ${actor.name}`;
  }
}

function describeRecord(row: AuditRow): string {
  if (row.subjectType === null) return '';
  return row.subjectId === null ? row.subjectType : `${row.subjectType} ${row.subjectId}`;
}

function rowHtml(row: AuditRow, businessNames: ReadonlyMap<string, string>): string {
  const business = row.businessId === null ? '' : (businessNames.get(row.businessId) ?? row.businessId);
  const detail = Object.keys(row.detail).length === 0 ? '' : `<details><summary>Detail</summary><pre>${e(JSON.stringify(row.detail, null, 2))}</pre></details>`;
  return `<tr data-audit-id="${row.id}"><td><time datetime="${e(row.at)}">${e(row.at.slice(0, 19).replace('T', ' '))}</time></td><td>${e(describeWho(row.actor))}</td><td><code>${e(row.action)}</code>${detail}</td><td>${e(describeRecord(row))}</td><td>${e(business)}</td></tr>`;
}

function filterForm(sent: Sent, businesses: readonly { id: string; name: string }[], keyNames: readonly string[]): string {
  const option = (value: string, text: string, selected: string) => `<option value="${e(value)}"${value === selected ? ' selected' : ''}>${e(text)}</option>`;
  const businessOptions = [option('', 'Any business', sent.business), ...businesses.map((business) => option(business.id, business.name, sent.business))].join('');
  const keyOptions = [option('api_key', 'Any API key', sent.who), ...keyNames.map((name) => option(`${KEY_PREFIX}${name}`, `Key "${name}"`, sent.who))].join('');
  const whoOptions = [
    option('', 'Anyone', sent.who),
    `<optgroup label="API keys">${keyOptions}</optgroup>`,
    ...WHO_TYPES.map((type) => option(type, type === 'cli' ? 'Admin command (on the server)' : ACTOR_LABELS[type], sent.who)),
  ].join('');
  return `<form method="get" action="/console/audit" class="filters" role="search" aria-label="Filter the audit trail">
<div><label for="field-business">Business</label><select id="field-business" name="business">${businessOptions}</select></div>
<div><label for="field-who">Who</label><select id="field-who" name="who">${whoOptions}</select></div>
<div><label for="field-since">From (UTC)</label><input type="date" id="field-since" name="since" value="${e(sent.since)}"></div>
<div><label for="field-until">To (UTC)</label><input type="date" id="field-until" name="until" value="${e(sent.until)}"></div>
<p><button type="submit">Show</button> <a href="/console/audit">Clear</a></p>
</form>`;
}

function auditPage(ctx: AppContext, services: Services, who: SignedIn): void {
  const { db } = services;
  const tenantId = who.session.tenantId;
  const businesses = listBusinesses(db, tenantId);
  const keyNames = [...new Set(listKeys(db, tenantId).map((key) => key.name))].sort((a, b) => a.localeCompare(b));
  const { sent, read } = readFilter(ctx, tenantId, new Set(businesses.map((business) => business.id)), new Set(keyNames));
  const form = filterForm(sent, businesses, keyNames);
  const frame = { title: 'Audit trail', section: 'audit' as const, accountName: who.accountName, csrf: who.csrf };
  if (read.filter === null) {
    const body = `${read.problems.map((problem) => notice(problem, 'problem')).join('')}\n${form}`;
    return sendPage(ctx, 400, page(frame, body));
  }

  const found = listAudit(db, { ...read.filter, limit: AUDIT_PAGE_SIZE + 1 });
  const rows = found.slice(0, AUDIT_PAGE_SIZE);
  const businessNames = new Map(businesses.map((business) => [business.id, business.name]));
  const older = found.length > AUDIT_PAGE_SIZE ? `<a href="/console/audit${e(queryOf(sent, rows[rows.length - 1]!.id))}" rel="next">Older</a>` : '';
  const newest = read.filter.beforeId !== undefined ? `<a href="/console/audit${e(queryOf(sent))}">Newest</a>` : '';
  const paging = older || newest ? `<nav aria-label="Pages of the audit trail" class="paging"><p>${[newest, older].filter(Boolean).join(' ')}</p></nav>` : '';
  const table =
    rows.length === 0
      ? `<p>${read.filter.beforeId !== undefined ? 'No older rows.' : 'No audit rows match.'}</p>`
      : `<table><caption class="muted">Writes to the books of ${e(who.accountName)}, newest first (times in UTC)</caption><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Which record</th><th scope="col">Business</th></tr></thead><tbody>${rows
          .map((row) => rowHtml(row, businessNames))
          .join('')}</tbody></table>`;
  const body = `<p>Every write to this account’s books leaves a row here: who made it, what it did, and to which record.</p>
${form}
${table}
${paging}`;
  sendPage(ctx, 200, page(frame, body));
}

/** GET /console/audit: the Audit trail page. */
export function auditRoute(services: Services): AppMiddleware {
  return async (ctx) => {
    const who = signedIn(ctx, services);
    if (!who) return sendSignedOut(ctx);
    auditPage(ctx, services, who);
  };
}
