/**
 * Bank and card transactions: what comes in to be categorised. The lists below are the
 * transactions table's CHECK lists; test/db/closed-lists.test.ts keeps the two in step.
 */

/** Where a transaction stands in review (the spec's closed list). */
export const TRANSACTION_STATUSES = ['pending', 'accepted', 'edited', 'uncategorized'] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

/** How a transaction reached the books. */
export const TRANSACTION_SOURCES = ['manual', 'csv', 'email', 'ios', 'reconciliation', 'financial_connections'] as const;
export type TransactionSource = (typeof TRANSACTION_SOURCES)[number];
