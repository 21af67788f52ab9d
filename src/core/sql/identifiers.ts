/**
 * Names a caller configures (a table, a schema, a table prefix) checked and quoted for SQL,
 * once for every store on SQLite and PostgreSQL: only letters, digits and `_`, so a name can
 * never carry SQL.
 */
import { TasklineError } from '../errors.js';

/** PostgreSQL's longest identifier is 63 bytes; SQLite takes the same names. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A table name (`table`, or `schema.table` when `schema` is allowed), checked and quoted. */
export function quoteTable(table: string, allow: { schema?: boolean } = { schema: true }): string {
  const parts = table.split('.');
  const max = allow.schema === false ? 1 : 2;
  if (parts.length > max || !parts.every((p) => IDENTIFIER.test(p))) {
    throw new TasklineError(
      'invalid_argument',
      `Table name ${JSON.stringify(table)} is not allowed; use letters, digits and "_"` +
        (max === 2 ? ' (optionally "schema.table").' : '.'),
    );
  }
  return parts.map((p) => `"${p}"`).join('.');
}

/** One identifier (a schema, an index), checked and quoted. */
export function quoteIdentifier(name: string): string {
  return quoteTable(name, { schema: false });
}

/**
 * A table-name prefix, checked: short enough that the longest name made from it (prefix plus
 * a suffix of up to 22 characters) is still an identifier.
 */
export function checkPrefix(prefix: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(prefix)) {
    throw new TasklineError(
      'invalid_argument',
      `Table prefix ${JSON.stringify(prefix)} is not allowed; use up to 41 letters, digits and "_".`,
    );
  }
  return prefix;
}
