import { listBusinesses } from '../../books/businesses.js';
import { type ApiKeyInfo, getKey, listKeys } from '../../books/keys.js';
import { PLANS } from '../../books/plans.js';
import { countActiveKeys, getTenant } from '../../books/tenants.js';
import { todayUtc } from '../../clock.js';
import { createKeyCommand, revokeKeyCommand } from '../../door/commands/accounts.js';
import { writeNow } from '../../door/door.js';
import { ApiError } from '../../errors.js';
import type { AppContext, AppMiddleware } from '../../http/context.js';
import type { Services } from '../../services.js';
import { e, form, notice, page, select } from './html.js';
import { checkedForm, type Notice, noticeFrom, noticeQuery, seeOther, sendPage, sendSignedOut, type SignedIn, signedIn } from './session.js';

/**
 * API keys in the console: every key of the account with its access, businesses, expiry,
 * creation, the day it was last used (noted in memory and written in batches with the request
 * counters, never a write per request) and state; a new key's value shown once, in the answer to its create; a key revoked
 * after a confirmation. The plan's key limit applies as in `daybook key create`.
 */

const ACCESS_OPTIONS = [
  ['read', 'Read only'],
  ['read_write', 'Read and write'],
] as const;

/** The advice of the spec's auth rule 10, beside every key shown once. */
const KEY_ADVICE =
  'This key is shown once and cannot be shown again: store it now in the software that uses it, or in a secret manager. One key per piece of software. Never put a key in a browser, a mobile app, a repository, a chat or a ticket. To rotate: create the new key, switch the software to it, check it works, then revoke the old one.';

function keyState(key: ApiKeyInfo, today: string): string {
  if (key.revokedAt !== null) return `Revoked ${key.revokedAt.slice(0, 10)}`;
  if (key.expiresOn !== null && key.expiresOn < today) return `Expired ${key.expiresOn}`;
  return 'Active';
}

function keysPage(services: Services, who: SignedIn, status: number, ctx: AppContext, message?: Notice): void {
  const { db, clock } = services;
  const tenant = getTenant(db, who.session.tenantId);
  const businesses = listBusinesses(db, tenant.id);
  const names = new Map(businesses.map((business) => [business.id, business.name]));
  const today = todayUtc(clock);
  const keys = listKeys(db, tenant.id);
  const lastUsed = services.counters.keysLastUsed(keys.map((key) => key.id));
  const rows = keys
    .map((key) => {
      const state = keyState(key, today);
      const revoke = key.revokedAt === null ? `<a href="/console/keys/${e(key.id)}/revoke">Revoke<span class="visually-hidden"> ${e(key.name)}</span></a>` : '';
      const reach = key.businessIds === null ? 'All businesses' : key.businessIds.map((id) => names.get(id) ?? id).join(', ');
      return `<tr><td>${e(key.name)}</td><td>${key.access === 'read' ? 'Read only' : 'Read and write'}</td><td>${e(reach)}</td><td>${e(key.expiresOn ?? 'Never')}</td><td>${e(key.createdAt.slice(0, 10))}</td><td>${e(lastUsed.get(key.id) ?? 'Never')}</td><td>${e(state)}</td><td>${revoke}</td></tr>`;
    })
    .join('');
  const limit = PLANS[tenant.plan].activeKeys;
  const active = countActiveKeys(db, tenant.id);
  const table = keys.length === 0 ? '<p>No keys yet.</p>' : `<table><caption class="muted">Keys of ${e(tenant.name)}</caption><thead><tr><th scope="col">Name</th><th scope="col">Access</th><th scope="col">Businesses</th><th scope="col">Expires</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>`;
  const businessBoxes = businesses
    .map((business) => `<label class="inline"><input type="checkbox" name="business" value="${e(business.id)}"> ${e(business.name)}</label><br>`)
    .join('');
  const create = form(
    '/console/keys',
    who.csrf,
    `<label for="field-name">Name (what uses the key)</label><input type="text" id="field-name" name="name" required maxlength="200" autocomplete="off">
${select('access', 'Access', ACCESS_OPTIONS, 'read')}
<fieldset><legend>Businesses (none ticked: all of them)</legend>${businessBoxes}</fieldset>
<label for="field-expires">Last day it works (optional)</label><input type="date" id="field-expires" name="expires">
<p><button type="submit">Create key</button></p>`,
  );
  const body = `${message ? notice(message.text, message.kind) : ''}
<p>${active} of ${limit} keys in use (the ${e(tenant.plan)} plan's limit; an expired key counts until it is revoked).</p>
${table}
<h2>Create a key</h2>
${active >= limit ? notice(`The ${tenant.plan} plan allows ${limit} active keys: revoke one before creating another.`, 'problem') : create}`;
  sendPage(ctx, status, page({ title: 'API keys', section: 'keys', accountName: tenant.name, csrf: who.csrf }, body));
}

/** GET /console/keys */
export function keysRoute(services: Services): AppMiddleware {
  return async (ctx) => {
    const who = signedIn(ctx, services);
    if (!who) return sendSignedOut(ctx);
    keysPage(services, who, 200, ctx, noticeFrom(ctx, who));
  };
}

/** POST /console/keys: creates the key and shows its value, this once. */
export function createKeyRoute(services: Services): AppMiddleware {
  return async (ctx) => {
    const who = signedIn(ctx, services);
    if (!who) return sendSignedOut(ctx);
    const fields = await checkedForm(ctx, who);
    if (!fields) return;
    const access = fields.get('access') === 'read_write' ? 'read_write' : 'read';
    let created;
    try {
      created = writeNow(services, who.writer, createKeyCommand, {
        tenantId: who.session.tenantId,
        name: (fields.get('name') ?? '').trim(),
        access,
        businessIds: fields.getAll('business'),
        expiresOn: fields.get('expires') || null,
      });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return keysPage(services, who, error.status, ctx, { text: `No key was created: ${error.message}`, kind: 'problem' });
    }
    const body = `${notice(`Key "${created.name}" created.`)}
<p><strong>The key:</strong></p>
<p class="secret" id="new-key">${e(created.key)}</p>
<p><button type="button" data-copy="new-key" hidden>Copy the key</button></p>
<p>${e(KEY_ADVICE)}</p>
${created.alreadyExpired ? notice(`Its last day, ${created.expiresOn}, has passed: the key exists but cannot authenticate.`, 'problem') : ''}
<p><a href="/console/keys">Back to the keys</a></p>`;
    sendPage(ctx, 201, page({ title: 'Key created', section: 'keys', accountName: who.accountName, csrf: who.csrf }, body));
  };
}

/** A key of the signed-in account, or undefined (another account's key is as if it did not exist). */
function findOwnKey(services: Services, who: SignedIn, id: string): ApiKeyInfo | undefined {
  try {
    const key = getKey(services.db, id);
    return key.tenantId === who.session.tenantId ? key : undefined;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'not_found') return undefined;
    throw error;
  }
}

function keyIdOf(ctx: AppContext): string {
  return (ctx as AppContext & { params: { id: string } }).params.id;
}

/** GET /console/keys/{id}/revoke: the confirmation. */
export function confirmRevokeRoute(services: Services): AppMiddleware {
  return async (ctx) => {
    const who = signedIn(ctx, services);
    if (!who) return sendSignedOut(ctx);
    const key = findOwnKey(services, who, keyIdOf(ctx));
    if (!key) return sendPage(ctx, 404, page({ title: 'No such key', section: 'keys', accountName: who.accountName, csrf: who.csrf }, '<p><a href="/console/keys">Back to the keys</a></p>'));
    const body = `<p>Revoke the key "${e(key.name)}"? Every request that uses it is refused from the next one (401). This cannot be undone: software that still uses it needs a new key.</p>
${form(`/console/keys/${key.id}/revoke`, who.csrf, `<button type="submit" class="danger">Revoke "${e(key.name)}"</button> <a href="/console/keys">Keep it</a>`)}`;
    sendPage(ctx, 200, page({ title: 'Revoke a key', section: 'keys', accountName: who.accountName, csrf: who.csrf }, body));
  };
}

/** POST /console/keys/{id}/revoke */
export function revokeKeyRoute(services: Services): AppMiddleware {
  return async (ctx) => {
    const who = signedIn(ctx, services);
    if (!who) return sendSignedOut(ctx);
    if (!(await checkedForm(ctx, who))) return;
    let revoked;
    try {
      revoked = writeNow(services, who.writer, revokeKeyCommand, { id: keyIdOf(ctx) });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return keysPage(services, who, error.status, ctx, { text: `Nothing was revoked: ${error.message}`, kind: 'problem' });
    }
    const text = revoked.alreadyRevoked ? `Key "${revoked.name}" was revoked already.` : `Key "${revoked.name}" revoked: it stops working on its next request.`;
    const said = new URLSearchParams(noticeQuery(who, { text, kind: 'ok' }));
    seeOther(ctx, `/console/keys?${said.toString()}`);
  };
}
