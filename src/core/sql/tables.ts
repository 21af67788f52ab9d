/**
 * A store's table declared once and created in either dialect: the column types map to
 * SQLite's and PostgreSQL's own (JSON is TEXT on SQLite, JSONB on PostgreSQL), so the two
 * versions of a store can never drift apart in their columns.
 */
import type { SqlDialect } from './runner.js';

/**
 * A column's type: `key` is text compared byte by byte (COLLATE "C" on PostgreSQL, SQLite's
 * default), so key ranges and ordering agree on both; `serial` is an increasing primary key.
 */
export type ColumnType = 'text' | 'key' | 'integer' | 'bigint' | 'json' | 'serial';

/** A column: its type, and whether it may be NULL or has a default (an SQL literal). */
export type Column = ColumnType | { type: ColumnType; nullable?: boolean; default?: string };

/** A table: its columns in order and its primary key (unless a `serial` column is). */
export interface TableSpec {
  columns: Readonly<Record<string, Column>>;
  primaryKey?: readonly string[];
}

const TYPES: Record<SqlDialect, Record<ColumnType, string>> = {
  postgres: {
    text: 'TEXT',
    key: 'TEXT COLLATE "C"',
    integer: 'INTEGER',
    bigint: 'BIGINT',
    json: 'JSONB',
    serial: 'BIGSERIAL PRIMARY KEY',
  },
  sqlite: {
    text: 'TEXT',
    key: 'TEXT',
    integer: 'INTEGER',
    bigint: 'INTEGER',
    json: 'TEXT',
    serial: 'INTEGER PRIMARY KEY AUTOINCREMENT',
  },
};

/** `CREATE TABLE IF NOT EXISTS` for `table` (already quoted) in `dialect`. */
export function createTableSql(dialect: SqlDialect, table: string, spec: TableSpec): string {
  const lines = Object.entries(spec.columns).map(([name, column]) => {
    const c = typeof column === 'string' ? { type: column } : column;
    const type = TYPES[dialect][c.type];
    const nullable = c.type === 'serial' || c.nullable ? '' : ' NOT NULL';
    const fallback = c.default === undefined ? '' : ` DEFAULT ${c.default}`;
    return `${name} ${type}${nullable}${fallback}`;
  });
  if (spec.primaryKey) lines.push(`PRIMARY KEY (${spec.primaryKey.join(', ')})`);
  return `CREATE TABLE IF NOT EXISTS ${table} (\n  ${lines.join(',\n  ')}\n)`;
}
