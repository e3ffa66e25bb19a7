import { createHash, createHmac } from 'node:crypto';
import type { Db } from '../db/connection.js';
import { one } from '../db/statements.js';
import { serverSecret } from '../store/secrets.js';

/**
 * The customer's pay link: `{site}/pay/{token}`. Anyone with the link can open and pay the
 * invoice, so the token is unguessable: 256 bits, an HMAC of the invoice id under a secret the
 * books keep (to anyone without the secret, indistinguishable from random). The books store
 * only its SHA-256 fingerprint, for finding the invoice a token names; the link itself is
 * derived again whenever the API shows it, so no copy of it sits in the database.
 *
 * `daybook invoice relink` replaces a link that reached the wrong hands: the invoice's
 * `pay_link_version` goes up, and the token is derived from the id and that version (version 0,
 * every invoice's first link, from the id alone), so the old link finds nothing.
 */

/** The invoice's current pay token (version 0 for an invoice not yet in the books). */
export function payToken(db: Db, invoiceId: string): string {
  const row = one<{ version: bigint | number }>(db, 'SELECT pay_link_version AS version FROM invoices WHERE id = ?', invoiceId);
  return payTokenAtVersion(db, invoiceId, Number(row?.version ?? 0));
}

export function payTokenAtVersion(db: Db, invoiceId: string, version: number): string {
  const message = version === 0 ? invoiceId : `${invoiceId}#${version}`;
  return createHmac('sha256', serverSecret(db, 'pay_links')).update(message).digest('base64url');
}

/** What invoices.pay_token holds: the token's fingerprint. */
export function payTokenFingerprint(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function payUrl(siteUrl: string, token: string): string {
  return `${siteUrl}/pay/${token}`;
}

/** A token's form (43 base64url characters): anything else is refused before any look-up. */
export function isPayTokenShaped(text: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(text);
}
