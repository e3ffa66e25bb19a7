import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../../http/context.js';
import type { Services } from '../../services.js';
import { type ConsoleSession, consoleActor, csrfToken, csrfTokenMatches, findLiveSession, SESSION_LIFETIME_MS, touchSession } from '../../store/console-sessions.js';
import type { Writer } from '../../door/door.js';
import { getTenant } from '../../books/tenants.js';
import { CONSOLE_CSP, page } from './html.js';

/**
 * A console request's session: the cookie, checked against the stored fingerprints; the CSRF
 * token every form carries; and the checks every POST passes before it may write.
 */

/** Over https the cookie is `__Host-` prefixed (Secure, Path=/, no Domain: this host only). */
const PLAIN_COOKIE = 'daybook_console';
const HOST_COOKIE = '__Host-daybook_console';

/** The largest form the console accepts: its forms are a few fields. */
const MAX_FORM_BYTES = 16_384;

export interface SignedIn {
  session: ConsoleSession;
  /** The cookie's value, from which the CSRF token is derived. */
  secret: string;
  csrf: string;
  accountName: string;
  writer: Writer;
}

function secure(ctx: AppContext): boolean {
  return ctx.state.client?.scheme === 'https';
}

function cookieName(ctx: AppContext): string {
  return secure(ctx) ? HOST_COOKIE : PLAIN_COOKIE;
}

/** The session cookie's value as sent, if any (read by hand: one cookie, no library needed). */
function cookieValue(ctx: AppContext): string | undefined {
  const name = cookieName(ctx);
  for (const part of (ctx.get('cookie') || '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

export function setSessionCookie(ctx: AppContext, secret: string): void {
  const attributes = ['Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${SESSION_LIFETIME_MS / 1000}`, ...(secure(ctx) ? ['Secure'] : [])];
  ctx.append('set-cookie', `${cookieName(ctx)}=${secret}; ${attributes.join('; ')}`);
}

export function clearSessionCookie(ctx: AppContext): void {
  ctx.append('set-cookie', `${cookieName(ctx)}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure(ctx) ? '; Secure' : ''}`);
}

/** The live session of the request, or undefined (no cookie, or one that signs no one in now). */
export function signedIn(ctx: AppContext, services: Services): SignedIn | undefined {
  const secret = cookieValue(ctx);
  if (secret === undefined) return undefined;
  const session = findLiveSession(services.db, services.clock, secret);
  if (!session) return undefined;
  touchSession(services.db, services.clock, session);
  return {
    session,
    secret,
    csrf: csrfToken(secret),
    accountName: getTenant(services.db, session.tenantId).name,
    writer: { actor: consoleActor(session.id), reach: { kind: 'console', tenantId: session.tenantId } },
  };
}

/**
 * Whether a POST comes from the console's own pages. A browser says where a request comes from:
 * `Sec-Fetch-Site` when it sends it (every current one does), which must be `same-origin`;
 * otherwise `Origin`, which must be this server's (the pages' `Referrer-Policy: same-origin`
 * lets a browser send it; under `no-referrer` it would say `null`). A cross-site request is
 * refused whatever it carries; one that says neither (not a browser) is left to the CSRF token.
 */
export function sameOrigin(ctx: AppContext): boolean {
  const site = ctx.get('sec-fetch-site');
  if (site !== '') return site === 'same-origin';
  const origin = ctx.get('origin');
  if (origin === '') return true;
  return origin === `${secure(ctx) ? 'https' : 'http'}://${ctx.get('host')}`;
}

/** The form's fields (application/x-www-form-urlencoded), or null when the body is not one or too large. */
export async function readForm(ctx: AppContext): Promise<URLSearchParams | null> {
  if (!ctx.is('application/x-www-form-urlencoded')) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return null;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** The form of a signed-in POST whose origin and CSRF token check out; otherwise the 403 page is sent and null returned. */
export async function checkedForm(ctx: AppContext, who: SignedIn): Promise<URLSearchParams | null> {
  const fields = sameOrigin(ctx) ? await readForm(ctx) : null;
  if (fields === null || !csrfTokenMatches(who.secret, fields.get('_csrf'))) {
    sendPage(ctx, 403, page({ title: 'Refused' }, '<p>This form did not come from your console, or it has expired. Go back, reload the page, and try again.</p>'));
    return null;
  }
  return fields;
}

/** Sends a console page with the console's headers: its policy, no caching, no framing, no referrer. */
export function sendPage(ctx: AppContext, status: number, html: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  setHeaders(ctx);
  ctx.body = html;
}

export function setHeaders(ctx: AppContext): void {
  ctx.set('content-security-policy', CONSOLE_CSP);
  ctx.set('x-content-type-options', 'nosniff');
  // Same-origin requests carry their origin (the POST check needs it); no other site learns an address.
  ctx.set('referrer-policy', 'same-origin');
  ctx.set('cache-control', 'no-store');
  ctx.set('x-frame-options', 'DENY');
}

/** What a page says above its content after a write: what happened, or why nothing did. */
export interface Notice {
  text: string;
  kind: 'ok' | 'problem';
}

/**
 * A notice a POST leaves for the page it redirects to travels in the address, signed with the
 * session's secret: a link made elsewhere cannot put words in the console's mouth.
 */
function noticeSignature(who: SignedIn, message: Notice): string {
  return createHmac('sha256', who.secret).update(`daybook console notice\u0000${message.kind}\u0000${message.text}`).digest('base64url');
}

/** The query parameters carrying `message` to the next page. */
export function noticeQuery(who: SignedIn, message: Notice): [string, string][] {
  return [
    ['notice', message.text],
    ['kind', message.kind],
    ['sig', noticeSignature(who, message)],
  ];
}

/** The notice the address carries, if its signature is this session's. */
export function noticeFrom(ctx: AppContext, who: SignedIn): Notice | undefined {
  const { notice: text, kind, sig } = ctx.query;
  if (typeof text !== 'string' || typeof sig !== 'string' || (kind !== 'ok' && kind !== 'problem')) return undefined;
  const expected = Buffer.from(noticeSignature(who, { text, kind }));
  const given = Buffer.from(sig);
  return given.length === expected.length && timingSafeEqual(given, expected) ? { text, kind } : undefined;
}

/** After a POST: on to a page by GET (303), so reloading it does not send the form again. */
export function seeOther(ctx: AppContext, location: string): void {
  ctx.status = 303;
  ctx.redirect(location);
  ctx.status = 303;
  setHeaders(ctx);
}

/** The page a request without a live session gets: how to sign in. */
export function sendSignedOut(ctx: AppContext): void {
  sendPage(
    ctx,
    401,
    page(
      { title: 'Signed out' },
      '<p>You are not signed in to the console, or your session has ended (signed out, revoked, 12 hours without use, or 7 days old).</p><p>On the server, <code>daybook console link --account ID</code> prints a new sign-in link.</p>',
    ),
  );
}
