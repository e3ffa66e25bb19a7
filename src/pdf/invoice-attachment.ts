import { createHash } from 'node:crypto';
import { getBusiness } from '../books/businesses.js';
import { customerAddressLines } from '../books/customers.js';
import type { Invoice } from '../books/invoices.js';
import type { Db } from '../db/connection.js';
import { invoicePdfFilename, type InvoicePdfInput, renderInvoicePdf } from './invoice-pdf.js';

/** An invoice's PDF, named for the invoice: what the emails attach and the pay page offers. */
export interface InvoicePdf {
  filename: string;
  contentType: 'application/pdf';
  content: Buffer;
}

/** The PDF of `invoice` as the books hold it now, linking to `payUrl`. Reads the books; writes nothing. */
export async function invoicePdf(db: Db, invoice: Invoice, payUrl: string): Promise<InvoicePdf> {
  const input: InvoicePdfInput = {
    invoice,
    business: { name: getBusiness(db, invoice.businessId).name },
    customerAddressLines: customerAddressLines(db, invoice.customer.id),
    payUrl,
  };
  return { filename: invoicePdfFilename(invoice.number), contentType: 'application/pdf', content: await renderedOnce(input) };
}

/**
 * Rendering takes tens of milliseconds for a page and seconds for hundreds, on the server's
 * one thread, and anyone with a pay link may download it again and again: the latest PDFs
 * are kept, keyed by everything they show, so an unchanged invoice is rendered once.
 */
const RENDERED_KEPT = 64;
const RENDERED_MAX_BYTES = 64 * 1024 * 1024;
const rendered = new Map<string, { pdf: Promise<Buffer>; bytes: number }>();

async function renderedOnce(input: InvoicePdfInput): Promise<Buffer> {
  const key = createHash('sha256').update(JSON.stringify(input, (_name, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))).digest('hex');
  const kept = rendered.get(key);
  if (kept) {
    // Most recently used last, so the least recently used goes first.
    rendered.delete(key);
    rendered.set(key, kept);
    return kept.pdf;
  }
  const entry = { pdf: renderInvoicePdf(input), bytes: 0 };
  rendered.set(key, entry);
  try {
    const content = await entry.pdf;
    entry.bytes = content.length;
    keepWithinBounds();
    return content;
  } catch (error) {
    rendered.delete(key);
    throw error;
  }
}

function keepWithinBounds(): void {
  let bytes = [...rendered.values()].reduce((sum, entry) => sum + entry.bytes, 0);
  for (const [key, entry] of rendered) {
    if (rendered.size <= RENDERED_KEPT && bytes <= RENDERED_MAX_BYTES) return;
    rendered.delete(key);
    bytes -= entry.bytes;
  }
}
