/**
 * Bounded PostgreSQL waits for every store (delegation records, flow checkpoints, files).
 * `pg` waits forever by default: a server that accepts TCP and never answers would hang a
 * store's open, every write, and the process that awaits it. Pools a store creates get
 * `connectionTimeoutMillis`, `query_timeout` and `statement_timeout`; pools a caller passes
 * in are bounded per call through {@link PgGate}. Either way a silent or refusing server
 * becomes a TasklineError `timeout` (or the driver's error) within the bound.
 * Table names are checked and quoted here too ({@link quoteTable}), once for every store.
 * Only `pg` types are imported here: the driver itself is loaded by the stores, on first use.
 */
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { TasklineError } from './errors.js';

/** Connect and query bounds of a PostgreSQL store; see {@link resolvePgTimeouts}. */
export interface PostgresTimeouts {
  /**
   * Longest wait for a connection (TCP, TLS and the server's hello). Default 10,000 ms, or
   * `TASKLINE_PG_CONNECT_TIMEOUT_MS`.
   */
  connectTimeoutMs?: number;
  /**
   * Longest wait for one query's answer (the server also cancels statements running this
   * long). Default 30,000 ms, or `TASKLINE_PG_QUERY_TIMEOUT_MS`.
   */
  queryTimeoutMs?: number;
}

/** The defaults every PostgreSQL store uses. */
export const DEFAULT_PG_TIMEOUTS: Readonly<Required<PostgresTimeouts>> = {
  connectTimeoutMs: 10_000,
  queryTimeoutMs: 30_000,
};

const MAX_MS = 3_600_000;

function bound(
  name: keyof PostgresTimeouts,
  given: number | undefined,
  env: string | undefined,
): number {
  const source = given ?? (env === undefined || env === '' ? undefined : Number(env));
  const value = source ?? DEFAULT_PG_TIMEOUTS[name];
  if (!Number.isFinite(value) || value < 1 || value > MAX_MS) {
    throw new TasklineError(
      'invalid_argument',
      `${name} must be a number of milliseconds from 1 to ${MAX_MS} (got ${String(given ?? env)}).`,
    );
  }
  return Math.round(value);
}

/** Applies the defaults (and environment overrides) and checks the bounds. */
export function resolvePgTimeouts(
  timeouts: PostgresTimeouts = {},
  env: NodeJS.ProcessEnv = process.env,
): Required<PostgresTimeouts> {
  return {
    connectTimeoutMs: bound(
      'connectTimeoutMs',
      timeouts.connectTimeoutMs,
      env.TASKLINE_PG_CONNECT_TIMEOUT_MS,
    ),
    queryTimeoutMs: bound(
      'queryTimeoutMs',
      timeouts.queryTimeoutMs,
      env.TASKLINE_PG_QUERY_TIMEOUT_MS,
    ),
  };
}

/** The `pg.Pool` options that bound a pool a store creates itself. */
export function pgPoolTimeouts(t: Required<PostgresTimeouts>): {
  connectionTimeoutMillis: number;
  query_timeout: number;
  statement_timeout: number;
} {
  return {
    connectionTimeoutMillis: t.connectTimeoutMs,
    query_timeout: t.queryTimeoutMs,
    statement_timeout: t.queryTimeoutMs,
  };
}

/** True for the errors `pg` raises when a connect or query bound runs out. */
function isPgTimeout(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  return /timeout expired|timeout exceeded when trying to connect|Connection terminated due to connection timeout|Query read timeout/i.test(
    message,
  );
}

/**
 * Turns `pg`'s own timeout errors into a TasklineError `timeout` that says what waited and
 * what to do; other errors pass through unchanged.
 */
export function explainPgTimeout(
  error: unknown,
  what: string,
  t: Required<PostgresTimeouts>,
): unknown {
  if (error instanceof TasklineError || !isPgTimeout(error)) return error;
  const query = /Query read timeout/i.test((error as Error).message);
  return query ? queryTimeout(what, t.queryTimeoutMs) : connectTimeout(what, t.connectTimeoutMs);
}

function connectTimeout(what: string, ms: number): TasklineError {
  return new TasklineError(
    'timeout',
    `PostgreSQL did not accept a connection within ${ms} ms (${what}). Check that the server is up and reachable, or raise connectTimeoutMs.`,
    { connectTimeoutMs: ms },
  );
}

function queryTimeout(what: string, ms: number): TasklineError {
  return new TasklineError(
    'timeout',
    `PostgreSQL did not answer within ${ms} ms (${what}). Check the server's load and locks, or raise queryTimeoutMs.`,
    { queryTimeoutMs: ms },
  );
}

/** A checked-out connection whose every query is bounded. */
export interface BoundedClient {
  query<R extends QueryResultRow = QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<QueryResult<R>>;
  /**
   * Returns the connection to the pool; destroyed instead if a query timed out on it or
   * `broken` is given (e.g. a failed ROLLBACK).
   */
  release(broken?: Error | boolean): void;
}

/**
 * A pool with every wait bounded, whoever configured it: `connect()` gives up after
 * `connectTimeoutMs` (a late connection is released when it arrives) and each query after
 * `queryTimeoutMs` (the connection is then destroyed, not reused).
 */
export class PgGate {
  readonly timeouts: Required<PostgresTimeouts>;

  constructor(
    private readonly pool: Pool,
    timeouts: Required<PostgresTimeouts>,
    private readonly what: string,
  ) {
    this.timeouts = timeouts;
  }

  /** A connection from the pool within `connectTimeoutMs`, or a TasklineError `timeout`. */
  async connect(): Promise<BoundedClient> {
    const ms = this.timeouts.connectTimeoutMs;
    const pending = this.pool.connect();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(connectTimeout(this.what, ms)), ms);
    });
    let client: PoolClient;
    try {
      client = await Promise.race([pending, late]);
    } catch (error) {
      // A connection that arrives after we gave up goes back broken, never to a caller.
      pending.then(
        (c) => c.release(true),
        () => undefined,
      );
      throw explainPgTimeout(error, this.what, this.timeouts);
    } finally {
      clearTimeout(timer);
    }
    return this.bounded(client);
  }

  /** One bounded query on a connection of its own. */
  async query<R extends QueryResultRow = QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<QueryResult<R>> {
    const client = await this.connect();
    try {
      return await client.query<R>(text, values);
    } finally {
      client.release();
    }
  }

  private bounded(client: PoolClient): BoundedClient {
    const { what, timeouts } = this;
    let broken = false;
    return {
      async query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]) {
        if (broken) {
          // A ROLLBACK after a timeout would only wait again on the same silent server.
          throw queryTimeout(what, timeouts.queryTimeoutMs);
        }
        try {
          // `query_timeout` per query is honoured by pg at run time (not in its types).
          const config = { text, values, query_timeout: timeouts.queryTimeoutMs };
          return await client.query<R>(config as { text: string; values?: unknown[] });
        } catch (error) {
          if (isPgTimeout(error)) broken = true;
          throw explainPgTimeout(error, what, timeouts);
        }
      },
      release(failed?: Error | boolean) {
        client.release(broken ? true : failed || undefined);
      },
    };
  }
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * A table name a caller configured, checked and quoted for SQL (`schema.table` allowed): only
 * letters, digits and `_`, so a name can never carry SQL. Every PostgreSQL store uses it.
 */
export function quoteTable(table: string): string {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((p) => IDENTIFIER.test(p))) {
    throw new TasklineError(
      'invalid_argument',
      `Table name ${JSON.stringify(table)} is not allowed; use letters, digits and "_" ` +
        '(optionally "schema.table").',
    );
  }
  return parts.map((p) => `"${p}"`).join('.');
}
