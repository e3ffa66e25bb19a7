/**
 * Invoices and their payments. The lists below are the invoices and invoice_payments
 * tables' CHECK lists; test/db/closed-lists.test.ts keeps the two in step.
 */

/** Where an invoice stands (the spec's closed list). */
export const INVOICE_STATUSES = ['draft', 'sent', 'viewed', 'partially_paid', 'paid', 'overdue', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** How a payment was made: the four the API records, and stripe for payments taken on the pay page. */
export const PAYMENT_METHODS = ['check', 'cash', 'wire', 'other', 'stripe'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];
