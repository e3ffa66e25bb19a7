import { getBusiness } from '../books/businesses.js';
import { customerAddressLines } from '../books/customers.js';
import type { Invoice } from '../books/invoices.js';
import type { Db } from '../db/connection.js';
import { invoicePdfFilename, renderInvoicePdf } from './invoice-pdf.js';

/** An invoice's PDF, named for the invoice: what the emails attach and the pay page offers. */
export interface InvoicePdf {
  filename: string;
  contentType: 'application/pdf';
  content: Buffer;
}

/** The PDF of `invoice` as the books hold it now, linking to `payUrl`. Reads the books; writes nothing. */
export async function invoicePdf(db: Db, invoice: Invoice, payUrl: string): Promise<InvoicePdf> {
  const business = getBusiness(db, invoice.businessId);
  const content = await renderInvoicePdf({
    invoice,
    business: { name: business.name },
    customerAddressLines: customerAddressLines(db, invoice.customer.id),
    payUrl,
  });
  return { filename: invoicePdfFilename(invoice.number), contentType: 'application/pdf', content };
}
