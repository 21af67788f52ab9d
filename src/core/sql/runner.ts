/**
 * What a store's SQL runs on, whichever database: the dialect its statements are written in,
 * and a runner that executes one statement (see sqliteRunner and pgRunner).
 */

/** Which SQL the statements are written in (placeholders differ: `$1` or `?`). */
export type SqlDialect = 'postgres' | 'sqlite';

/** Runs one statement and says how many rows it wrote, or reads one row. */
export interface SqlRunner {
  run(sql: string, values: unknown[]): Promise<number>;
  get<R>(sql: string, values: unknown[]): Promise<R | undefined>;
}
