/**
 * The in-process {@link DelegationStore}: the TaskManager's default when nothing durable
 * is configured. It shares the record checks, stage moves and filter semantics of the
 * SQLite and Postgres stores (src/service/stores), so a manager behaves the same on
 * every store; records live in a Map, ordered by `delegation_id` for paging.
 */
import { TasklineError } from '../core/errors.js';
import type {
  DelegationFilter,
  DelegationPage,
  DelegationPatch,
  DelegationRecord,
  DelegationStore,
  OverdueRecord,
  StageStatus,
  StageUpdate,
  UpdateOptions,
} from './record.js';
import {
  applyPatch,
  applyStage,
  deadlineWritten,
  dueStages,
  existsError,
  normalizeRecord,
  notFoundError,
  openDeadline,
  overdueBound,
  pageLimit,
  staleStages,
} from './stores/common.js';
import { decodeCursor, encodeCursor, matchFilter, parseDelegationFilter } from './stores/filter.js';
import { isPlainObject } from './validate.js';

/** Options for {@link MemoryDelegationStore}. */
export interface MemoryDelegationStoreOptions {
  /** Source of stage times (ms since epoch); the wall clock by default. */
  now?: () => number;
}

/**
 * A private deep copy through JSON — what the SQL stores keep too — so the memory store
 * accepts and returns exactly the same data; anything JSON cannot hold is `invalid_argument`.
 */
function copy<T>(value: T, what: string): T {
  // A string (the usual delegation_result) is immutable and already plain JSON.
  if (typeof value === 'string') return value;
  try {
    // A flat object of JSON scalars (the usual sub_task_data) is copied without a JSON text.
    const flat = flatCopy(value);
    if (flat) return flat as T;
    return JSON.parse(JSON.stringify(value)) as T;
  } catch (error) {
    throw new TasklineError(
      'invalid_argument',
      `${what} must be plain JSON data: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/**
 * The copy JSON would make of a plain object whose own enumerable values are all strings,
 * booleans, null or finite numbers (not -0); undefined for anything else (a `toJSON`, an
 * inherited enumerable key, a nested value), which goes through JSON instead.
 */
function flatCopy(value: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(value) || typeof value.toJSON === 'function') return undefined;
  const out: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return undefined;
    const v = value[key];
    const scalar =
      v === null ||
      typeof v === 'string' ||
      typeof v === 'boolean' ||
      (typeof v === 'number' && Number.isFinite(v) && !Object.is(v, -0));
    if (!scalar) return undefined;
    // JSON.parse makes "__proto__" an own key; plain assignment would set the prototype.
    if (key === '__proto__') {
      Object.defineProperty(out, key, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else out[key] = v;
  }
  return out;
}

/** Freezes a value and everything inside it. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    // for…in over a plain or null-prototype object: its own keys, without an array copy.
    for (const key in value) {
      const inner = (value as Record<string, unknown>)[key];
      if (inner !== null && typeof inner === 'object') deepFreeze(inner);
    }
  }
  return value;
}

/**
 * Freezes a record the store keeps: the record, its status map and stages, and the JSON
 * inside them (what an earlier write already froze is skipped).
 */
function freezeRecord(record: DelegationRecord): DelegationRecord {
  Object.freeze(record);
  const status = record.status;
  if (!Object.isFrozen(status)) {
    Object.freeze(status);
    for (const stage in status) {
      const st = status[stage]!;
      if (Object.isFrozen(st)) continue;
      Object.freeze(st);
      deepFreeze(st.delegation_result);
    }
  }
  deepFreeze(record.sub_task_data);
  return record;
}

/**
 * Delegation records in process memory: for one process, tests, and the default manager.
 * Records are copied on the way in and handed out frozen (read-only), never shared with
 * the caller's own objects.
 */
export class MemoryDelegationStore implements DelegationStore {
  readonly #records = new Map<string, DelegationRecord>();
  /** Stages written with a deadline already past, by record (never expired). */
  readonly #stale = new Map<string, string[]>();
  readonly #now: () => number;
  #sorted: string[] | undefined;
  #closed = false;

  constructor(options: MemoryDelegationStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** Number of records held. */
  get size(): number {
    return this.#records.size;
  }

  #open(): void {
    if (this.#closed) {
      throw new TasklineError('session_closed', 'This delegation store is closed; open a new one.');
    }
  }

  #must(id: string): DelegationRecord {
    const record = this.#records.get(id);
    if (!record) throw notFoundError(id);
    return record;
  }

  /** Keeps a record's stale stages; most records have none, and keep no entry. */
  #setStale(id: string, stages: string[]): void {
    if (stages.length > 0) this.#stale.set(id, stages);
    else this.#stale.delete(id);
  }

  #ids(): string[] {
    this.#sorted ??= [...this.#records.keys()].sort();
    return this.#sorted;
  }

  async create(record: DelegationRecord): Promise<DelegationRecord> {
    this.#open();
    // A fresh record with fresh stage objects, private to this store from here on.
    const parsed = normalizeRecord(record);
    if (this.#records.has(parsed.delegation_id)) throw existsError(parsed.delegation_id);
    // sub_task_data and stage results may still hold the caller's objects: copy those.
    const status = parsed.status;
    for (const stage in status) {
      const st: StageStatus = status[stage]!;
      if (st.delegation_result !== undefined) {
        st.delegation_result = copy(st.delegation_result, 'delegation_result');
      }
    }
    parsed.sub_task_data = copy(parsed.sub_task_data, 'sub_task_data');
    const stored = freezeRecord(parsed);
    this.#records.set(stored.delegation_id, stored);
    this.#setStale(stored.delegation_id, staleStages(stored, 'all', this.#now()));
    this.#sorted = undefined;
    return stored;
  }

  async get(id: string): Promise<DelegationRecord | undefined> {
    this.#open();
    return this.#records.get(id);
  }

  async setStage(id: string, stage: string, update: StageUpdate): Promise<DelegationRecord> {
    this.#open();
    const result = update.delegation_result;
    const own =
      result === undefined || typeof result === 'string'
        ? update
        : { ...update, delegation_result: copy(result, 'delegation_result') };
    const now = this.#now();
    const { record } = applyStage(this.#must(id), stage, own, now);
    const stored = freezeRecord(record);
    this.#records.set(id, stored);
    this.#setStale(
      id,
      staleStages(stored, deadlineWritten(stage, update), now, this.#stale.get(id)),
    );
    return stored;
  }

  async update(
    id: string,
    patch: DelegationPatch,
    options: UpdateOptions = {},
  ): Promise<DelegationRecord> {
    this.#open();
    const record = applyPatch(this.#must(id), patch, options);
    const stored = freezeRecord({
      ...record,
      sub_task_data: copy(record.sub_task_data, 'sub_task_data'),
    });
    this.#records.set(id, stored);
    return stored;
  }

  async delete(id: string): Promise<boolean> {
    this.#open();
    const deleted = this.#records.delete(id);
    this.#stale.delete(id);
    if (deleted) this.#sorted = undefined;
    return deleted;
  }

  async query(
    filter: DelegationFilter,
    page: { limit?: number; cursor?: string } = {},
  ): Promise<DelegationPage> {
    this.#open();
    const node = parseDelegationFilter(filter);
    const limit = pageLimit(page.limit);
    const after = page.cursor !== undefined ? decodeCursor(page.cursor) : undefined;
    const items: DelegationRecord[] = [];
    let more = false;
    for (const id of this.#ids()) {
      if (after !== undefined && id <= after) continue;
      const record = this.#records.get(id);
      if (!record || !matchFilter(node, record)) continue;
      if (items.length === limit) {
        more = true;
        break;
      }
      items.push(record);
    }
    const last = items.at(-1);
    return more && last ? { items, next: encodeCursor(last.delegation_id) } : { items };
  }

  async overdue(nowMs: number, limit = 100): Promise<OverdueRecord[]> {
    this.#open();
    const bound = overdueBound(nowMs);
    const out: OverdueRecord[] = [];
    for (const id of this.#ids()) {
      const record = this.#records.get(id);
      const stale = this.#stale.get(id) ?? [];
      const deadline = record ? openDeadline(record, stale) : null;
      if (record && deadline !== null && deadline <= bound) {
        out.push({ record, stages: dueStages(record, stale, nowMs) });
      }
      if (out.length >= limit) break;
    }
    return out;
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
