import { createHash } from 'node:crypto';
import { z } from 'zod/v4';
import { readTextFileCapped } from '../../core/bounded-read.js';
import { TasklineError } from '../../core/errors.js';
import type { DelegationRecord } from '../../delegation/record.js';

/** Who is calling: an agent (sees records it sends or receives) or an admin (sees all). */
export type Identity = { admin: true; name: string } | { admin: false; agent: string };

const KeyEntry = z.union([
  z.strictObject({ key: z.string().min(16).max(512), agent: z.string().min(1).max(200) }),
  z.strictObject({
    key: z.string().min(16).max(512),
    admin: z.literal(true),
    name: z.string().optional(),
  }),
]);
const KeysFile = z.union([z.strictObject({ keys: z.array(KeyEntry) }), z.array(KeyEntry)]);

/** One configured key: a secret and the identity it grants. */
export type ApiKeyEntry = z.infer<typeof KeyEntry>;

function digest(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * Bearer API keys and the identity each grants. Keys are held only as SHA-256 digests and
 * looked up by digest, so comparing a presented key leaks nothing about stored ones.
 */
export class ApiKeys {
  private readonly byDigest = new Map<string, Identity>();

  constructor(entries: readonly ApiKeyEntry[]) {
    for (const e of entries) {
      const identity: Identity =
        'admin' in e ? { admin: true, name: e.name ?? 'admin' } : { admin: false, agent: e.agent };
      this.byDigest.set(digest(e.key), identity);
    }
  }

  /**
   * Parses keys JSON: `{"keys":[{"key":"…","agent":"voice-bot"},{"key":"…","admin":true}]}` (or
   * just the array). Keys are at least 16 characters.
   */
  static parse(json: string, source = 'API keys'): ApiKeys {
    let data: unknown;
    try {
      data = JSON.parse(json);
    } catch (error) {
      throw new TasklineError(
        'invalid_argument',
        `${source} is not valid JSON (${(error as Error).message}).`,
      );
    }
    const parsed = KeysFile.safeParse(data);
    if (!parsed.success) {
      throw new TasklineError(
        'invalid_argument',
        `${source} must look like {"keys":[{"key":"<16+ chars>","agent":"voice-bot"},{"key":"<16+ chars>","admin":true}]}: ${z.prettifyError(parsed.error)}`,
      );
    }
    const entries = Array.isArray(parsed.data) ? parsed.data : parsed.data.keys;
    if (entries.length === 0) {
      throw new TasklineError('invalid_argument', `${source} has no keys; add at least one.`);
    }
    return new ApiKeys(entries);
  }

  /** Reads keys from a JSON file (a regular file of at most 1 MiB). */
  static fromFile(path: string): ApiKeys {
    let text: string;
    try {
      text = readTextFileCapped(path, { what: 'keys file' });
    } catch (error) {
      throw new TasklineError(
        'invalid_argument',
        `Cannot read the keys file ${path}: ${(error as Error).message}`,
      );
    }
    return ApiKeys.parse(text, `Keys file ${path}`);
  }

  /** True when `text` is one of the configured keys (so a log can mask it wherever it is). */
  isKey(text: string): boolean {
    return text.length >= 16 && text.length <= 512 && this.byDigest.has(digest(text));
  }

  /** The identity for an `Authorization` header value (or a bare token). */
  resolve(header: string | undefined): Identity | 'missing' | 'unknown' {
    if (header === undefined || header.trim() === '') return 'missing';
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
    const token = m ? m[1]! : header.trim();
    if (!m && /\s/.test(token)) return 'unknown';
    return this.byDigest.get(digest(token)) ?? 'unknown';
  }
}

/** True when the identity may see (and act on) the record: a party to it, or an admin. */
export function canSee(identity: Identity, record: DelegationRecord): boolean {
  return (
    identity.admin ||
    record.sender_subject_id === identity.agent ||
    record.target_subject_id === identity.agent
  );
}

/** One name per key holder, never shared by an agent and an admin: `agent:<id>`, `admin:<name>`. */
export function ownerOf(identity: Identity): string {
  return identity.admin ? `admin:${identity.name}` : `agent:${identity.agent}`;
}

/** The agent id an identity acts as on a record (admins act as the given fallback). */
export function actingAs(identity: Identity, fallback: string): string {
  return identity.admin ? fallback : identity.agent;
}
