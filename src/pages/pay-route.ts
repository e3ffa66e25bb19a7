import { getBusiness } from '../books/businesses.js';
import { hasReceivedCardPayment } from '../books/card-payments.js';
import { findCardProcessor } from '../books/card-processors.js';
import { findInvoiceByPayToken, type Invoice, invoiceBalanceCents, UNPAID_STATUSES } from '../books/invoices.js';
import { cardPayable, CheckoutFailed, createCheckoutSession, MINIMUM_CHARGE_CENTS } from '../cards/checkout.js';
import { isPayTokenShaped, payUrl } from '../books/pay-links.js';
import { type CardOffer, PAY_PAGE_CSP, payPageCsp, renderNotFoundPage, renderPayPage, renderTryLaterPage } from './pay.js';
import { invoicePdf } from '../pdf/invoice-attachment.js';
import { PdfRenderFailed } from '../pdf/renderer.js';
import { addressBudget } from '../http/address-budget.js';
import type { AppContext, AppMiddleware } from '../http/context.js';
import { markViewedCommand } from '../door/commands/invoices.js';
import { recordPaidSession } from '../door/card-payments.js';
import { ProcessorRefused, ProcessorUnavailable, retrieveSession } from '../cards/sessions.js';
import { writeNow } from '../door/door.js';
import { PAY_PAGE_ACTOR } from '../store/audit.js';
import type { Services } from '../services.js';

/**
 * Pay-page requests (the page and its PDF) allowed per client address, an IPv6 client by its
 * /64, per rate window. A customer opens a page a few times; past this the answer is 429, so no
 * one holding many links can keep the server drawing PDFs.
 */
export const PAY_PAGE_REQUESTS_PER_WINDOW = 300;

/** Seconds a client is asked to wait when a PDF cannot be drawn now. */
const PDF_RETRY_AFTER_SECONDS = 30;

/** Counts the request against its client's pay-page budget; past it, answers 429 and the route does not run. */
export function payPageBudget(services: Services): AppMiddleware {
  return addressBudget(services.counters.payPages, PAY_PAGE_REQUESTS_PER_WINDOW, (ctx) => sendPage(ctx, 429, renderTryLaterPage()));
}

/**
 * GET /pay/{token}: the customer's page for one invoice, no key needed (the link is the key).
 * A sent invoice becomes viewed the first time its page opens. A token that names no invoice,
 * or an invoice never issued (a draft, or a draft voided), gets one plain 404 page that tells
 * nothing.
 */
export function payPage(services: Services): AppMiddleware {
  return async (ctx) => {
    const token = tokenOf(ctx);
    const invoice = issuedInvoice(services, token);
    if (!invoice) return sendNotFound(ctx);
    if (invoice.status === 'sent') writeNow(services, { actor: PAY_PAGE_ACTOR, reach: { kind: 'pay-link', invoiceId: invoice.id } }, markViewedCommand, { invoiceId: invoice.id });
    const shown = findInvoiceByPayToken(services.db, token)!;
    showPage(ctx, services, 200, shown, token);
  };
}

/**
 * POST /pay/{token}/checkout: the "Pay by card" button. Under the page's token rules and
 * budget, it starts a Checkout Session for the current balance at the business's processor
 * and answers 303 to the processor's hosted page. An invoice with nothing to pay by card
 * (paid, void, a balance the processor cannot charge) or a processor that answers an error
 * gets the page again with a plain sentence; nothing is recorded either way.
 */
export function payCheckout(services: Services): AppMiddleware {
  return async (ctx) => {
    const token = tokenOf(ctx);
    const invoice = issuedInvoice(services, token);
    const processor = invoice && findCardProcessor(services.db, invoice.businessId);
    if (!invoice || !processor) return sendNotFound(ctx);
    const balanceCents = invoiceBalanceCents(invoice);
    if (!UNPAID_STATUSES.includes(invoice.status) || cardPayable(invoice.currency, balanceCents) !== 'yes') {
      const why = balanceCents === 0n ? 'There is nothing left to pay on this invoice; no card was charged.' : 'This invoice cannot be paid by card; no card was charged.';
      return showPage(ctx, services, 409, invoice, token, why);
    }
    if (hasReceivedCardPayment(services.db, invoice.id)) return showPage(ctx, services, 409, invoice, token);
    let session;
    try {
      session = await createCheckoutSession({
        apiUrl: services.config.stripeApiUrl,
        secretKey: processor.secretKey,
        invoice,
        balanceCents,
        pageUrl: payUrl(services.config.siteUrl, token),
      });
    } catch (error) {
      if (!(error instanceof CheckoutFailed)) throw error;
      // The message is the processor's or the network's: it names no secret.
      services.log.warn({ invoiceId: invoice.id, err: error.message }, 'card checkout not started');
      return showPage(ctx, services, 502, invoice, token, NOT_STARTED_NOTICE);
    }
    // The form's redirect may go only where the page's policy allows; a session elsewhere (a
    // custom checkout domain) would be blocked by the browser without a word.
    if (new URL(session.url).origin !== services.config.stripeCheckoutOrigin) {
      services.log.warn({ invoiceId: invoice.id, origin: new URL(session.url).origin }, 'card checkout not started: the session is not on DAYBOOK_STRIPE_CHECKOUT_ORIGIN');
      return showPage(ctx, services, 502, invoice, token, NOT_STARTED_NOTICE);
    }
    ctx.redirect(session.url);
    ctx.status = 303;
    setPageHeaders(ctx);
  };
}

/** What the page says when the processor could not start a checkout: never its own words. */
const NOT_STARTED_NOTICE = 'The card payment could not be started just now; please try again in a few minutes. No card was charged.';

/** What the page says while a card payment of the invoice is received but not yet in the books. */
const RECEIVED_NOTICE = 'A card payment for this invoice has been received and is being recorded; the balance below does not show it yet.';

/**
 * GET /pay/{token}/return?session_id=…: where the processor sends the customer after paying.
 * The session is read from the processor itself (the query is only which one to ask about):
 * a paid session of this invoice is stored and posted, as the webhook would, so a firm whose
 * server the processor cannot reach still gets its payments recorded. Then the page shows the
 * new balance, or says a card payment is being recorded while it waits to be posted.
 */
export function payReturn(services: Services): AppMiddleware {
  return async (ctx) => {
    const token = tokenOf(ctx);
    const invoice = issuedInvoice(services, token);
    if (!invoice) return sendNotFound(ctx);
    const sessionId = ctx.query.session_id;
    const processor = findCardProcessor(services.db, invoice.businessId);
    if (processor && typeof sessionId === 'string' && SESSION_ID.test(sessionId)) await recordReturn(services, invoice, processor.secretKey, sessionId);
    showPage(ctx, services, 200, findInvoiceByPayToken(services.db, token)!, token);
  };
}

/** Checkout Session ids as the processor writes them. */
const SESSION_ID = /^cs_[A-Za-z0-9_]{1,250}$/;

async function recordReturn(services: Services, invoice: Invoice, secretKey: string, sessionId: string): Promise<void> {
  let report;
  try {
    report = await retrieveSession({ apiUrl: services.config.stripeApiUrl, secretKey }, sessionId);
  } catch (error) {
    if (!(error instanceof ProcessorUnavailable) && !(error instanceof ProcessorRefused)) throw error;
    services.log.warn({ invoiceId: invoice.id, err: error.message }, `card payment not checked on return: the processor ${error instanceof ProcessorRefused ? 'refused' : 'did not answer'}`);
    return;
  }
  // A session of another invoice (a link pasted from elsewhere) is not this page's to record.
  if (report.invoiceId !== invoice.id) return;
  await recordPaidSession(services, { actor: PAY_PAGE_ACTOR, reach: { kind: 'pay-link', invoiceId: invoice.id } }, invoice.businessId, report, 'return');
}

/**
 * The pay page of `invoice`, with the card offer its business and balance allow. While a card
 * payment of it is received but not yet posted, the page says so (unless `notice` says
 * something else) and offers no second one.
 */
function showPage(ctx: AppContext, services: Services, status: number, invoice: Invoice, token: string, notice?: string): void {
  const received = hasReceivedCardPayment(services.db, invoice.id);
  if (received) notice ??= RECEIVED_NOTICE;
  const card = received ? undefined : cardOffer(services, invoice, token);
  const html = renderPayPage({
    invoice,
    businessName: getBusiness(services.db, invoice.businessId).name,
    pdfHref: pdfHref(token),
    ...(card ? { card } : {}),
    ...(notice ? { notice } : {}),
  });
  sendPage(ctx, status, html, card?.kind === 'button' ? payPageCsp(services.config.stripeCheckoutOrigin) : PAY_PAGE_CSP);
}

/** What the page offers for paying by card: nothing unless the business takes cards and something is owed. */
function cardOffer(services: Services, invoice: Invoice, token: string): CardOffer | undefined {
  const balanceCents = invoiceBalanceCents(invoice);
  if (!UNPAID_STATUSES.includes(invoice.status) || balanceCents === 0n || !findCardProcessor(services.db, invoice.businessId)) return undefined;
  const payable = cardPayable(invoice.currency, balanceCents);
  if (payable === 'below_minimum') return { kind: 'below_minimum', minimumCents: MINIMUM_CHARGE_CENTS[invoice.currency] };
  if (payable === 'above_maximum') return { kind: 'above_maximum' };
  return { kind: 'button', action: `${token}/checkout` };
}

/**
 * GET /pay/{token}/invoice.pdf: the same invoice as a PDF download, under the page's rules: a
 * link that leads nowhere gets the page's own 404. Downloading changes nothing: the page is
 * what marks an invoice viewed.
 */
export function payPagePdf(services: Services): AppMiddleware {
  return async (ctx) => {
    const token = tokenOf(ctx);
    const invoice = issuedInvoice(services, token);
    if (!invoice) return sendNotFound(ctx);
    let pdf;
    try {
      pdf = await invoicePdf(services.db, invoice, payUrl(services.config.siteUrl, token));
    } catch (error) {
      if (!(error instanceof PdfRenderFailed)) throw error;
      services.log.warn({ invoiceId: invoice.id, err: error }, 'invoice PDF not drawn');
      ctx.set('retry-after', String(PDF_RETRY_AFTER_SECONDS));
      return sendPage(ctx, 503, renderTryLaterPage());
    }
    ctx.status = 200;
    ctx.type = pdf.contentType;
    // The file name is the invoice number (letters, digits and hyphens only): no quoting to escape.
    ctx.set('content-disposition', `attachment; filename="${pdf.filename}"`);
    setPageHeaders(ctx);
    ctx.body = pdf.content;
  };
}

/** Relative to the page's own address (…/pay/{token}), so it holds under any site address. */
function pdfHref(token: string): string {
  return `${token}/invoice.pdf`;
}

function tokenOf(ctx: AppContext): string {
  return (ctx as AppContext & { params: { token: string } }).params.token;
}

/** The invoice the token names, if its customer was ever given the link. */
function issuedInvoice(services: Services, token: string): Invoice | undefined {
  const invoice = isPayTokenShaped(token) ? findInvoiceByPayToken(services.db, token) : undefined;
  return invoice && wasIssued(invoice) ? invoice : undefined;
}

/** A draft, or a draft voided before it was sent, was never issued: its customer never had the link. */
function wasIssued(invoice: { status: string; sentAt: string | null }): boolean {
  return invoice.status !== 'draft' && invoice.sentAt !== null;
}

function sendNotFound(ctx: AppContext): void {
  sendPage(ctx, 404, renderNotFoundPage());
}

function sendPage(ctx: AppContext, status: number, html: string, csp = PAY_PAGE_CSP): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  setPageHeaders(ctx, csp);
  ctx.body = html;
}

function setPageHeaders(ctx: AppContext, csp = PAY_PAGE_CSP): void {
  ctx.set('content-security-policy', csp);
  ctx.set('x-content-type-options', 'nosniff');
  // The token is in the address: no page it leads to may learn it, and no cache may keep it.
  ctx.set('referrer-policy', 'no-referrer');
  ctx.set('cache-control', 'no-store');
  ctx.set('x-frame-options', 'DENY');
}
