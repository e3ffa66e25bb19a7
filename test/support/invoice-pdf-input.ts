import type { Invoice, InvoiceLine } from '../../src/books/invoices.js';
import type { InvoicePdfInput } from '../../src/pdf/invoice-pdf.js';

/** Invoices for drawing as PDFs, built here without books: test/unit/invoice-pdf.test.ts and the PDF thread's tests. */

export const PAY_URL = 'https://books.example.test/pay/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcde';

export function buildLine(overrides: Partial<InvoiceLine> = {}): InvoiceLine {
  return { description: 'Consulting', quantity: '2', unitPriceCents: 12500n, amountCents: 25000n, accountId: 'account-1', account: 'Service Revenue', ...overrides };
}

/** A sent USD invoice of one line, 2 x $125.00, nothing paid, unless told otherwise. */
export function buildInvoice(overrides: Partial<Invoice> = {}): Invoice {
  return {
    id: 'invoice-1',
    businessId: 'business-1',
    tenantId: 'tenant-1',
    number: 'INV-0042',
    status: 'sent',
    currency: 'USD',
    customer: { id: 'customer-1', name: 'Jo Customer', email: 'jo@customer.example' },
    issueDate: '2026-03-15',
    dueDate: '2026-04-14',
    paymentTermsDays: 30,
    taxRatePercent: null,
    subtotalCents: 25000n,
    taxCents: 0n,
    totalCents: 25000n,
    paidCents: 0n,
    memo: null,
    usdPerUnit: '1',
    subtotalUsdCents: 25000n,
    taxUsdCents: 0n,
    journalEntryId: 'entry-1',
    sentAt: '2026-03-15T12:00:00.000Z',
    lines: [buildLine()],
    payments: [],
    ...overrides,
  };
}

export function buildInput(overrides: Partial<Invoice> = {}, input: Partial<Omit<InvoicePdfInput, 'invoice'>> = {}): InvoicePdfInput {
  return { invoice: buildInvoice(overrides), business: { name: 'Harbor Design' }, customerAddressLines: [], payUrl: PAY_URL, ...input };
}
