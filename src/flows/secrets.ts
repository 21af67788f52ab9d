/**
 * Masked answers in checkpoints: a PIN, a card number or any answer of a masked step is
 * never written in clear. Without keys it is withheld (the checkpoint keeps only that it was
 * given, and a resumed call asks it again); with keys the app provides it is sealed with
 * AES-256-GCM, bound to its flow, call and step, and opened again on resume.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { TasklineError } from '../core/errors.js';
import { maskPII } from '../core/pii.js';
import type { CheckpointKey, FlowState } from './checkpoints/types.js';
import type { FlowDefinition, StepDef } from './definition.js';
import type { StepEntry } from './graph.js';

/** Keys that seal masked answers: the first seals, every one opens (for rotation). */
export type SealKeys = Uint8Array | readonly Uint8Array[];

/** An answer as a checkpoint stores it: in clear, withheld, or sealed. */
export interface StoredEntry extends StepEntry {
  /** A sealed masked answer: `v1.` + base64url(iv | tag | ciphertext). */
  sealed?: string;
}

const PREFIX = 'v1.';
const IV = 12;
const TAG = 16;

/** Checks the keys a flow run is given: 32 bytes each, at least one. */
export function checkSealKeys(keys: SealKeys | undefined): Uint8Array[] | undefined {
  if (keys === undefined) return undefined;
  const list = keys instanceof Uint8Array ? [keys] : [...keys];
  if (list.length === 0 || !list.every((k) => k instanceof Uint8Array && k.length === 32)) {
    throw new TasklineError(
      'invalid_argument',
      'sealKeys must be a 32-byte key (a Uint8Array, e.g. Buffer.from(process.env.CHECKPOINT_KEY, "base64")) or a list of them, the sealing key first.',
    );
  }
  return list;
}

/** True when a step's answer must stay masked: a masked step, or a value with a card number or a registered secret. */
export function isSecret(step: StepDef | undefined, value: unknown): boolean {
  if (step?.masked) return true;
  if (value === undefined) return false;
  const text = JSON.stringify(value);
  return text !== undefined && maskPII(text) !== text;
}

/**
 * The state as the store should see it: masked answers withheld or sealed, and the words a
 * report keeps (reasons) masked. The running state is not changed.
 */
export function storedState(
  def: FlowDefinition,
  state: FlowState,
  key: CheckpointKey,
  keys: readonly Uint8Array[] | undefined,
): FlowState {
  const entries: Record<string, StoredEntry> = {};
  for (const [id, entry] of Object.entries(state.entries)) {
    if (entry.skipped || entry.withheld || !secretEntry(def, id, entry)) {
      entries[id] = entry;
      continue;
    }
    const { value, ...rest } = entry;
    entries[id] = keys
      ? { ...rest, sealed: seal(keys[0]!, key, id, value) }
      : { ...rest, withheld: true };
  }
  return {
    ...state,
    entries,
    records: state.records.map((r) => (r.reason ? { ...r, reason: maskPII(r.reason) } : r)),
    ...(state.reason !== undefined ? { reason: maskPII(state.reason) } : {}),
  };
}

/** Whether an answer is secret, decided once per answer (every write would ask again). */
const secrecy = new WeakMap<StepEntry, boolean>();
function secretEntry(def: FlowDefinition, id: string, entry: StepEntry): boolean {
  let secret = secrecy.get(entry);
  if (secret === undefined) {
    secret = isSecret(
      def.steps.find((s) => s.id === id),
      entry.value,
    );
    secrecy.set(entry, secret);
  }
  return secret;
}

/** Seals one answer for its place (flow, call, step): it opens nowhere else. */
export function seal(key: Uint8Array, at: CheckpointKey, step: string, value: unknown): string {
  const iv = randomBytes(IV);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(place(at, step));
  const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** Opens a sealed answer; undefined when no key opens it (another key, another place, tampered). */
export function open(
  keys: readonly Uint8Array[],
  at: CheckpointKey,
  step: string,
  sealed: string,
): { value: unknown } | undefined {
  if (!sealed.startsWith(PREFIX)) return undefined;
  const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64url');
  if (raw.length < IV + TAG) return undefined;
  const iv = raw.subarray(0, IV);
  const tag = raw.subarray(IV, IV + TAG);
  const body = raw.subarray(IV + TAG);
  for (const key of keys) {
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAAD(place(at, step));
      decipher.setAuthTag(tag);
      const text = Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
      return { value: JSON.parse(text) as unknown };
    } catch {
      // not this key
    }
  }
  return undefined;
}

function place(at: CheckpointKey, step: string): Buffer {
  return Buffer.from(`taskline.checkpoint\u0000${at.flow}\u0000${at.callId}\u0000${step}`, 'utf8');
}
