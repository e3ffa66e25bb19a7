import type Router from '@koa/router';
import { referenceBundle, referenceBundlePath, referenceNonce, referencePageCsp, renderReferencePage, REFERENCE_SCRIPT_PATH, REFERENCE_START_PATH, REFERENCE_START_SCRIPT } from './reference.js';
import type { AppContext, RequestState } from '../http/context.js';

/**
 * Mounts GET /docs and its two scripts. Without Redoc's bundle (an install that skipped the
 * build) the page is not served and says so in the log; /openapi/v1.json still is.
 */
export function mountReferencePage(router: Router<RequestState>, warn: (message: string) => void): void {
  const bundlePath = referenceBundlePath();
  if (!bundlePath) {
    warn('GET /docs is not served: Redoc\'s bundle is missing (run npm run build); /openapi/v1.json is');
    return;
  }
  router.get('/docs', (ctx) => {
    const nonce = referenceNonce();
    sendHardened(ctx, 'text/html; charset=utf-8', renderReferencePage(nonce));
    ctx.set('content-security-policy', referencePageCsp(nonce));
    ctx.set('cache-control', 'no-store');
  });
  router.get(REFERENCE_SCRIPT_PATH, (ctx) => {
    sendHardened(ctx, 'application/javascript; charset=utf-8', referenceBundle(bundlePath));
    ctx.set('cache-control', 'public, max-age=86400');
  });
  router.get(REFERENCE_START_PATH, (ctx) => {
    sendHardened(ctx, 'application/javascript; charset=utf-8', REFERENCE_START_SCRIPT);
    ctx.set('cache-control', 'no-cache');
  });
}

function sendHardened(ctx: AppContext, type: string, body: string): void {
  ctx.status = 200;
  ctx.type = type;
  ctx.set('x-content-type-options', 'nosniff');
  ctx.set('x-frame-options', 'DENY');
  ctx.set('referrer-policy', 'no-referrer');
  ctx.body = body;
}
