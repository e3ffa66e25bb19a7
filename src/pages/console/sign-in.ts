import { randomUUID } from 'node:crypto';
import { endSessionCommand, startSessionCommand } from '../../door/commands/console.js';
import { writeNow } from '../../door/door.js';
import { INSTALLATION_REACH } from '../../door/reach.js';
import type { AppContext, AppMiddleware } from '../../http/context.js';
import { addressBudget } from '../../http/address-budget.js';
import type { Services } from '../../services.js';
import { checkSignInLink, consoleActor } from '../../store/console-sessions.js';
import { getTenant } from '../../books/tenants.js';
import { e, page } from './html.js';
import { checkedForm, clearSessionCookie, readForm, sameOrigin, seeOther, sendPage, setSessionCookie, signedIn } from './session.js';

/**
 * Signing in and out. Opening a sign-in link shows a button and changes nothing (link
 * previewers and mail scanners fetch addresses); pressing it uses the link up and starts the
 * session. Sign-in requests count against a budget per client address.
 */

/** Sign-in requests (opening a link and pressing its button) allowed per client address per rate window. */
export const SIGN_IN_REQUESTS_PER_WINDOW = 30;

const CANNOT_USE = '<p>This sign-in link cannot be used: it was used already, has expired, or was never made. On the server, <code>daybook console link --account ID</code> prints a new one.</p>';

function tokenOf(ctx: AppContext): string {
  return (ctx as AppContext & { params: { token: string } }).params.token;
}

/** Counts the request against its client's sign-in budget; past it, answers 429. */
export function signInBudget(services: Services): AppMiddleware {
  return addressBudget(services.counters.consoleSignIns, SIGN_IN_REQUESTS_PER_WINDOW, (ctx) =>
    sendPage(ctx, 429, page({ title: 'Try again later' }, '<p>Too many sign-in attempts from this address. Try again in a few minutes.</p>')),
  );
}

/** GET /console/sign-in/{token}: the button, or why the link cannot be used. */
export function signInPage(services: Services): AppMiddleware {
  return async (ctx) => {
    const checked = checkSignInLink(services.db, services.clock, tokenOf(ctx));
    if ('problem' in checked) return sendPage(ctx, 404, page({ title: 'Sign-in link not usable' }, CANNOT_USE));
    const account = getTenant(services.db, checked.tenantId).name;
    // The form posts to this same address; it carries no token of its own (there is no session yet).
    sendPage(ctx, 200, page({ title: 'Sign in' }, `<p>Sign in to the console of <strong>${e(account)}</strong>.</p><form method="post"><button type="submit">Sign in</button></form>`));
  };
}

/** POST /console/sign-in/{token}: uses the link up, starts the session, sets its cookie. */
export function signIn(services: Services): AppMiddleware {
  return async (ctx) => {
    if (!sameOrigin(ctx)) return sendPage(ctx, 403, page({ title: 'Refused' }, '<p>This sign-in did not come from the sign-in page.</p>'));
    await readForm(ctx);
    const sessionId = randomUUID();
    const writer = { actor: consoleActor(sessionId), reach: INSTALLATION_REACH };
    const started = writeNow(services, writer, startSessionCommand, { token: tokenOf(ctx), sessionId, userAgent: ctx.get('user-agent') || undefined });
    if ('problem' in started) return sendPage(ctx, 404, page({ title: 'Sign-in link not usable' }, CANNOT_USE));
    setSessionCookie(ctx, started.secret);
    seeOther(ctx, '/console/today');
  };
}

/** POST /console/sign-out: ends the session and forgets the cookie. */
export function signOut(services: Services): AppMiddleware {
  return async (ctx) => {
    const who = signedIn(ctx, services);
    if (!who) {
      clearSessionCookie(ctx);
      return seeOther(ctx, '/console/signed-out');
    }
    if (!(await checkedForm(ctx, who))) return;
    writeNow(services, who.writer, endSessionCommand, who.session);
    clearSessionCookie(ctx);
    seeOther(ctx, '/console/signed-out');
  };
}

/** GET /console/signed-out: where signing out leads. */
export function signedOutPage(): AppMiddleware {
  return async (ctx) => {
    sendPage(ctx, 200, page({ title: 'Signed out' }, '<p>You are signed out of the console. A new sign-in link comes from <code>daybook console link --account ID</code> on the server.</p>'));
  };
}
