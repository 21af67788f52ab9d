import type { Pool } from 'pg';
import { TasklineError } from '../../../core/errors.js';
import {
  type BoundedClient,
  PgGate,
  type PostgresTimeouts,
  quoteTable,
  resolvePgTimeouts,
} from '../../../core/postgres.js';
import {
  ancestorsOf,
  checkStoreWrite,
  type PathRange,
  rangeBelow,
  type StoreContentRow,
  StoreFileBackend,
  type StoreMetaRow,
  type StoreNamespaceOptions,
} from './store-common.js';

/**
 * Options of {@link PostgresFileStore}: a pool (owned by the caller), a namespace, a table,
 * and how long any call may wait for the server (`connectTimeoutMs`, `queryTimeoutMs`).
 */
export interface PostgresFileStoreOptions extends StoreNamespaceOptions, PostgresTimeouts {
  /** Connection pool; the store never ends it. */
  pool: Pool;
  /** Table name, optionally schema-qualified ("app.files"); default `taskline_files`. */
  table?: string;
}

interface MetaDbRow {
  path: string;
  size: number;
  modified_at: string | number;
}

interface SnapshotDbRow {
  is_dir: boolean;
  file_ancestor: string | null;
  old_size: number | null;
  total: string;
}

interface ContentDbRow extends MetaDbRow {
  content: string;
}

/**
 * The persistent file backend on PostgreSQL, with the same semantics as the SQLite store: one
 * table keyed by tenant, user and path. Writers to one namespace are serialized by a
 * transaction-scoped advisory lock, so the size caps hold across processes.
 */
export class PostgresFileStore extends StoreFileBackend {
  readonly kind = 'postgres';
  /** The quoted table name this store uses. */
  readonly table: string;
  private readonly pool: PgGate;
  /** Tenant and user as stored: see {@link pgText}. */
  private readonly ns: [string, string];
  private readonly sql: {
    meta: string;
    file: string;
    list: string;
    any: string;
    page: string;
    pageLiteral: string;
    upsert: string;
    remove: string;
    lock: string;
    snapshot: string;
  };

  /** Makes a store; call {@link init} (or use {@link create}) before the table exists. */
  constructor(options: PostgresFileStoreOptions) {
    super(options);
    if (!options.pool) {
      throw new TasklineError('invalid_argument', 'PostgresFileStore needs a pg `pool`.');
    }
    this.pool = new PgGate(options.pool, resolvePgTimeouts(options), 'file store');
    this.ns = [pgText(this.tenant), pgText(this.user)];
    const t = quoteTable(options.table ?? 'taskline_files');
    this.table = t;
    const ns = 'tenant = $1 AND user_id = $2';
    const inRange = `${ns} AND path >= $3 AND path < $4`;
    const cols = 'path, size, modified_at';
    this.sql = {
      meta: `SELECT ${cols} FROM ${t} WHERE ${ns} AND path = $3`,
      file: `SELECT ${cols}, content FROM ${t} WHERE ${ns} AND path = $3`,
      list: `SELECT ${cols} FROM ${t} WHERE ${inRange}`,
      any: `SELECT 1 FROM ${t} WHERE ${inRange} LIMIT 1`,
      page: `SELECT ${cols}, content FROM ${t} WHERE ${inRange} AND path > $5
             ORDER BY path LIMIT $6`,
      pageLiteral: `SELECT ${cols}, content FROM ${t} WHERE ${inRange} AND path > $5
             AND strpos(content, $7) > 0 ORDER BY path LIMIT $6`,
      upsert: `INSERT INTO ${t} (tenant, user_id, path, size, modified_at, content)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (tenant, user_id, path) DO UPDATE SET
               size = EXCLUDED.size, modified_at = EXCLUDED.modified_at, content = EXCLUDED.content`,
      remove: `DELETE FROM ${t} WHERE ${ns} AND path = $3`,
      lock: `SELECT pg_advisory_xact_lock(hashtextextended($1 || ':' || $2 || ':' || $3, 0))`,
      snapshot: `SELECT
          EXISTS (SELECT 1 FROM ${t} WHERE ${inRange}) AS is_dir,
          (SELECT path FROM ${t} WHERE ${ns} AND path = ANY($5::text[]) ORDER BY path LIMIT 1)
            AS file_ancestor,
          (SELECT size FROM ${t} WHERE ${ns} AND path = $6) AS old_size,
          (SELECT COALESCE(SUM(size), 0) FROM ${t} WHERE ${ns})::bigint AS total`,
    };
  }

  /** Makes a store and creates its table if missing. */
  static async create(options: PostgresFileStoreOptions): Promise<PostgresFileStore> {
    const store = new PostgresFileStore(options);
    await store.init();
    return store;
  }

  /** Creates the table if it does not exist yet (safe to call from several processes at once). */
  async init(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // Concurrent CREATE TABLE IF NOT EXISTS can still collide in the catalog; serialize it.
      await client.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
        `taskline_files_ddl:${this.table}`,
      ]);
      await client.query(`CREATE TABLE IF NOT EXISTS ${this.table} (
        tenant text NOT NULL,
        user_id text NOT NULL,
        path text COLLATE "C" NOT NULL,
        size integer NOT NULL,
        modified_at bigint NOT NULL,
        content text NOT NULL,
        PRIMARY KEY (tenant, user_id, path)
      )`);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  protected async getMeta(path: string): Promise<StoreMetaRow | undefined> {
    const rows = await this.query<MetaDbRow>(this.sql.meta, [path]);
    return rows[0] && toMeta(rows[0]);
  }

  protected async getFile(path: string): Promise<StoreContentRow | undefined> {
    const rows = await this.query<ContentDbRow>(this.sql.file, [path]);
    return rows[0] && { ...toMeta(rows[0]), content: rows[0].content };
  }

  protected async listMeta(range: PathRange): Promise<StoreMetaRow[]> {
    const rows = await this.query<MetaDbRow>(this.sql.list, [range.lo, range.hi]);
    return rows.map(toMeta);
  }

  protected async hasAny(range: PathRange): Promise<boolean> {
    return (await this.query(this.sql.any, [range.lo, range.hi])).length > 0;
  }

  protected async contentPage(
    range: PathRange,
    after: string,
    literal: string | undefined,
    limit: number,
  ): Promise<StoreContentRow[]> {
    const rows =
      literal === undefined
        ? await this.query<ContentDbRow>(this.sql.page, [range.lo, range.hi, after, limit])
        : await this.query<ContentDbRow>(this.sql.pageLiteral, [
            range.lo,
            range.hi,
            after,
            limit,
            literal,
          ]);
    return rows.map((r) => ({ ...toMeta(r), content: r.content }));
  }

  protected async putChecked(row: StoreContentRow): Promise<void> {
    await this.transaction(async (client) => {
      await client.query(this.sql.lock, [this.table, ...this.ns]);
      const ns = this.ns;
      const below = rangeBelow(row.path);
      const snap = await client.query<SnapshotDbRow>(this.sql.snapshot, [
        ...ns,
        below.lo,
        below.hi,
        ancestorsOf(row.path),
        row.path,
      ]);
      const s = snap.rows[0];
      checkStoreWrite(
        row.path,
        row.size,
        {
          isDirectory: s?.is_dir === true,
          fileAncestor: s?.file_ancestor ?? undefined,
          oldSize: s?.old_size ?? undefined,
          totalBytes: Number(s?.total ?? 0),
        },
        this.caps,
      );
      await client.query(this.sql.upsert, [...ns, row.path, row.size, row.modifiedAt, row.content]);
    });
  }

  protected async remove(path: string): Promise<boolean> {
    try {
      const res = await this.pool.query(this.sql.remove, [...this.ns, path]);
      return (res.rowCount ?? 0) > 0;
    } catch (err) {
      throw this.explain(err);
    }
  }

  private async query<R extends object = object>(sql: string, args: unknown[]): Promise<R[]> {
    try {
      return (await this.pool.query<R>(sql, [...this.ns, ...args])).rows;
    } catch (err) {
      throw this.explain(err);
    }
  }

  private async transaction(fn: (client: BoundedClient) => Promise<void>): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await fn(client);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw this.explain(err);
    } finally {
      client.release();
    }
  }

  private explain(err: unknown): unknown {
    if (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '42P01') {
      return new TasklineError(
        'invalid_state',
        `Table ${this.table} does not exist; call await store.init() or use ` +
          'PostgresFileStore.create(...) once to create it.',
      );
    }
    return err;
  }
}

/** A lone surrogate, or U+FFFD itself (the marker of the encoding below). */
const UNSTORABLE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\uFFFD/g;

/**
 * A tenant or user id as PostgreSQL stores it. PostgreSQL turns every lone surrogate into
 * U+FFFD, so "x\uD800" and "x\uDBFF" would share one namespace. Each lone surrogate — and
 * U+FFFD itself — is written as U+FFFD followed by its four hex digits, which keeps every
 * two ids apart; an id that is valid Unicode without U+FFFD (every usual id) is unchanged.
 */
export function pgText(id: string): string {
  return id.replace(
    UNSTORABLE,
    (c) => `\uFFFD${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
  );
}

function toMeta(row: MetaDbRow): StoreMetaRow {
  return { path: row.path, size: row.size, modifiedAt: Number(row.modified_at) };
}
