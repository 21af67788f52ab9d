import type Database from 'better-sqlite3';
import { openSqlite, type SqliteHandle, type SqliteSource } from '../../../../core/sql/sqlite.js';
import { createTableSql } from '../../../../core/sql/tables.js';
import {
  ancestorsOf,
  checkStoreWrite,
  FILES_TABLE,
  type PathRange,
  rangeBelow,
  type StoreContentRow,
  StoreFileBackend,
  type StoreMetaRow,
  type StoreNamespaceOptions,
} from './store-common.js';

/** Options of {@link SqliteFileStore}: a database file (or open handle) plus the namespace. */
export type SqliteFileStoreOptions = StoreNamespaceOptions & SqliteSource;

const NS = 'tenant = @tenant AND user_id = @user';
const IN_RANGE = `${NS} AND path >= @lo AND path < @hi`;

interface MetaDbRow {
  path: string;
  size: number;
  modified_at: number;
}

interface ContentDbRow extends MetaDbRow {
  content: string;
}

/**
 * The persistent file backend on embedded SQLite (better-sqlite3): one `taskline_files` table,
 * every row keyed by tenant, user and path, so one user never sees another's files. Several
 * processes may share the file; writes are serialized by SQLite's write lock (WAL mode).
 */
export class SqliteFileStore extends StoreFileBackend {
  readonly kind = 'sqlite';
  private readonly db: Database.Database;
  private readonly handle: SqliteHandle;
  private readonly ns: { tenant: string; user: string };
  private readonly stmt: {
    meta: Statement<MetaDbRow>;
    file: Statement<ContentDbRow>;
    list: Statement<MetaDbRow>;
    any: Statement<{ one: number }>;
    page: Statement<ContentDbRow>;
    pageLiteral: Statement<ContentDbRow>;
    total: Statement<{ total: number }>;
    upsert: Statement<unknown>;
    remove: Statement<unknown>;
  };
  private readonly writeTx: (row: StoreContentRow) => void;

  constructor(options: SqliteFileStoreOptions) {
    super(options);
    this.ns = { tenant: this.tenant, user: this.user };
    this.handle = openSqlite(options, 'the SQLite file store');
    this.db = this.handle.db;
    this.db.exec(createTableSql('sqlite', 'taskline_files', FILES_TABLE));
    const cols = 'path, size, modified_at';
    this.stmt = {
      meta: prepare(this.db, `SELECT ${cols} FROM taskline_files WHERE ${NS} AND path = @path`),
      file: prepare(
        this.db,
        `SELECT ${cols}, content FROM taskline_files WHERE ${NS} AND path = @path`,
      ),
      list: prepare(this.db, `SELECT ${cols} FROM taskline_files WHERE ${IN_RANGE}`),
      any: prepare(this.db, `SELECT 1 AS one FROM taskline_files WHERE ${IN_RANGE} LIMIT 1`),
      page: prepare(
        this.db,
        `SELECT ${cols}, content FROM taskline_files WHERE ${IN_RANGE} AND path > @after
         ORDER BY path LIMIT @limit`,
      ),
      pageLiteral: prepare(
        this.db,
        `SELECT ${cols}, content FROM taskline_files WHERE ${IN_RANGE} AND path > @after
         AND instr(content, @literal) > 0 ORDER BY path LIMIT @limit`,
      ),
      total: prepare(
        this.db,
        `SELECT COALESCE(SUM(size), 0) AS total FROM taskline_files WHERE ${NS}`,
      ),
      upsert: prepare(
        this.db,
        `INSERT INTO taskline_files (tenant, user_id, path, size, modified_at, content)
         VALUES (@tenant, @user, @path, @size, @modifiedAt, @content)
         ON CONFLICT (tenant, user_id, path) DO UPDATE SET
           size = excluded.size, modified_at = excluded.modified_at, content = excluded.content`,
      ),
      remove: prepare(this.db, `DELETE FROM taskline_files WHERE ${NS} AND path = @path`),
    };
    const tx = this.db.transaction((row: StoreContentRow) => {
      const ancestors = ancestorsOf(row.path);
      let fileAncestor: string | undefined;
      for (const a of ancestors) {
        if (this.stmt.meta.get({ ...this.ns, path: a })) {
          fileAncestor = a;
          break;
        }
      }
      checkStoreWrite(
        row.path,
        row.size,
        {
          isDirectory: this.stmt.any.get({ ...this.ns, ...rangeBelow(row.path) }) !== undefined,
          fileAncestor,
          oldSize: this.stmt.meta.get({ ...this.ns, path: row.path })?.size,
          totalBytes: this.stmt.total.get(this.ns)?.total ?? 0,
        },
        this.caps,
      );
      this.stmt.upsert.run({ ...this.ns, ...row });
    });
    // IMMEDIATE takes the write lock before the checks, so concurrent writers cannot race the caps.
    this.writeTx = (row) => tx.immediate(row);
  }

  /** Closes the database if this store opened it; a handle passed in as `db` stays open. */
  close(): void {
    this.handle.close();
  }

  protected async getMeta(path: string): Promise<StoreMetaRow | undefined> {
    const row = this.stmt.meta.get({ ...this.ns, path });
    return row && toMeta(row);
  }

  protected async getFile(path: string): Promise<StoreContentRow | undefined> {
    const row = this.stmt.file.get({ ...this.ns, path });
    return row && { ...toMeta(row), content: row.content };
  }

  protected async listMeta(range: PathRange): Promise<StoreMetaRow[]> {
    return this.stmt.list.all({ ...this.ns, ...range }).map(toMeta);
  }

  protected async hasAny(range: PathRange): Promise<boolean> {
    return this.stmt.any.get({ ...this.ns, ...range }) !== undefined;
  }

  protected async contentPage(
    range: PathRange,
    after: string,
    literal: string | undefined,
    limit: number,
  ): Promise<StoreContentRow[]> {
    const args = { ...this.ns, ...range, after, limit };
    const rows =
      literal === undefined
        ? this.stmt.page.all(args)
        : this.stmt.pageLiteral.all({ ...args, literal });
    return rows.map((r) => ({ ...toMeta(r), content: r.content }));
  }

  protected async putChecked(row: StoreContentRow): Promise<void> {
    this.writeTx(row);
  }

  protected async remove(path: string): Promise<boolean> {
    return this.stmt.remove.run({ ...this.ns, path }).changes > 0;
  }
}

type Params = Record<string, unknown>;
type Statement<R> = Database.Statement<Params, R>;

function prepare<R>(db: Database.Database, sql: string): Statement<R> {
  return db.prepare<Params, R>(sql);
}

function toMeta(row: MetaDbRow): StoreMetaRow {
  return { path: row.path, size: row.size, modifiedAt: row.modified_at };
}
