/**
 * Opening an embedded SQLite database (better-sqlite3) the same way for every store: the file
 * and its directory created if missing, WAL journal, `synchronous = NORMAL`, and a bounded
 * wait for another process's write lock. better-sqlite3 is loaded on the first store that
 * opens a file, never by `import 'taskline'` (an app passing its own handle never loads it).
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { TasklineError } from '../errors.js';
import { requireOptional } from '../optional.js';
import type { SqlRunner } from './runner.js';

/** Longest wait for another connection's write lock before SQLITE_BUSY, in every store. */
export const SQLITE_BUSY_TIMEOUT_MS = 10_000;

/** What a SQLite store is given: a database file, or an open handle. */
export type SqliteSource =
  | {
      /** Database file (created with its directory if missing; ":memory:" works), in WAL mode. */
      path: string;
      db?: undefined;
    }
  | {
      /** An open better-sqlite3 handle; the caller keeps ownership and its pragmas. */
      db: Database.Database;
      path?: undefined;
    };

/** A store's database and whether the store opened it (and so closes it). */
export interface SqliteHandle {
  db: Database.Database;
  owned: boolean;
  /** Closes the database if the store opened it; a handle passed in stays open. */
  close(): void;
}

let driver: typeof Database | undefined;

/**
 * The database a store runs on: the caller's `db`, or the file at `path` opened in WAL mode.
 * `what` names the store in errors ("the SQLite checkpoint store").
 */
export function openSqlite(source: Partial<SqliteSource>, what: string): SqliteHandle {
  let db = source.db;
  const owned = db === undefined;
  if (!db) {
    const path = source.path;
    if (typeof path !== 'string' || path.length === 0) {
      throw new TasklineError(
        'invalid_argument',
        `Give \`path\` (a database file) or \`db\` (an open handle) for ${what}.`,
      );
    }
    driver ??= requireOptional(
      () => createRequire(import.meta.url)('better-sqlite3') as typeof Database,
      'better-sqlite3',
      what,
    );
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    db = new driver(path, { timeout: SQLITE_BUSY_TIMEOUT_MS });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
  }
  const handle = db;
  return {
    db: handle,
    owned,
    close: () => {
      if (owned && handle.open) handle.close();
    },
  };
}

/**
 * A {@link SqlRunner} on a database: statements are prepared once and kept (a store runs a
 * fixed set of them; the cache is emptied past `maxStatements` all the same).
 */
export function sqliteRunner(
  db: Database.Database,
  maxStatements = 200,
): SqlRunner & {
  prepared(sql: string): Database.Statement;
} {
  const cache = new Map<string, Database.Statement>();
  const prepared = (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) {
      if (cache.size >= maxStatements) cache.clear();
      stmt = db.prepare(sql);
      cache.set(sql, stmt);
    }
    return stmt;
  };
  return {
    prepared,
    async run(sql, values) {
      return prepared(sql).run(...values).changes;
    },
    async get<R>(sql: string, values: unknown[]) {
      return prepared(sql).get(...values) as R | undefined;
    },
  };
}
