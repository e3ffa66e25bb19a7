import { isIsoDate } from '../dates.js';
import type { Currency } from '../money.js';

/**
 * The emails Daybook sends to a business's customers, as plain text and as simple HTML (inline
 * styles only: no scripts, no stylesheets, no remote images). Every value is escaped in the
 * HTML; the text version carries values as they are. Anything placed in the subject loses its
 * control characters and line breaks, so a name can never start a header of its own.
 */

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

export interface InvoiceEmailInput {
  businessName: string;
  customerName: string;
  invoiceNumber: string;
  /** Display text, such as "€1,200.00" (formatMoney). */
  amountFormatted: string;
  currency: Currency;
  /** YYYY-MM-DD */
  dueDate: string;
  /** Absolute http(s) URL where the customer pays. */
  payUrl: string;
}

export interface ReminderEmailInput extends InvoiceEmailInput {
  /** What is still owed, as display text. */
  balanceFormatted: string;
  /** Whole days past the due date; zero or less means the invoice is not yet overdue. */
  daysOverdue: number;
}

export function invoiceEmail(input: InvoiceEmailInput): RenderedEmail {
  assertInput(input);
  const { businessName, customerName, invoiceNumber, dueDate, payUrl } = input;
  const amount = `${input.amountFormatted} (${input.currency})`;
  const intro = `${businessName} has sent you invoice ${invoiceNumber}.`;
  const rows: Row[] = [
    ['Invoice', invoiceNumber],
    ['Amount due', amount],
    ['Due date', dueDate],
  ];
  return {
    subject: headerText(`Invoice ${headerText(invoiceNumber)} from ${headerText(businessName)}`),
    text: textBody(customerName, intro, rows, payUrl, businessName),
    html: htmlBody({ heading: `Invoice ${invoiceNumber} from ${businessName}`, customerName, intro, rows, payUrl, invoiceNumber, businessName }),
  };
}

export function reminderEmail(input: ReminderEmailInput): RenderedEmail {
  assertInput(input);
  if (!Number.isSafeInteger(input.daysOverdue)) throw new Error(`reminderEmail: daysOverdue must be a whole number, got ${input.daysOverdue}`);
  const { businessName, customerName, invoiceNumber, dueDate, payUrl, daysOverdue } = input;
  const overdue = daysOverdue > 0;
  const when = overdue
    ? `was due on ${dueDate} and is ${daysOverdue} ${daysOverdue === 1 ? 'day' : 'days'} overdue`
    : `is due on ${dueDate}`;
  const intro = `This is a reminder that invoice ${invoiceNumber} from ${businessName} ${when}.`;
  const rows: Row[] = [
    ['Invoice', invoiceNumber],
    ['Invoice total', `${input.amountFormatted} (${input.currency})`],
    ['Balance due', `${input.balanceFormatted} (${input.currency})`],
    ['Due date', dueDate],
  ];
  const label = overdue ? 'Overdue' : 'Reminder';
  return {
    subject: headerText(`${label}: invoice ${headerText(invoiceNumber)} from ${headerText(businessName)}`),
    text: textBody(customerName, intro, rows, payUrl, businessName, 'If you have already paid, thank you; you can ignore this message.'),
    html: htmlBody({
      heading: `${label}: invoice ${invoiceNumber} from ${businessName}`,
      customerName,
      intro,
      rows,
      payUrl,
      invoiceNumber,
      businessName,
      note: 'If you have already paid, thank you; you can ignore this message.',
    }),
  };
}

type Row = [label: string, value: string];

function assertInput(input: InvoiceEmailInput): void {
  if (!isIsoDate(input.dueDate)) throw new Error(`email template: dueDate must be YYYY-MM-DD, got ${input.dueDate}`);
  let url: URL;
  try {
    url = new URL(input.payUrl);
  } catch {
    throw new Error('email template: payUrl must be an absolute URL');
  }
  // The link goes into an href: a javascript: or data: URL there would be a script.
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('email template: payUrl must be an http(s) URL');
}

function textBody(customerName: string, intro: string, rows: Row[], payUrl: string, businessName: string, note?: string): string {
  const width = Math.max(...rows.map(([label]) => label.length)) + 1;
  const lines = [
    `Hello ${customerName},`,
    '',
    intro,
    '',
    ...rows.map(([label, value]) => `${`${label}:`.padEnd(width)} ${value}`),
    '',
    `Pay online: ${payUrl}`,
    '',
    ...(note ? [note, ''] : []),
    'Thank you,',
    businessName,
    '',
  ];
  return lines.join('\n');
}

interface HtmlParts {
  heading: string;
  customerName: string;
  intro: string;
  rows: Row[];
  payUrl: string;
  invoiceNumber: string;
  businessName: string;
  note?: string;
}

// Dark text on white and white on a dark blue: both well above the WCAG AA contrast ratio.
const BODY_STYLE = 'margin:0;padding:24px;background-color:#ffffff;color:#1a1a1a;font-family:Arial,Helvetica,sans-serif;font-size:16px;line-height:1.5;';
const BUTTON_STYLE = 'display:inline-block;padding:10px 18px;background-color:#1a4fb5;color:#ffffff;font-weight:bold;text-decoration:none;border-radius:4px;';

function htmlBody(parts: HtmlParts): string {
  const e = escapeHtml;
  const cell = 'padding:6px 16px 6px 0;text-align:left;vertical-align:top;';
  const rows = parts.rows
    .map(
      ([label, value]) =>
        `<tr><th scope="row" style="${cell}font-weight:normal;color:#444444;">${e(label)}</th><td style="${cell}font-weight:bold;">${e(value)}</td></tr>`,
    )
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(parts.heading)}</title>
</head>
<body style="${BODY_STYLE}">
<div style="max-width:560px;">
<h1 style="font-size:22px;line-height:1.3;margin:0 0 16px 0;">${e(parts.heading)}</h1>
<p style="margin:0 0 12px 0;">Hello ${e(parts.customerName)},</p>
<p style="margin:0 0 12px 0;">${e(parts.intro)}</p>
<table style="border-collapse:collapse;margin:0 0 20px 0;">
<caption style="text-align:left;font-weight:bold;padding:0 0 4px 0;">Invoice details</caption>
${rows}
</table>
<p style="margin:0 0 12px 0;"><a href="${e(parts.payUrl)}" style="${BUTTON_STYLE}">Pay invoice ${e(parts.invoiceNumber)}</a></p>
<p style="margin:0 0 20px 0;font-size:14px;color:#444444;">If the button does not work, open this link: <a href="${e(parts.payUrl)}" style="color:#1a4fb5;">${e(parts.payUrl)}</a></p>
${parts.note ? `<p style="margin:0 0 12px 0;">${e(parts.note)}</p>\n` : ''}<p style="margin:0;">Thank you,<br>${e(parts.businessName)}</p>
</div>
</body>
</html>
`;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!);
}

/**
 * Text made safe for a header: each run of control characters (CR and LF among them) and of
 * line or paragraph separators becomes one space, and the ends are trimmed.
 */
export function headerText(value: string): string {
  return value.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ').trim();
}
