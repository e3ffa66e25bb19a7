import { createHash } from 'node:crypto';
import { type Invoice, invoiceBalanceCents } from '../books/invoices.js';
import { formatMoney } from '../money.js';
import { escapeHtml } from '../books/invoice-mail.js';

/**
 * The customer's pay page: the invoice as a plain, accessible HTML page with no script. Every
 * stored text is escaped; the one stylesheet is inline and allowed by its hash alone, so the
 * Content-Security-Policy can refuse everything else.
 */

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f5f5f2;color:#1d1d1b;line-height:1.5}
main{max-width:44rem;margin:2rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.5rem;margin:0 0 .25rem}
.muted{color:#5c5c57}
table{width:100%;border-collapse:collapse;margin:1.5rem 0}
th,td{text-align:left;padding:.5rem .25rem;border-bottom:1px solid #e2e2dc;vertical-align:top}
td{overflow-wrap:anywhere}
th.num{text-align:right}
td.num{text-align:right;white-space:nowrap}
.totals td{border:none;padding:.2rem .25rem}
.due{font-size:1.25rem;font-weight:600}
.notice{padding:.75rem 1rem;border-radius:6px;background:#eef4ee;margin:1rem 0}
.notice.void{background:#f6e9e7}
.pay-card{margin:1rem 0}
.pay-card button{font:inherit;font-weight:600;padding:.75rem 1.5rem;border:0;border-radius:6px;background:#1f5f3f;color:#fff;cursor:pointer}
.pay-card button:focus-visible{outline:3px solid #1d1d1b;outline-offset:2px}
@media (max-width:32rem){main{margin:0;padding:1.25rem 1rem;border-radius:0;box-shadow:none}table{font-size:.9375rem}}
@media print{
body{background:#fff;color:#000}
main{max-width:none;margin:0;padding:0;border-radius:0;box-shadow:none}
.muted{color:#000}
th,td{border-bottom-color:#999}
.notice,.notice.void{background:none;border:1px solid #000}
thead{display:table-header-group}
tr{break-inside:avoid}
h1,h2,caption{break-after:avoid}
a[href$=".pdf"],button,form,nav,.screen-only{display:none}
}
`;

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/**
 * Nothing may load or run but the page's own stylesheet, and the page may not be framed. A form
 * may submit nowhere, except the "Pay by card" form of a business taking cards: to the page's
 * own server, and on to the processor's checkout page it redirects to (browsers check the
 * redirect of a form against form-action too).
 */
export function payPageCsp(checkoutOrigin: string | null = null): string {
  const forms = checkoutOrigin === null ? "'none'" : `'self' ${checkoutOrigin}`;
  return `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'none'; base-uri 'none'; form-action ${forms}; frame-ancestors 'none'`;
}

export const PAY_PAGE_CSP = payPageCsp();

/** What the page says about paying by card, for a business that takes cards. */
export type CardOffer =
  /** A button posting to {token}/checkout. */
  | { kind: 'button'; action: string }
  | { kind: 'below_minimum'; minimumCents: bigint }
  | { kind: 'above_maximum' };

/** What the pay page shows besides the invoice. */
export interface PayPageView {
  invoice: Invoice;
  businessName: string;
  /** Where the invoice's PDF downloads from, relative to the page ({token}/invoice.pdf). */
  pdfHref: string;
  /** Only for a business that takes cards and an invoice with a balance. */
  card?: CardOffer;
  /** A sentence above the invoice: why a card payment could not start, or that one was received. */
  notice?: string;
}

function cardPart(card: CardOffer | undefined, balance: string, currency: string): string {
  if (!card) return '';
  if (card.kind === 'button') {
    return `<form class="pay-card" method="post" action="${escapeHtml(card.action)}"><button type="submit">Pay ${balance} by card</button></form>`;
  }
  if (card.kind === 'below_minimum') {
    return `<p class="muted">A balance this small cannot be paid by card (the least a card payment can be is ${escapeHtml(formatMoney(card.minimumCents, currency as never))}).</p>`;
  }
  return '<p class="muted">A balance this large cannot be paid by card in one payment.</p>';
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

export function renderPayPage(view: PayPageView): string {
  const { invoice } = view;
  const money = (cents: bigint) => escapeHtml(formatMoney(cents, invoice.currency));
  const balanceCents = invoiceBalanceCents(invoice);
  const rows = invoice.lines
    .map(
      (line) =>
        `<tr><td>${escapeHtml(line.description)}</td><td class="num">${escapeHtml(line.quantity)}</td><td class="num">${money(line.unitPriceCents)}</td><td class="num">${money(line.amountCents)}</td></tr>`,
    )
    .join('\n');
  const payments = invoice.payments
    .map((payment) => `<li>${money(payment.amountCents)} received on ${escapeHtml(payment.paidAt)} (${escapeHtml(payment.method)})</li>`)
    .join('\n');
  const standing =
    invoice.status === 'void'
      ? '<p class="notice void" role="status">This invoice was voided. Nothing is owed on it.</p>'
      : balanceCents === 0n
        ? '<p class="notice" role="status">This invoice is paid in full. Thank you.</p>'
        : `<p class="due">Amount due: ${money(balanceCents)} by ${escapeHtml(invoice.dueDate)}</p>
${cardPart(view.card, money(balanceCents), invoice.currency)}
<p class="muted">${view.card?.kind === 'button' ? 'Or pay with' : 'To pay, use'} the payment details ${escapeHtml(view.businessName)} gave you, quoting ${escapeHtml(invoice.number)}.</p>`;
  const body = `<header>
<p class="muted">${escapeHtml(view.businessName)}</p>
<h1>Invoice ${escapeHtml(invoice.number)}</h1>
<p class="muted">For ${escapeHtml(invoice.customer.name)} · issued ${escapeHtml(invoice.issueDate)} · due ${escapeHtml(invoice.dueDate)} · ${escapeHtml(invoice.currency)}</p>
</header>
${view.notice ? `<p class="notice" role="status">${escapeHtml(view.notice)}</p>\n` : ''}${standing}
<table>
<caption class="muted">What this invoice is for</caption>
<thead><tr><th scope="col">Description</th><th scope="col" class="num">Quantity</th><th scope="col" class="num">Unit price</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
<table class="totals">
<tbody>
<tr><td>Subtotal</td><td class="num">${money(invoice.subtotalCents)}</td></tr>
<tr><td>Tax</td><td class="num">${money(invoice.taxCents)}</td></tr>
<tr><td><strong>Total</strong></td><td class="num"><strong>${money(invoice.totalCents)}</strong></td></tr>
<tr><td>Paid</td><td class="num">${money(invoice.paidCents)}</td></tr>
<tr><td><strong>Balance</strong></td><td class="num"><strong>${money(balanceCents)}</strong></td></tr>
</tbody>
</table>
<p><a href="${escapeHtml(view.pdfHref)}">Download PDF</a></p>
${payments ? `<h2>Payments</h2>\n<ul>\n${payments}\n</ul>` : ''}
${invoice.memo ? `<h2>Note</h2>\n<p>${escapeHtml(invoice.memo)}</p>` : ''}`;
  return page(`Invoice ${invoice.number} from ${view.businessName}`, body);
}

/** Too many pay-page requests from one address, or the invoice's PDF could not be drawn now. */
export function renderTryLaterPage(): string {
  return page('Try again later', '<h1>Try again later</h1>\n<p class="muted">This page cannot be shown right now. Please try again in a few minutes.</p>');
}

/** The same page for every link that leads nowhere: it says nothing about why. */
export function renderNotFoundPage(): string {
  return page('Not found', '<h1>Not found</h1>\n<p class="muted">There is no page at this address.</p>');
}
