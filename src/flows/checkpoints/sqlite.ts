import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { TasklineError } from '../../core/errors.js';
import { loadOptional } from '../../core/optional.js';
import {
  type Checkpoint,
  CheckpointConflictError,
  type CheckpointKey,
  type CheckpointStore,
  checkKey,
  checkVersion,
  type FlowState,
} from './types.js';

/** Options of {@link SqliteCheckpointStore.open}: a database file, or an open handle. */
export type SqliteCheckpointOptions = {
  /** Table name (letters, digits, "_"). Default `taskline_flow_checkpoints`. */
  table?: string;
} & (
  | {
      /** Database file (created with its directory if missing) opened in WAL mode. */
      path: string;
      db?: undefined;
    }
  | {
      /** An open better-sqlite3 handle; the caller keeps ownership and its pragmas. */
      db: BetterSqlite3.Database;
      path?: undefined;
    }
);

interface Row {
  version: number;
  state: string;
  updated_at: number;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Checkpoints in an embedded SQLite file (better-sqlite3, WAL): the default store. Every
 * write is one immediate transaction that checks the version it replaces, so several
 * processes may share the file and a racing session loses cleanly. better-sqlite3 is
 * loaded on first use, never by `import 'taskline'`.
 */
export class SqliteCheckpointStore implements CheckpointStore {
  readonly kind = 'sqlite';
  private readonly db: BetterSqlite3.Database;
  private readonly owned: boolean;
  private readonly sql: {
    load: BetterSqlite3.Statement<[string, string], Row>;
    insert: BetterSqlite3.Statement<unknown[]>;
    update: BetterSqlite3.Statement<unknown[]>;
    version: BetterSqlite3.Statement<[string, string], { version: number }>;
    remove: BetterSqlite3.Statement<[string, string]>;
  };
  private readonly write: (
    key: CheckpointKey,
    state: FlowState,
    expectedVersion: number,
    json: string,
  ) => number;

  /** Opens (and creates if needed) the checkpoint table; loads better-sqlite3 lazily. */
  static async open(options: SqliteCheckpointOptions): Promise<SqliteCheckpointStore> {
    const table = options.table ?? 'taskline_flow_checkpoints';
    if (!IDENT.test(table)) {
      throw new TasklineError(
        'invalid_argument',
        `Table name ${JSON.stringify(table)} is not allowed; use letters, digits and "_".`,
      );
    }
    if (options.db) return new SqliteCheckpointStore(options.db, table, false);
    if (typeof options.path !== 'string' || options.path.length === 0) {
      throw new TasklineError(
        'invalid_argument',
        'SqliteCheckpointStore needs `path` (a database file) or `db` (an open handle).',
      );
    }
    const { default: Database } = await loadOptional(
      () => import('better-sqlite3'),
      'better-sqlite3',
      'the SQLite checkpoint store',
    );
    if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
    const db = new Database(options.path, { timeout: 10_000 });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    return new SqliteCheckpointStore(db, table, true);
  }

  private constructor(db: BetterSqlite3.Database, table: string, owned: boolean) {
    this.db = db;
    this.owned = owned;
    db.exec(`CREATE TABLE IF NOT EXISTS ${table} (
      flow TEXT NOT NULL,
      call_id TEXT NOT NULL,
      version INTEGER NOT NULL,
      status TEXT NOT NULL,
      position TEXT NOT NULL,
      state TEXT NOT NULL,
      updated_at INTEGER NOT NULL,
      PRIMARY KEY (flow, call_id)
    )`);
    const where = 'flow = ? AND call_id = ?';
    this.sql = {
      load: db.prepare(`SELECT version, state, updated_at FROM ${table} WHERE ${where}`),
      insert: db.prepare(
        `INSERT INTO ${table} (flow, call_id, version, status, position, state, updated_at)
         VALUES (?, ?, 1, ?, ?, ?, ?) ON CONFLICT (flow, call_id) DO NOTHING`,
      ),
      update: db.prepare(
        `UPDATE ${table} SET version = version + 1, status = ?, position = ?, state = ?,
         updated_at = ? WHERE ${where} AND version = ?`,
      ),
      version: db.prepare(`SELECT version FROM ${table} WHERE ${where}`),
      remove: db.prepare(`DELETE FROM ${table} WHERE ${where}`),
    };
    const tx = db.transaction(
      (key: CheckpointKey, state: FlowState, expectedVersion: number, json: string) => {
        const now = Date.now();
        const changes =
          expectedVersion === 0
            ? this.sql.insert.run(key.flow, key.callId, state.status, state.position, json, now)
                .changes
            : this.sql.update.run(
                state.status,
                state.position,
                json,
                now,
                key.flow,
                key.callId,
                expectedVersion,
              ).changes;
        if (changes !== 1) {
          const actual = this.sql.version.get(key.flow, key.callId)?.version;
          throw new CheckpointConflictError(key, expectedVersion, actual);
        }
        return expectedVersion + 1;
      },
    );
    // IMMEDIATE takes the write lock up front, so writers in other processes queue instead
    // of failing with SQLITE_BUSY half-way through.
    this.write = (key, state, expectedVersion, json) =>
      tx.immediate(key, state, expectedVersion, json);
  }

  async load(key: CheckpointKey): Promise<Checkpoint | undefined> {
    checkKey(key);
    const row = this.sql.load.get(key.flow, key.callId);
    if (!row) return undefined;
    return {
      key: { ...key },
      version: row.version,
      state: parseStored(row.state),
      updatedAt: row.updated_at,
    };
  }

  async save(key: CheckpointKey, state: FlowState, expectedVersion: number): Promise<number> {
    checkKey(key);
    checkVersion(expectedVersion);
    return this.write(key, state, expectedVersion, JSON.stringify(state));
  }

  async delete(key: CheckpointKey): Promise<void> {
    checkKey(key);
    this.sql.remove.run(key.flow, key.callId);
  }

  async close(): Promise<void> {
    if (this.owned && this.db.open) this.db.close();
  }
}

/**
 * The stored text as data; text that is not JSON comes back as itself, so the flow refuses
 * it as a corrupt checkpoint (it never trusts what a store returns) instead of failing the store.
 */
function parseStored(text: string): FlowState {
  try {
    return JSON.parse(text) as FlowState;
  } catch {
    return text as unknown as FlowState;
  }
}
