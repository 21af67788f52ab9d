/**
 * Digests of a delegation record over canonical JSON (object keys sorted, so the same record
 * from any store digests the same): the record's `ETag` on the HTTP API, and the digest of what
 * it asks (every field but the status) that binds an approval to exactly what runs.
 */
import { createHash } from 'node:crypto';
import type { DelegationRecord } from './record.js';

/** JSON text with object keys sorted at every level (arrays keep their order). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(',')}]`;
  const keys = Object.keys(value).sort();
  const parts: string[] = [];
  for (const key of keys) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url');
}

/** The digest of what a record asks: who asks whom, to do what (everything but `status`). */
export function taskDigest(record: DelegationRecord): string {
  const { status: _status, ...task } = record;
  return sha256(canonicalJson(task));
}

/** The record's entity tag (a strong ETag, quoted): changes with any field or stage. */
export function recordEtag(record: DelegationRecord): string {
  return `"${sha256(canonicalJson(record)).slice(0, 27)}"`;
}
