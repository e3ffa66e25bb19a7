import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import type { Db } from '../db/connection.js';
import { inTransaction } from '../db/connection.js';
import { int, one, run } from '../db/statements.js';
import { conflict } from '../errors.js';

/** Stored results are replayed for 24 hours; after that the key behaves as new. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** A write's answer as it will be (and, under a key, was) sent. */
export interface StoredResult {
  status: number;
  body: unknown;
}

export interface IdempotencyClaim {
  apiKeyId: string;
  key: string;
  /** Fingerprint of the request: the same key with a different request is a conflict. */
  requestHash: string;
}

/** A canonical hash of what makes two requests "the same": method, path, query and body. */
export function requestFingerprint(parts: { method: string; path: string; query: unknown; body: unknown }): string {
  return createHash('sha256').update(canonicalJson([parts.method, parts.path, parts.query, parts.body])).digest('hex');
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

/** A write's answer once it committed: the status and the body already serialised. */
export interface WriteOutcome {
  status: number;
  json: string;
  replayed: boolean;
}

/**
 * The one door for writes: checks the key, runs `work`, and stores its result, all in one
 * synchronous transaction (one commit). A refused write throws: the throw rolls everything
 * back, the record included, so the key is free for a corrected retry. The answer is
 * serialised before the commit, so a write never commits with an answer that cannot be sent.
 * Without a claim the work just runs.
 */
export function runWrite(db: Db, clock: Clock, claim: IdempotencyClaim | null, work: () => StoredResult): WriteOutcome {
  return inTransaction(db, () => {
    if (claim) {
      const previous = findLiveRecord(db, clock, claim);
      if (previous) return { ...replayOrConflict(previous, claim), replayed: true };
    }
    const result = work();
    if (result.status < 200 || result.status > 299) {
      throw new Error(`runWrite: a write answered ${result.status}; refusals must throw so nothing commits`);
    }
    const json = JSON.stringify(result.body);
    if (claim) saveResult(db, clock, claim, result.status, json);
    return { status: result.status, json, replayed: false };
  });
}

function findLiveRecord(db: Db, clock: Clock, claim: IdempotencyClaim): RecordRow | undefined {
  const row = one<RecordRow>(
    db,
    'SELECT request_hash, state, status_code, response_json, expires_at FROM idempotency_records WHERE api_key_id = ? AND idempotency_key = ?',
    claim.apiKeyId,
    claim.key,
  );
  if (row && row.expires_at <= nowIso(clock)) {
    run(db, 'DELETE FROM idempotency_records WHERE api_key_id = ? AND idempotency_key = ?', claim.apiKeyId, claim.key);
    return undefined;
  }
  return row;
}

function replayOrConflict(row: RecordRow, claim: IdempotencyClaim): { status: number; json: string } {
  if (row.request_hash !== claim.requestHash) {
    throw conflict('Idempotency-Key was already used with a different request.');
  }
  if (row.state !== 'completed' || row.status_code === null || row.response_json === null) {
    throw conflict('A request with this Idempotency-Key has not finished yet.');
  }
  return { status: int(row.status_code)!, json: row.response_json };
}

function saveResult(db: Db, clock: Clock, claim: IdempotencyClaim, status: number, json: string): void {
  const now = clock.now();
  run(
    db,
    `INSERT INTO idempotency_records (api_key_id, idempotency_key, request_hash, state, status_code, response_json, created_at, expires_at)
     VALUES (?, ?, ?, 'completed', ?, ?, ?, ?)`,
    claim.apiKeyId,
    claim.key,
    claim.requestHash,
    status,
    json,
    now.toISOString(),
    new Date(now.getTime() + IDEMPOTENCY_WINDOW_MS).toISOString(),
  );
}

/** Removes records past their window; run by the cleanup job. */
export function purgeExpiredIdempotency(db: Db, clock: Clock): number {
  return run(db, 'DELETE FROM idempotency_records WHERE expires_at <= ?', nowIso(clock)).changes;
}

/** In-progress records found at start-up belong to work that never committed: free their keys. */
export function releaseAbandonedClaims(db: Db): number {
  return run(db, "DELETE FROM idempotency_records WHERE state = 'in_progress'").changes;
}
