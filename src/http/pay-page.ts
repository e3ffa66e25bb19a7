import { getBusiness } from '../books/businesses.js';
import { findInvoiceByPayToken } from '../books/invoices.js';
import { markViewed } from '../books/invoice-posting.js';
import { isPayTokenShaped } from '../books/pay-links.js';
import { inTransaction } from '../db/connection.js';
import { PAY_PAGE_CSP, renderNotFoundPage, renderPayPage } from '../pages/pay.js';
import type { AppContext, AppMiddleware, Services } from './context.js';

/**
 * GET /pay/{token}: the customer's page for one invoice, no key needed (the link is the key).
 * A sent invoice becomes viewed the first time its page opens. A token that names no invoice,
 * or an invoice never issued (a draft, or a draft voided), gets one plain 404 page that tells
 * nothing.
 */
export function payPage(services: Services): AppMiddleware {
  return async (ctx) => {
    const token = (ctx as AppContext & { params: { token: string } }).params.token;
    const invoice = isPayTokenShaped(token) ? findInvoiceByPayToken(services.db, token) : undefined;
    if (!invoice || !wasIssued(invoice)) return sendPage(ctx, 404, renderNotFoundPage());
    if (invoice.status === 'sent') inTransaction(services.db, () => markViewed(services.db, services.clock, invoice.id));
    const shown = findInvoiceByPayToken(services.db, token)!;
    sendPage(ctx, 200, renderPayPage({ invoice: shown, businessName: getBusiness(services.db, shown.businessId).name }));
  };
}

/** A draft, or a draft voided before it was sent, was never issued: its customer never had the link. */
function wasIssued(invoice: { status: string; sentAt: string | null }): boolean {
  return invoice.status !== 'draft' && invoice.sentAt !== null;
}

function sendPage(ctx: AppContext, status: number, html: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('content-security-policy', PAY_PAGE_CSP);
  ctx.set('x-content-type-options', 'nosniff');
  // The token is in the address: no page it leads to may learn it, and no cache may keep it.
  ctx.set('referrer-policy', 'no-referrer');
  ctx.set('cache-control', 'no-store');
  ctx.set('x-frame-options', 'DENY');
  ctx.body = html;
}
