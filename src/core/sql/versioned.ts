/**
 * A versioned write (compare-and-set on an integer `version` column), the same on SQLite and
 * PostgreSQL: a row is created at version 1 only if its key is free, and replaced only if the
 * stored version is the one the writer read. Each statement is atomic on its own, so two
 * writers racing on one row cannot both win, whatever the isolation level.
 */
import type { SqlDialect, SqlRunner } from './runner.js';

/** What a versioned write did: the new version, or the version that beat it (none: no row). */
export type VersionedResult =
  | { written: true; version: number }
  | { written: false; actual: number | undefined };

/** The statements of a versioned write on one table, and how to order their values. */
export class VersionedTable {
  private readonly insertSql: string;
  private readonly updateSql: string;
  private readonly versionSql: string;

  /**
   * `table` is already quoted (see quoteTable); `key` and `columns` are column names the store
   * itself wrote (never a caller's input).
   */
  constructor(
    private readonly dialect: SqlDialect,
    table: string,
    key: readonly string[],
    columns: readonly string[],
  ) {
    const pg = dialect === 'postgres';
    // Values are always given as key..., columns..., expected version; SQLite's `?` follow the
    // order they appear in, so its UPDATE takes them in a different order (see values()).
    const k = (i: number) => (pg ? `$${i + 1}` : '?');
    const c = (i: number) => (pg ? `$${key.length + i + 1}` : '?');
    const whereKey = key.map((name, i) => `${name} = ${k(i)}`).join(' AND ');
    this.insertSql = `INSERT INTO ${table} (${[...key, 'version', ...columns].join(', ')})
      VALUES (${[...key.map((_, i) => k(i)), '1', ...columns.map((_, i) => c(i))].join(', ')})
      ON CONFLICT (${key.join(', ')}) DO NOTHING`;
    const set = columns.map((name, i) => `${name} = ${c(i)}`).join(', ');
    const expected = pg ? `$${key.length + columns.length + 1}` : '?';
    this.updateSql = `UPDATE ${table} SET version = version + 1, ${set}
      WHERE ${whereKey} AND version = ${expected}`;
    this.versionSql = `SELECT version FROM ${table} WHERE ${whereKey}`;
  }

  /**
   * Writes `columns` for `key` if the stored version is `expected` (0: no row yet), and says
   * which version it wrote or which version is there instead.
   */
  async write(
    db: SqlRunner,
    key: readonly unknown[],
    columns: readonly unknown[],
    expected: number,
  ): Promise<VersionedResult> {
    const written =
      expected === 0
        ? await db.run(this.insertSql, [...key, ...columns])
        : await db.run(this.updateSql, this.updateValues(key, columns, expected));
    if (written === 1) return { written: true, version: expected + 1 };
    const row = await db.get<{ version: number }>(this.versionSql, [...key]);
    return { written: false, actual: row === undefined ? undefined : Number(row.version) };
  }

  private updateValues(key: readonly unknown[], columns: readonly unknown[], expected: number) {
    return this.dialect === 'postgres'
      ? [...key, ...columns, expected]
      : [...columns, ...key, expected];
  }
}
