import type {
  DelegationRecord,
  DelegationState,
  DelegationStore,
} from '../../delegation/record.js';

/** What kind of write produced a change. */
export type DelegationChangeOp = 'create' | 'stage' | 'update' | 'delete';

/**
 * One committed change to a delegation record, written to the outbox in the same transaction
 * as the record, so the events derived from it can never diverge from what was stored.
 */
export interface DelegationChange {
  op: DelegationChangeOp;
  delegation_id: string;
  /** The record's version after this change (1 after create; delete bumps it once more). */
  version: number;
  /**
   * Random id of this incarnation of the record, new on every create: a record deleted and
   * created again under the same id is a new incarnation, so its events are never mistaken for
   * the old one's (event keys and dedupe windows include it).
   */
  incarnation: string;
  /** Time of the change, integer epoch seconds on the store's clock. */
  time: number;
  /** The record after the change (for `delete`, as it was when deleted). */
  record: DelegationRecord;
  /** For `stage`: the stage that moved, its new state and the state it left (absent if new). */
  stage?: string;
  state?: DelegationState;
  from?: DelegationState;
  /** For `update`: the target before the change, when the update re-targeted the record. */
  previous_target?: string;
}

/** A stored record with what the store keeps beside it. */
export interface VersionedRecord {
  record: DelegationRecord;
  version: number;
  incarnation: string;
  /** Open stages written with a deadline already past (never expired by the checker). */
  stale: string[];
}

/** A change waiting in the outbox, with its position (`seq`) for acknowledging it. */
export interface OutboxEntry {
  seq: number;
  change: DelegationChange;
}

/**
 * The outbox half of a durable store: changes are claimed for a lease (so a publisher that
 * dies mid-publish only delays them), deleted once published, or released on failure.
 */
export interface DelegationOutbox {
  /** Claims up to `limit` unleased entries (oldest first) until `leaseUntil` (ms epoch). */
  claimOutbox(limit: number, now: number, leaseUntil: number): Promise<OutboxEntry[]>;
  /** Deletes published entries. */
  ackOutbox(seqs: readonly number[]): Promise<void>;
  /** Makes claimed entries available again at once (a publish failed). */
  releaseOutbox(seqs: readonly number[]): Promise<void>;
  /** Entries not yet acknowledged (claimed or not). */
  outboxSize(): Promise<number>;
  /** Calls `listener` after every local commit that wrote to the outbox; returns an unsubscribe. */
  onOutboxWrite(listener: () => void): () => void;
}

/** A store whose every write also lands in an outbox: the SQLite and Postgres stores. */
export interface DurableDelegationStore extends DelegationStore, DelegationOutbox {
  /** The record with its version and incarnation, or undefined. */
  getVersioned(id: string): Promise<VersionedRecord | undefined>;
}

/**
 * A record with the stages whose deadline was already past when written (see `staleStages`):
 * from a durable store's `getVersioned`, else no stale stages.
 */
export async function loadWithStale(
  store: DelegationStore,
  id: string,
): Promise<{ record: DelegationRecord; stale: string[] } | undefined> {
  if (!hasOutbox(store)) {
    const record = await store.get(id);
    return record ? { record, stale: [] } : undefined;
  }
  const found = await store.getVersioned(id);
  return found ? { record: found.record, stale: found.stale } : undefined;
}

/** True when `store` keeps an outbox (so a publisher can turn its writes into bus events). */
export function hasOutbox(store: DelegationStore): store is DurableDelegationStore {
  const s = store as Partial<DurableDelegationStore>;
  return typeof s.claimOutbox === 'function' && typeof s.ackOutbox === 'function';
}
