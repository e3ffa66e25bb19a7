import type { AppMiddleware } from '../../http/context.js';
import type { Services } from '../../services.js';
import { page } from './html.js';
import { sendPage, sendSignedOut, signedIn } from './session.js';

/** GET /console/audit: the Audit trail page. */
export function auditRoute(services: Services): AppMiddleware {
  return async (ctx) => {
    const who = signedIn(ctx, services);
    if (!who) return sendSignedOut(ctx);
    sendPage(ctx, 200, page({ title: 'Audit trail', section: 'audit', accountName: who.accountName, csrf: who.csrf }, '<p>Not built yet.</p>'));
  };
}
