import type { AppMiddleware } from '../../http/context.js';
import type { Services } from '../../services.js';
import { page } from './html.js';
import { sendPage, sendSignedOut, signedIn } from './session.js';

/** GET /console/today: the Today page. */
export function todayRoute(services: Services): AppMiddleware {
  return async (ctx) => {
    const who = signedIn(ctx, services);
    if (!who) return sendSignedOut(ctx);
    sendPage(ctx, 200, page({ title: 'Today', section: 'today', accountName: who.accountName, csrf: who.csrf }, '<p>Not built yet.</p>'));
  };
}
