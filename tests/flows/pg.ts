import { randomBytes } from 'node:crypto';

/** The Postgres the tests use (TASKLINE_PG_URL, or the local one). */
export const PG_URL = process.env.TASKLINE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A table name no other test run uses. */
export function uniqueTable(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}
