// The shared SQL layer (src/core/sql) on the real databases: names a caller configures are
// refused unless they are plain identifiers, one table declaration creates the same table on
// SQLite and PostgreSQL, and a versioned write lets exactly one of several racing writers win.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { TasklineError } from '../../src/core/errors.js';
import { checkPrefix, quoteIdentifier, quoteTable } from '../../src/core/sql/identifiers.js';
import {
  createTablesOnce,
  inTransaction,
  openPgPool,
  pgRunner,
} from '../../src/core/sql/postgres.js';
import type { SqlRunner } from '../../src/core/sql/runner.js';
import { openSqlite, sqliteRunner } from '../../src/core/sql/sqlite.js';
import { createTableSql, type TableSpec } from '../../src/core/sql/tables.js';
import { VersionedTable } from '../../src/core/sql/versioned.js';
import { PG_URL, serviceMissing } from '../services.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-sql-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error instanceof TasklineError ? error.code : `not a TasklineError: ${String(error)}`;
  }
}

describe('identifiers', () => {
  it('quotes plain names and schema.table, and refuses anything that could carry SQL', () => {
    expect(quoteTable('taskline_files')).toBe('"taskline_files"');
    expect(quoteTable('app.files')).toBe('"app"."files"');
    expect(quoteIdentifier('idx_1')).toBe('"idx_1"');
    for (const bad of [
      'files"; DROP TABLE users; --',
      'a.b.c',
      '1files',
      'fi les',
      '',
      'x'.repeat(64),
      'naïve',
    ]) {
      expect(
        codeOf(() => quoteTable(bad)),
        bad,
      ).toBe('invalid_argument');
    }
    expect(codeOf(() => quoteIdentifier('app.files'))).toBe('invalid_argument');
    expect(checkPrefix('taskline_')).toBe('taskline_');
    expect(codeOf(() => checkPrefix('p'.repeat(42)))).toBe('invalid_argument');
    expect(codeOf(() => checkPrefix('a-b'))).toBe('invalid_argument');
  });
});

const SPEC: TableSpec = {
  columns: {
    id: 'key',
    version: 'integer',
    body: 'json',
    at: 'bigint',
    note: { type: 'text', nullable: true },
    tags: { type: 'json', default: "'[]'" },
  },
  primaryKey: ['id'],
};
const IDS = ['b', 'B', 'a', 'é', 'a/b', 'a0', 'Z'];
/** Byte order of UTF-8, which both dialects' `key` columns sort by. */
const BYTE_ORDER = [...IDS].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));

/** The same checks on either dialect: one declaration, one behaviour. */
function sharedSuite(
  dialect: 'sqlite' | 'postgres',
  open: () => Promise<{ db: SqlRunner; table: string; exec(sql: string): Promise<void> }>,
) {
  it('creates the declared table: keys sort byte by byte, defaults and NOT NULL hold', async () => {
    const { db, table, exec } = await open();
    await exec(createTableSql(dialect, table, SPEC));
    await exec(createTableSql(dialect, table, SPEC)); // IF NOT EXISTS: a second open is fine
    const p = (n: number) => (dialect === 'postgres' ? `$${n}` : '?');
    for (const id of IDS) {
      await db.run(
        `INSERT INTO ${table} (id, version, body, at) VALUES (${p(1)}, 1, ${p(2)}, ${p(3)})`,
        [id, JSON.stringify({ id }), 2 ** 40],
      );
    }
    for (const id of IDS) {
      const row = await db.get<{ tags: unknown; at: unknown }>(
        `SELECT tags, at FROM ${table} WHERE id = ${p(1)}`,
        [id],
      );
      // JSON is text on SQLite and parsed by pg on PostgreSQL: the same value either way.
      const tags = typeof row?.tags === 'string' ? JSON.parse(row.tags) : row?.tags;
      expect(tags).toEqual([]);
      expect(Number(row?.at)).toBe(2 ** 40);
    }
    const ordered = await db.get<{ ids: string }>(
      dialect === 'postgres'
        ? `SELECT string_agg(id, ',' ORDER BY id) AS ids FROM ${table}`
        : `SELECT group_concat(id, ',') AS ids FROM (SELECT id FROM ${table} ORDER BY id)`,
      [],
    );
    expect(ordered?.ids.split(',')).toEqual(BYTE_ORDER);
    await expect(
      db.run(`INSERT INTO ${table} (id, version, body) VALUES (${p(1)}, 1, '{}')`, ['no-at']),
    ).rejects.toThrow(/NOT NULL|null value/i);
  });

  it('a versioned write creates at 0, replaces only the version it read, and reports the winner', async () => {
    const { db, table, exec } = await open();
    await exec(createTableSql(dialect, table, SPEC));
    const rows = new VersionedTable(dialect, table, ['id'], ['body', 'at']);
    const body = (n: number) => [JSON.stringify({ n }), n];
    expect(await rows.write(db, ['r1'], body(1), 0)).toEqual({ written: true, version: 1 });
    expect(await rows.write(db, ['r1'], body(2), 0)).toEqual({ written: false, actual: 1 });
    expect(await rows.write(db, ['r1'], body(3), 1)).toEqual({ written: true, version: 2 });
    expect(await rows.write(db, ['r1'], body(4), 1)).toEqual({ written: false, actual: 2 });
    expect(await rows.write(db, ['none'], body(5), 3)).toEqual({
      written: false,
      actual: undefined,
    });
    // Eight writers that all read version 2: exactly one replaces it.
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => rows.write(db, ['r1'], body(10 + i), 2)),
    );
    expect(results.filter((r) => r.written)).toEqual([{ written: true, version: 3 }]);
    expect(results.filter((r) => !r.written)).toHaveLength(7);
    const stored = await db.get<{ version: number; at: unknown }>(
      `SELECT version, at FROM ${table} WHERE id = ${dialect === 'postgres' ? '$1' : '?'}`,
      ['r1'],
    );
    expect(Number(stored?.version)).toBe(3);
    const winner = results.findIndex((r) => r.written);
    expect(Number(stored?.at)).toBe(10 + winner);
  });
}

describe('SQLite', () => {
  let n = 0;
  const handles: Array<{ close(): void }> = [];
  afterAll(() => {
    for (const h of handles) h.close();
  });
  sharedSuite('sqlite', async () => {
    const handle = openSqlite({ path: join(dir, `nested/${n++}/db.sqlite`) }, 'the SQL test');
    handles.push(handle);
    return {
      db: sqliteRunner(handle.db),
      table: quoteTable('sql_test'),
      exec: async (sql) => void handle.db.exec(sql),
    };
  });

  it('opens a file in WAL mode, creating its directory; refuses a missing path', () => {
    const path = join(dir, 'deep/er/file.sqlite');
    const handle = openSqlite({ path }, 'the SQL test');
    expect(existsSync(path)).toBe(true);
    expect(handle.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(handle.db.pragma('busy_timeout', { simple: true })).toBe(10_000);
    handle.close();
    handle.close(); // twice is fine
    expect(handle.db.open).toBe(false);
    expect(codeOf(() => openSqlite({}, 'the SQL test'))).toBe('invalid_argument');
    expect(codeOf(() => openSqlite({ path: '' }, 'the SQL test'))).toBe('invalid_argument');
  });
});

describe.skipIf(await serviceMissing('postgres'))('PostgreSQL', () => {
  const pools: pg.Pool[] = [];
  const tables: string[] = [];
  afterAll(async () => {
    const pool = new pg.Pool({ connectionString: PG_URL });
    for (const t of tables) await pool.query(`DROP TABLE IF EXISTS ${t}`);
    await pool.end();
    for (const p of pools) await p.end();
  });

  sharedSuite('postgres', async () => {
    const opened = await openPgPool({ connectionString: PG_URL }, 'the SQL test', { max: 8 });
    pools.push(opened.pool);
    const table = quoteTable(`sql_test_${process.pid}_${randomBytes(4).toString('hex')}`);
    tables.push(table);
    return {
      db: pgRunner(opened.gate),
      table,
      exec: async (sql) =>
        createTablesOnce(opened.gate, table, async (c) => void (await c.query(sql))),
    };
  });

  it('rolls a transaction back when it throws, and refuses a store with neither pool nor URL', async () => {
    const opened = await openPgPool({ connectionString: PG_URL }, 'the SQL test', { max: 2 });
    pools.push(opened.pool);
    const table = quoteTable(`sql_tx_${process.pid}_${randomBytes(4).toString('hex')}`);
    tables.push(table);
    await createTablesOnce(opened.gate, table, async (c) => {
      await c.query(createTableSql('postgres', table, SPEC));
    });
    await expect(
      inTransaction(opened.gate, async (c) => {
        await c.query(`INSERT INTO ${table} (id, version, body, at) VALUES ('x', 1, '{}', 0)`);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    const db = pgRunner(opened.gate);
    expect(await db.get(`SELECT id FROM ${table} WHERE id = $1`, ['x'])).toBeUndefined();
    expect(opened.owned).toBe(true);
    await expect(openPgPool({}, 'the SQL test', { max: 1 })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
  });

  it('never ends a pool the caller owns', async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    pools.push(pool);
    const opened = await openPgPool({ pool }, 'the SQL test', { max: 1 });
    await opened.end();
    expect((await pool.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
  });
});
