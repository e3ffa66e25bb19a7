import { createRequire } from 'node:module';
import { type Invoice, invoiceBalanceCents, MAX_INVOICE_LINES, termsText } from '../books/invoices.js';
import { isIsoDate } from '../dates.js';
import { type Currency, formatMoney } from '../money.js';

/**
 * The invoice as a PDF, for the customer: what the pay page shows, laid out for paper. Text is
 * real text in an embedded font (DejaVu Sans, shipped as an npm package, so the container and
 * CI have it; it covers €, £ and the accented Latin letters), so it can be selected, searched
 * and read aloud. Long descriptions wrap, many lines flow onto further pages with the column
 * headings repeated, and the totals always follow the last line. The same invoice always gives
 * the same bytes: the document's dates are the invoice's issue date, never the time it was made.
 * Nothing here knows of HTTP or the database.
 */

export interface InvoicePdfInput {
  invoice: Invoice;
  business: { name: string };
  /** The customer's postal address, one line each; empty when none is kept. */
  customerAddressLines: readonly string[];
  /** Absolute http(s) URL of the invoice's pay page. */
  payUrl: string;
}

export type PaperSize = 'LETTER' | 'A4';

/** Points (1/72 inch), as pdfkit and the PDF's MediaBox give them. */
export const PAPER_POINTS: Record<PaperSize, { width: number; height: number }> = {
  LETTER: { width: 612, height: 792 },
  A4: { width: 595.28, height: 841.89 },
};

/**
 * Letter where the invoice's currency is that of a country printing on Letter (the United
 * States, Canada, Mexico), A4 everywhere else. A business keeps no paper setting and its books
 * are in US dollars, so the invoice's currency is the best sign of where it will be printed.
 */
const PAPER_BY_CURRENCY: Record<Currency, PaperSize> = { USD: 'LETTER', CAD: 'LETTER', MXN: 'LETTER', EUR: 'A4', GBP: 'A4' };

export function paperSizeFor(currency: Currency): PaperSize {
  return PAPER_BY_CURRENCY[currency];
}

/** The attachment's and the download's file name: the invoice number, e.g. INV-0001.pdf. */
export function invoicePdfFilename(invoiceNumber: string): string {
  // It goes into a Content-Disposition header and a MIME part: only plain characters.
  if (!/^[A-Za-z0-9-]{1,40}$/.test(invoiceNumber)) throw new Error(`invoicePdfFilename: unexpected invoice number ${JSON.stringify(invoiceNumber)}`);
  return `${invoiceNumber}.pdf`;
}

const require = createRequire(import.meta.url);
const FONT_FILES = {
  regular: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'),
  bold: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf'),
} as const;
const REGULAR = 'DejaVuSans';
const BOLD = 'DejaVuSans-Bold';

const MARGIN = 54;
const GAP = 10;
const ROW_PADDING = 4;
const SIZE = { title: 18, heading: 11, body: 10, table: 9, small: 8 } as const;
const COLOUR = { text: '#1d1d1b', muted: '#5c5c57', rule: '#c8c8c2', link: '#1a4fb5' } as const;
/** Widest a figure column grows before its figure wraps (never cut) to leave the description room. */
const MAX_QUANTITY_WIDTH = 90;
const MAX_MONEY_WIDTH = 130;

/**
 * The most description text one PDF lays out. Laying out text is what a render spends its time
 * on, and the spec allows 500 lines of 2,000 characters (a million characters, seconds of work):
 * past this bound the PDF lists the lines up to it and says how many more the pay page shows.
 * The totals are always the whole invoice's.
 */
export const MAX_PDF_DESCRIPTION_CHARACTERS = 200_000;

/** The invoice as PDF bytes. */
export async function renderInvoicePdf(input: InvoicePdfInput): Promise<Buffer> {
  return drawDocument(input, (sheet) => {
    drawLines(sheet, input);
    drawTotals(sheet, input.invoice);
    drawPayments(sheet, input.invoice);
    drawMemo(sheet, input.invoice);
    drawPayLink(sheet, input);
    drawPageNumbers(sheet);
  });
}

/** A void invoice's document: its heading and parties and that nothing is owed, on one page, without its lines. */
export async function renderVoidInvoicePdf(input: InvoicePdfInput): Promise<Buffer> {
  if (input.invoice.status !== 'void') throw new Error(`renderVoidInvoicePdf: invoice ${input.invoice.number} is ${input.invoice.status}, not void`);
  return drawDocument(input, () => {});
}

/** The document's heading, parties and standing (void, paid), then `rest`; its bytes once ended. */
async function drawDocument(input: InvoicePdfInput, rest: (sheet: Sheet) => void): Promise<Buffer> {
  assertInput(input);
  // Loaded on the first render (the renderer's worker): a module importing this one for its
  // helpers (the file name, the paper size) does not load pdfkit's 30 MB.
  const { default: PDFDocument } = await import('pdfkit');
  const doc = newDocument(PDFDocument, input);
  const done = collect(doc);
  const sheet = new Sheet(doc, input.invoice.number);
  drawHeading(sheet, input);
  drawParties(sheet, input);
  drawStanding(sheet, input.invoice);
  rest(sheet);
  doc.end();
  return done;
}

/** How many of the invoice's lines fit within MAX_PDF_DESCRIPTION_CHARACTERS (always at least one). */
export function linesShownInPdf(lines: readonly { description: string }[]): number {
  let characters = 0;
  for (const [index, line] of lines.entries()) {
    characters += line.description.length;
    if (characters > MAX_PDF_DESCRIPTION_CHARACTERS && index > 0) return index;
  }
  return lines.length;
}

function assertInput(input: InvoicePdfInput): void {
  const { invoice } = input;
  if (!isIsoDate(invoice.issueDate) || !isIsoDate(invoice.dueDate)) throw new Error('renderInvoicePdf: the invoice’s dates must be YYYY-MM-DD');
  if (invoice.lines.length === 0 || invoice.lines.length > MAX_INVOICE_LINES) throw new Error(`renderInvoicePdf: an invoice has 1 to ${MAX_INVOICE_LINES} lines, not ${invoice.lines.length}`);
  const url = new URL(input.payUrl);
  // It becomes a link annotation: a javascript: or file: URL there would be an action, not a page.
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('renderInvoicePdf: payUrl must be an http(s) URL');
}

function newDocument(PDFDocument: typeof import('pdfkit'), input: InvoicePdfInput): PDFKit.PDFDocument {
  const { invoice } = input;
  // The issue date, not the time of rendering: the same invoice gives the same bytes.
  const issued = new Date(`${invoice.issueDate}T00:00:00.000Z`);
  const doc = new PDFDocument({
    size: paperSizeFor(invoice.currency),
    margin: MARGIN,
    bufferPages: true,
    // The regular face is the default from the start, so no standard (unembedded) font is ever loaded.
    font: FONT_FILES.regular,
    lang: 'en',
    displayTitle: true,
    info: {
      Title: `Invoice ${invoice.number} from ${input.business.name}`,
      Author: input.business.name,
      Subject: `Invoice ${invoice.number} for ${invoice.customer.name}`,
      Creator: 'Daybook',
      Producer: 'Daybook',
      CreationDate: issued,
      ModDate: issued,
    },
  });
  doc.registerFont(REGULAR, FONT_FILES.regular);
  doc.registerFont(BOLD, FONT_FILES.bold);
  return doc;
}

function collect(doc: PDFKit.PDFDocument): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
}

/**
 * Where the next block goes: the left edge, the usable width and the current height, with a
 * page break whenever a block would not fit above the bottom margin. Continuation pages start
 * with the invoice number, so a loose page still says what it belongs to.
 */
class Sheet {
  readonly left: number;
  readonly width: number;
  y: number;

  constructor(
    readonly doc: PDFKit.PDFDocument,
    readonly invoiceNumber: string,
  ) {
    this.left = doc.page.margins.left;
    this.width = doc.page.width - doc.page.margins.left - doc.page.margins.right;
    this.y = doc.page.margins.top;
  }

  get bottom(): number {
    return this.doc.page.height - this.doc.page.margins.bottom;
  }

  /** Room for `height` more points on this page, or a new page. Returns true when a page was added. */
  ensureRoom(height: number): boolean {
    if (this.y + height <= this.bottom) return false;
    this.newPage();
    return true;
  }

  /** The height a page starts with below its continuation line. */
  freshPageRoom(): number {
    return this.bottom - this.doc.page.margins.top - this.continuationHeight();
  }

  private continuationHeight(): number {
    return lineHeight(this.doc, REGULAR, SIZE.small) + GAP;
  }

  newPage(): void {
    this.doc.addPage();
    this.y = this.doc.page.margins.top;
    this.write(`Invoice ${this.invoiceNumber} (continued)`, this.left, this.width, { font: REGULAR, size: SIZE.small, colour: COLOUR.muted });
    this.y += this.continuationHeight();
  }

  /** Writes `text` at (x, this.y) within `width`; returns the height it took. Does not move this.y. */
  write(text: string, x: number, width: number, style: TextStyle): number {
    applyStyle(this.doc, style);
    const options = { width, align: style.align ?? 'left', lineGap: 1, ...(style.link ? { link: style.link, underline: true } : {}) };
    const height = this.doc.heightOfString(text, options);
    this.doc.text(text, x, this.y, options);
    return height;
  }

  /** The height `text` would take in `width`, in `style`. */
  measure(text: string, width: number, style: TextStyle): number {
    applyStyle(this.doc, style);
    return this.doc.heightOfString(text, { width, lineGap: 1 });
  }

  rule(gapAfter = GAP): void {
    this.doc.save().moveTo(this.left, this.y).lineTo(this.left + this.width, this.y).lineWidth(0.5).strokeColor(COLOUR.rule).stroke().restore();
    this.y += gapAfter;
  }
}

interface TextStyle {
  font: typeof REGULAR | typeof BOLD;
  size: number;
  colour?: string;
  align?: 'left' | 'right';
  link?: string;
}

function applyStyle(doc: PDFKit.PDFDocument, style: TextStyle): void {
  doc.font(style.font).fontSize(style.size).fillColor(style.colour ?? COLOUR.text);
}

function lineHeight(doc: PDFKit.PDFDocument, font: TextStyle['font'], size: number): number {
  return doc.font(font).fontSize(size).currentLineHeight(true);
}

/** The business (left) and "Invoice INV-0001" (right). */
function drawHeading(sheet: Sheet, input: InvoicePdfInput): void {
  const leftWidth = sheet.width * 0.6;
  const rightWidth = sheet.width - leftWidth - GAP;
  const business = sheet.write(input.business.name, sheet.left, leftWidth, { font: BOLD, size: SIZE.title });
  const title = sheet.write(`Invoice ${input.invoice.number}`, sheet.left + leftWidth + GAP, rightWidth, { font: BOLD, size: SIZE.title, align: 'right' });
  sheet.y += Math.max(business, title) + GAP;
  sheet.rule();
}

/** Who is billed (left) and the invoice's facts (right): number, dates, terms, currency. */
function drawParties(sheet: Sheet, input: InvoicePdfInput): void {
  const { invoice } = input;
  const top = sheet.y;
  const leftWidth = sheet.width * 0.5;
  const rightX = sheet.left + leftWidth + GAP;
  const rightWidth = sheet.width - leftWidth - GAP;

  let left = sheet.write('Bill to', sheet.left, leftWidth, { font: REGULAR, size: SIZE.small, colour: COLOUR.muted });
  sheet.y += left;
  for (const [index, line] of [invoice.customer.name, ...input.customerAddressLines].entries()) {
    const height = sheet.write(line, sheet.left, leftWidth, { font: index === 0 ? BOLD : REGULAR, size: SIZE.body });
    sheet.y += height;
    left += height;
  }

  sheet.y = top;
  const terms = termsText(invoice.paymentTermsDays);
  const facts: [string, string][] = [
    ['Invoice number', invoice.number],
    ['Issue date', invoice.issueDate],
    ['Due date', invoice.dueDate],
    ...(terms === null ? [] : [['Terms', terms] as [string, string]]),
    ['Currency', invoice.currency],
  ];
  let right = 0;
  for (const [label, value] of facts) {
    const labelWidth = rightWidth * 0.45;
    const labelHeight = sheet.write(label, rightX, labelWidth, { font: REGULAR, size: SIZE.body, colour: COLOUR.muted });
    const valueHeight = sheet.write(value, rightX + labelWidth, rightWidth - labelWidth, { font: REGULAR, size: SIZE.body, align: 'right' });
    const height = Math.max(labelHeight, valueHeight) + 2;
    sheet.y += height;
    right += height;
  }
  sheet.y = top + Math.max(left, right) + GAP;
}

/** A void or settled invoice says so before anything else. */
function drawStanding(sheet: Sheet, invoice: Invoice): void {
  const notice =
    invoice.status === 'void'
      ? 'This invoice was voided. Nothing is owed on it.'
      : invoiceBalanceCents(invoice) === 0n
        ? 'This invoice is paid in full. Thank you.'
        : null;
  if (notice === null) return;
  sheet.y += sheet.write(notice, sheet.left, sheet.width, { font: BOLD, size: SIZE.heading }) + GAP;
}

interface Columns {
  description: { x: number; width: number };
  quantity: { x: number; width: number };
  unitPrice: { x: number; width: number };
  amount: { x: number; width: number };
}

const HEADINGS = { description: 'Description', quantity: 'Quantity', unitPrice: 'Unit price', amount: 'Amount' } as const;

/** Figure columns as wide as their widest entry (within a cap), the description taking the rest. */
function columnsFor(sheet: Sheet, invoice: Invoice): Columns {
  const money = (cents: bigint) => formatMoney(cents, invoice.currency);
  sheet.doc.font(BOLD).fontSize(SIZE.table);
  const widest = (texts: string[], cap: number): number => Math.min(Math.max(...texts.map((text) => Math.ceil(sheet.doc.widthOfString(text)) + 1)), cap);
  const amount = widest([HEADINGS.amount, ...invoice.lines.map((line) => money(line.amountCents))], MAX_MONEY_WIDTH);
  const unitPrice = widest([HEADINGS.unitPrice, ...invoice.lines.map((line) => money(line.unitPriceCents))], MAX_MONEY_WIDTH);
  const quantity = widest([HEADINGS.quantity, ...invoice.lines.map((line) => line.quantity)], MAX_QUANTITY_WIDTH);
  const description = sheet.width - amount - unitPrice - quantity - 3 * GAP;
  const left = sheet.left;
  return {
    description: { x: left, width: description },
    quantity: { x: left + description + GAP, width: quantity },
    unitPrice: { x: left + description + quantity + 2 * GAP, width: unitPrice },
    amount: { x: left + description + quantity + unitPrice + 3 * GAP, width: amount },
  };
}

function drawColumnHeadings(sheet: Sheet, columns: Columns): void {
  const style = { font: BOLD, size: SIZE.table } as const;
  const heights = [
    sheet.write(HEADINGS.description, columns.description.x, columns.description.width, style),
    sheet.write(HEADINGS.quantity, columns.quantity.x, columns.quantity.width, { ...style, align: 'right' }),
    sheet.write(HEADINGS.unitPrice, columns.unitPrice.x, columns.unitPrice.width, { ...style, align: 'right' }),
    sheet.write(HEADINGS.amount, columns.amount.x, columns.amount.width, { ...style, align: 'right' }),
  ];
  sheet.y += Math.max(...heights) + ROW_PADDING;
  sheet.rule(ROW_PADDING);
}

/** Each line: description (wrapped), quantity, unit price and amount; headings again on every page. */
function drawLines(sheet: Sheet, input: InvoicePdfInput): void {
  const { invoice } = input;
  const columns = columnsFor(sheet, invoice);
  const headingHeight = lineHeight(sheet.doc, BOLD, SIZE.table) + 2 * ROW_PADDING;
  sheet.ensureRoom(headingHeight + lineHeight(sheet.doc, REGULAR, SIZE.table));
  drawColumnHeadings(sheet, columns);
  const shown = linesShownInPdf(invoice.lines);
  for (const line of invoice.lines.slice(0, shown)) {
    const cells: Record<FigureColumn, string> = {
      quantity: line.quantity,
      unitPrice: formatMoney(line.unitPriceCents, invoice.currency),
      amount: formatMoney(line.amountCents, invoice.currency),
    };
    const style = { font: REGULAR, size: SIZE.table } as const;
    const height = Math.max(
      sheet.measure(line.description, columns.description.width, style),
      ...FIGURE_COLUMNS.map((key) => sheet.measure(cells[key], columns[key].width, style)),
    );
    if (startsOnNewPage(sheet, height + ROW_PADDING, headingHeight)) {
      sheet.newPage();
      drawColumnHeadings(sheet, columns);
    }
    drawRow(sheet, columns, line.description, cells, height, style);
  }
  if (shown < invoice.lines.length) drawLinesNotShown(sheet, invoice.lines.length - shown, invoice.lines.length, input.payUrl);
  sheet.y += GAP;
}

/** Where the lines stop short of the invoice's: how many more there are, and where to see them. */
function drawLinesNotShown(sheet: Sheet, notShown: number, total: number, payUrl: string): void {
  const text = `${notShown} more ${notShown === 1 ? 'line' : 'lines'} of the ${total} on this invoice ${notShown === 1 ? 'is' : 'are'} not printed here; the pay page lists them all: ${payUrl}`;
  const style = { font: BOLD, size: SIZE.table } as const;
  sheet.y += ROW_PADDING;
  sheet.ensureRoom(sheet.measure(text, sheet.width, style));
  sheet.y += sheet.write(text, sheet.left, sheet.width, style);
}

/**
 * Whether a row goes to a new page: when it does not fit here but would on a fresh page. A row
 * taller than any page flows from here on, unless barely a line of it would fit.
 */
function startsOnNewPage(sheet: Sheet, rowHeight: number, headingHeight: number): boolean {
  const roomHere = sheet.bottom - sheet.y;
  if (rowHeight <= roomHere) return false;
  if (rowHeight <= sheet.freshPageRoom() - headingHeight) return true;
  return roomHere < 3 * lineHeight(sheet.doc, REGULAR, SIZE.table);
}

/**
 * One row at sheet.y. The description goes first, so the text reads like the row. One taller
 * than a whole page flows onto the next pages (pdfkit carries it on); its figures stay on the
 * page where the row starts.
 */
function drawRow(sheet: Sheet, columns: Columns, description: string, cells: Record<FigureColumn, string>, height: number, style: TextStyle): void {
  const { doc } = sheet;
  const top = sheet.y;
  const startPage = currentPageIndex(doc);
  sheet.write(description, columns.description.x, columns.description.width, style);
  const endPage = currentPageIndex(doc);
  const endY = doc.y;
  if (endPage !== startPage) doc.switchToPage(startPage);
  for (const key of FIGURE_COLUMNS) sheet.write(cells[key], columns[key].x, columns[key].width, { ...style, align: 'right' });
  if (endPage !== startPage) doc.switchToPage(endPage);
  sheet.y = (endPage === startPage ? Math.max(endY, top + height) : endY) + ROW_PADDING;
  sheet.rule(ROW_PADDING);
}

type FigureColumn = 'quantity' | 'unitPrice' | 'amount';
const FIGURE_COLUMNS: readonly FigureColumn[] = ['quantity', 'unitPrice', 'amount'];

/** While pages are added in order, the current page is the last one buffered. */
function currentPageIndex(doc: PDFKit.PDFDocument): number {
  const range = doc.bufferedPageRange();
  return range.start + range.count - 1;
}

/** Subtotal, tax, total, paid and balance, kept together on one page after the last line. */
function drawTotals(sheet: Sheet, invoice: Invoice): void {
  const money = (cents: bigint) => formatMoney(cents, invoice.currency);
  const rows: [label: string, value: string, strong: boolean][] = [
    ['Subtotal', money(invoice.subtotalCents), false],
    [invoice.taxRatePercent === null ? 'Tax' : `Tax (${invoice.taxRatePercent}%)`, money(invoice.taxCents), false],
    ['Total', money(invoice.totalCents), true],
    ['Paid', money(invoice.paidCents), false],
    ['Balance due', money(invoiceBalanceCents(invoice)), true],
  ];
  const width = Math.min(sheet.width, 260);
  const x = sheet.left + sheet.width - width;
  const labelWidth = width * 0.45;
  const rowHeight = (strong: boolean) => lineHeight(sheet.doc, strong ? BOLD : REGULAR, SIZE.body) + 3;
  const heights = rows.map(([label, value, strong]) =>
    Math.max(sheet.measure(label, labelWidth, { font: strong ? BOLD : REGULAR, size: SIZE.body }), sheet.measure(value, width - labelWidth, { font: strong ? BOLD : REGULAR, size: SIZE.body }), rowHeight(strong)),
  );
  sheet.ensureRoom(heights.reduce((sum, height) => sum + height, 0));
  rows.forEach(([label, value, strong], index) => {
    const style = { font: strong ? BOLD : REGULAR, size: SIZE.body } as const;
    sheet.write(label, x, labelWidth, style);
    sheet.write(value, x + labelWidth, width - labelWidth, { ...style, align: 'right' });
    sheet.y += heights[index]!;
  });
  sheet.y += GAP;
}

/** Each payment received, with its date and method. */
function drawPayments(sheet: Sheet, invoice: Invoice): void {
  if (invoice.payments.length === 0) return;
  drawSectionHeading(sheet, 'Payments received');
  for (const payment of invoice.payments) {
    const text = `${formatMoney(payment.amountCents, invoice.currency)} received on ${payment.paidAt} (${payment.method})`;
    const style = { font: REGULAR, size: SIZE.body } as const;
    sheet.ensureRoom(sheet.measure(text, sheet.width, style));
    sheet.y += sheet.write(text, sheet.left, sheet.width, style) + 2;
  }
  sheet.y += GAP;
}

function drawMemo(sheet: Sheet, invoice: Invoice): void {
  if (invoice.memo === null || invoice.memo.trim() === '') return;
  drawSectionHeading(sheet, 'Note');
  writeFlowing(sheet, invoice.memo, { font: REGULAR, size: SIZE.body });
  sheet.y += GAP;
}

/** Where to pay (or, once nothing is owed, where to see the invoice), as a link. */
function drawPayLink(sheet: Sheet, input: InvoicePdfInput): void {
  const owing = input.invoice.status !== 'void' && invoiceBalanceCents(input.invoice) > 0n;
  drawSectionHeading(sheet, owing ? 'Pay online' : 'View online');
  writeFlowing(sheet, input.payUrl, { font: REGULAR, size: SIZE.body, colour: COLOUR.link, link: input.payUrl });
}

function drawSectionHeading(sheet: Sheet, heading: string): void {
  const style = { font: BOLD, size: SIZE.heading } as const;
  // A heading never ends a page alone: room for it and one line of what follows.
  sheet.ensureRoom(sheet.measure(heading, sheet.width, style) + lineHeight(sheet.doc, REGULAR, SIZE.body));
  sheet.y += sheet.write(heading, sheet.left, sheet.width, style) + 3;
}

/** Text that may run past the page's end: pdfkit carries it onto further pages. */
function writeFlowing(sheet: Sheet, text: string, style: TextStyle): void {
  sheet.ensureRoom(lineHeight(sheet.doc, style.font, style.size));
  sheet.write(text, sheet.left, sheet.width, style);
  sheet.y = sheet.doc.y;
}

/** "INV-0001 · Page 1 of 2" in the bottom margin of every page. */
function drawPageNumbers(sheet: Sheet): void {
  const { doc } = sheet;
  const range = doc.bufferedPageRange();
  for (let index = range.start; index < range.start + range.count; index += 1) {
    doc.switchToPage(index);
    const bottomMargin = doc.page.margins.bottom;
    // Writing inside the bottom margin would otherwise start a new page.
    doc.page.margins.bottom = 0;
    applyStyle(doc, { font: REGULAR, size: SIZE.small, colour: COLOUR.muted });
    doc.text(`Invoice ${sheet.invoiceNumber} · Page ${index + 1} of ${range.count}`, sheet.left, doc.page.height - bottomMargin + GAP * 1.5, {
      width: sheet.width,
      align: 'center',
      lineBreak: false,
    });
    doc.page.margins.bottom = bottomMargin;
  }
}
