import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { int, one, run } from '../db/statements.js';
import { conflict } from '../errors.js';

/**
 * Idempotency records, one per (API key, Idempotency-Key): a claim while a write that must
 * await something is under way, then the stored answer for 24 hours. The write door
 * (write-door.ts) is their only writer.
 */

/** Stored results are replayed for 24 hours; after that the key behaves as new. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyClaim {
  apiKeyId: string;
  key: string;
  /** Fingerprint of the request: the same key with a different request is a conflict. */
  requestHash: string;
}

/** What makes two requests "the same": the operation and its validated inputs. */
export interface RequestIdentity {
  operationId: string;
  params: unknown;
  query: unknown;
  body: unknown;
}

/**
 * A canonical hash of the operation id and the inputs as validated (ids lower-cased, query
 * values typed), so the same request written another way (field order, an id's case) is the
 * same request, and a different one under the same key is a conflict.
 */
export function requestFingerprint(identity: RequestIdentity): string {
  const parts = [identity.operationId, identity.params, identity.query, identity.body];
  return createHash('sha256').update(canonicalJson(parts)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

interface RecordRow {
  request_hash: string;
  state: 'in_progress' | 'completed';
  status_code: bigint | null;
  response_json: string | null;
  expires_at: string;
}

/** An answer stored under a key, ready to be sent again. */
export interface StoredAnswer {
  status: number;
  json: string;
}

/**
 * The stored answer for this claim, or undefined when the key is free. A key used with a
 * different request, or whose first request has not finished, is a conflict. A record past
 * its window is removed here, so the key behaves as new.
 */
export function storedAnswer(db: Db, clock: Clock, claim: IdempotencyClaim): StoredAnswer | undefined {
  assertInTransaction(db, 'storedAnswer');
  const row = one<RecordRow>(
    db,
    'SELECT request_hash, state, status_code, response_json, expires_at FROM idempotency_records WHERE api_key_id = ? AND idempotency_key = ?',
    claim.apiKeyId,
    claim.key,
  );
  if (!row) return undefined;
  if (row.expires_at <= nowIso(clock)) {
    run(db, 'DELETE FROM idempotency_records WHERE api_key_id = ? AND idempotency_key = ?', claim.apiKeyId, claim.key);
    return undefined;
  }
  if (row.request_hash !== claim.requestHash) {
    throw conflict('Idempotency-Key was already used with a different request.');
  }
  if (row.state !== 'completed' || row.status_code === null || row.response_json === null) {
    throw conflict('A request with this Idempotency-Key has not finished yet.');
  }
  return { status: int(row.status_code)!, json: row.response_json };
}

/** Stores the answer of a write that ran start to finish in this transaction. */
export function storeAnswer(db: Db, clock: Clock, claim: IdempotencyClaim, answer: StoredAnswer): void {
  assertInTransaction(db, 'storeAnswer');
  const now = clock.now();
  run(
    db,
    `INSERT INTO idempotency_records (api_key_id, idempotency_key, request_hash, state, status_code, response_json, created_at, expires_at)
     VALUES (?, ?, ?, 'completed', ?, ?, ?, ?)`,
    claim.apiKeyId,
    claim.key,
    claim.requestHash,
    answer.status,
    answer.json,
    now.toISOString(),
    expiryFrom(now),
  );
}

/** Marks the key as taken by a write that must await something before it can post. */
export function claimInProgress(db: Db, clock: Clock, claim: IdempotencyClaim): void {
  assertInTransaction(db, 'claimInProgress');
  const now = clock.now();
  run(
    db,
    `INSERT INTO idempotency_records (api_key_id, idempotency_key, request_hash, state, created_at, expires_at)
     VALUES (?, ?, ?, 'in_progress', ?, ?)`,
    claim.apiKeyId,
    claim.key,
    claim.requestHash,
    now.toISOString(),
    expiryFrom(now),
  );
}

/** Turns this request's in-progress claim into its stored answer; the claim must still be there. */
export function completeClaim(db: Db, clock: Clock, claim: IdempotencyClaim, answer: StoredAnswer): void {
  assertInTransaction(db, 'completeClaim');
  const { changes } = run(
    db,
    `UPDATE idempotency_records SET state = 'completed', status_code = ?, response_json = ?, expires_at = ?
     WHERE api_key_id = ? AND idempotency_key = ? AND request_hash = ? AND state = 'in_progress'`,
    answer.status,
    answer.json,
    expiryFrom(clock.now()),
    claim.apiKeyId,
    claim.key,
    claim.requestHash,
  );
  if (changes !== 1) throw new Error(`completeClaim: the in-progress claim on key ${claim.key} is gone`);
}

/** Frees a key whose write failed before it committed, for a corrected retry. */
export function releaseClaim(db: Db, claim: IdempotencyClaim): number {
  return run(
    db,
    "DELETE FROM idempotency_records WHERE api_key_id = ? AND idempotency_key = ? AND request_hash = ? AND state = 'in_progress'",
    claim.apiKeyId,
    claim.key,
    claim.requestHash,
  ).changes;
}

function expiryFrom(now: Date): string {
  return new Date(now.getTime() + IDEMPOTENCY_WINDOW_MS).toISOString();
}

/** Removes records past their window; run by the cleanup job. */
export function purgeExpiredIdempotency(db: Db, clock: Clock): number {
  return run(db, 'DELETE FROM idempotency_records WHERE expires_at <= ?', nowIso(clock)).changes;
}

/**
 * In-progress records found at start-up belong to work that never committed (completion
 * commits with the work): free their keys, so a client retrying after a crash is not stuck
 * on 409.
 */
export function releaseAbandonedClaims(db: Db): number {
  return run(db, "DELETE FROM idempotency_records WHERE state = 'in_progress'").changes;
}
