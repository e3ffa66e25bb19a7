import type Router from '@koa/router';
import { routeTemplate } from '../../http/access-log.js';
import type { AppContext, AppMiddleware, RequestState } from '../../http/context.js';
import { page } from './html.js';
import type { Services } from '../../services.js';
import { ASSET_ETAGS, CONSOLE_CSS, CONSOLE_ICON, CONSOLE_JS } from './assets.js';
import { auditRoute } from './audit.js';
import { confirmRevokeRoute, createKeyRoute, keysRoute, revokeKeyRoute } from './keys.js';
import { acceptConfidentRoute, acceptItemRoute, confirmConfidentRoute, reviewRoute } from './review.js';
import { seeOther, sendPage } from './session.js';
import { signIn, signInBudget, signInPage, signOut, signedOutPage } from './sign-in.js';
import { todayRoute } from './today.js';

/**
 * The owner's console under /console: server-rendered pages for an account's Owner, signed in
 * with a one-time link (`daybook console link`). The API under /api/v1 never reads its cookie.
 */
export function mountConsole(router: Router<RequestState>, services: Services): void {
  const m = (middleware: unknown) => middleware as never;
  router.use('/console', m(consolePageErrors(services)));
  router.get('/console', (ctx) => seeOther(ctx as never, '/console/today'));
  router.get('/console/assets/console.css', (ctx) => asset(ctx as never, 'text/css; charset=utf-8', CONSOLE_CSS, ASSET_ETAGS.css));
  router.get('/console/assets/console.js', (ctx) => asset(ctx as never, 'text/javascript; charset=utf-8', CONSOLE_JS, ASSET_ETAGS.js));
  router.get('/console/assets/icon.svg', (ctx) => asset(ctx as never, 'image/svg+xml; charset=utf-8', CONSOLE_ICON, ASSET_ETAGS.icon));
  const budget = m(signInBudget(services));
  router.get('/console/sign-in/:token', budget, m(signInPage(services)));
  router.post('/console/sign-in/:token', budget, m(signIn(services)));
  router.post('/console/sign-out', m(signOut(services)));
  router.get('/console/signed-out', m(signedOutPage()));
  router.get('/console/today', m(todayRoute(services)));
  router.get('/console/review', m(reviewRoute(services)));
  router.get('/console/review/accept-confident', m(confirmConfidentRoute(services)));
  router.post('/console/review/accept-confident', m(acceptConfidentRoute(services)));
  router.post('/console/review/:id/accept', m(acceptItemRoute(services)));
  router.get('/console/keys', m(keysRoute(services)));
  router.post('/console/keys', m(createKeyRoute(services)));
  router.get('/console/keys/:id/revoke', m(confirmRevokeRoute(services)));
  router.post('/console/keys/:id/revoke', m(revokeKeyRoute(services)));
  router.get('/console/audit', m(auditRoute(services)));
}

/**
 * A console page that fails gets a page of its own (with the console's headers), not the API's
 * JSON error body; the failure is logged with its stack, as the API's are.
 */
function consolePageErrors(services: Services): AppMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      services.log.error({ err: error, requestId: ctx.state.requestId, method: ctx.method, route: routeTemplate(ctx) }, 'console page failed');
      sendPage(ctx, 500, page({ title: 'Something went wrong' }, '<p>This page could not be shown. Reload it in a moment; if it keeps failing, the server log says why.</p>'));
    }
  };
}

function asset(ctx: AppContext, type: string, body: string, etag: string): void {
  ctx.set('etag', etag);
  ctx.set('cache-control', 'no-cache');
  ctx.set('x-content-type-options', 'nosniff');
  if (ctx.get('if-none-match') === etag) {
    ctx.status = 304;
    return;
  }
  ctx.type = type;
  ctx.body = body;
}
