import type { KeyAccess } from '../books/keys.js';

/** Every permission an endpoint may declare (spec, Authentication rule 4; remind and payments use invoices:write). */
export const READ_PERMISSIONS = [
  'businesses:read',
  'accounts:read',
  'customers:read',
  'vendors:read',
  'transactions:read',
  'invoices:read',
  'review:read',
  'today:read',
  'reports:read',
] as const;

export const WRITE_PERMISSIONS = ['customers:write', 'expenses:write', 'invoices:write', 'review:write'] as const;

export type Permission = (typeof READ_PERMISSIONS)[number] | (typeof WRITE_PERMISSIONS)[number];

/** Access level is fixed at key creation: Read only gets every read, Read and write gets everything. */
export const PERMISSIONS_BY_ACCESS: Record<KeyAccess, ReadonlySet<Permission>> = {
  read: new Set(READ_PERMISSIONS),
  read_write: new Set([...READ_PERMISSIONS, ...WRITE_PERMISSIONS]),
};

export function isPermission(value: unknown): value is Permission {
  return typeof value === 'string' && PERMISSIONS_BY_ACCESS.read_write.has(value as Permission);
}
