import type { Operation } from '../../http/operation.js';
import { listAccounts } from './accounts.js';
import { listBusinesses } from './businesses.js';
import { createCustomer } from './customers.js';

/** Every operation served under /api/v1. */
export const operations: readonly Operation[] = [listBusinesses, listAccounts, createCustomer];
