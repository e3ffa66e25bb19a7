import { createHash } from 'node:crypto';
import { getBusiness } from '../books/businesses.js';
import { customerAddressLines } from '../books/customers.js';
import type { Invoice } from '../books/invoices.js';
import type { Db } from '../db/connection.js';
import { one, run } from '../db/statements.js';
import { invoicePdfFilename, type InvoicePdfInput } from './invoice-pdf.js';
import { renderOffThread } from './renderer.js';

/** An invoice's PDF, named for the invoice: what the emails attach and the pay page offers. */
export interface InvoicePdf {
  filename: string;
  contentType: 'application/pdf';
  content: Buffer;
}

/**
 * The PDF of `invoice` as the books hold it now, linking to `payUrl`: the one kept in the books
 * for this state of the invoice, or else drawn now (off the request thread) and kept. A void
 * invoice gets its one-page notice instead of its lines.
 */
export async function invoicePdf(db: Db, invoice: Invoice, payUrl: string): Promise<InvoicePdf> {
  const input: InvoicePdfInput = {
    invoice,
    business: { name: getBusiness(db, invoice.businessId).name },
    customerAddressLines: customerAddressLines(db, invoice.customer.id),
    payUrl,
  };
  return { filename: invoicePdfFilename(invoice.number), contentType: 'application/pdf', content: await keptOrDrawn(db, input) };
}

/** Draws in progress, by state: two requests for the same new state wait for one drawing. */
const drawing = new Map<string, Promise<Buffer>>();

async function keptOrDrawn(db: Db, input: InvoicePdfInput): Promise<Buffer> {
  const key = stateKey(input);
  const kept = one<{ pdf: Buffer }>(db, 'SELECT pdf FROM invoice_documents WHERE invoice_id = ? AND state_key = ?', input.invoice.id, key);
  if (kept) return kept.pdf;
  let drawn = drawing.get(key);
  if (!drawn) {
    drawn = renderOffThread(input.invoice.status === 'void' ? 'void' : 'invoice', input)
      .then((pdf) => {
        keep(db, input.invoice.id, key, pdf);
        return pdf;
      })
      .finally(() => drawing.delete(key));
    drawing.set(key, drawn);
  }
  return drawn;
}

/**
 * The fingerprint of everything the PDF shows. Of the invoice's status the PDF shows only
 * whether it is void (paid in full shows from the amounts), so sent, viewed, overdue and part
 * paid share one state: a customer opening the pay page (sent -> viewed) or the overdue sweep
 * does not make the invoice drawn again.
 */
function stateKey(input: InvoicePdfInput): string {
  const shown = { ...input, invoice: { ...input.invoice, status: input.invoice.status === 'void' ? 'void' : 'issued' } };
  const json = JSON.stringify(shown, (_name, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  return createHash('sha256').update(json).digest('hex');
}

/** Keeps the drawn PDF as the invoice's one document. One that cannot be kept (a full disk) is drawn again next time. */
function keep(db: Db, invoiceId: string, key: string, pdf: Buffer): void {
  try {
    run(
      db,
      `INSERT INTO invoice_documents (invoice_id, state_key, pdf) VALUES (?, ?, ?)
       ON CONFLICT (invoice_id) DO UPDATE SET state_key = excluded.state_key, pdf = excluded.pdf`,
      invoiceId,
      key,
      pdf,
    );
  } catch {
    // Serving the PDF matters more than keeping it.
  }
}
