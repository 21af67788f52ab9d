/**
 * The Postgres delegation store's tables and statements: the DDL run once at open (under an
 * advisory lock, so several processes may open at once) and every statement the store runs.
 * The store's logic is ./postgres.ts.
 */
import { oldTablesError } from '../../delegation/stores/common.js';

/** The columns a record is read from. */
export const SELECT = `delegation_id, version, incarnation, task_id, sub_task_id, workflow_level, delegation_type,
  sender_subject_id, target_subject_id, status, sub_task_data, stale_stages`;

/** Every statement the store runs, by name. */
export type PgStatements = Record<
  | 'create'
  | 'get'
  | 'lock'
  | 'setStatus'
  | 'setData'
  | 'delete'
  | 'overdue'
  | 'claim'
  | 'ack'
  | 'release'
  | 'size',
  string
>;

/** The statements for a records table and its outbox (both already quoted). */
export function pgStatements(table: string, outbox: string): PgStatements {
  const t = table;
  const o = outbox;
  return {
    create: `WITH r AS (
        INSERT INTO ${t} (delegation_id, version, incarnation, task_id, sub_task_id, workflow_level,
          delegation_type, sender_subject_id, target_subject_id, status, sub_task_data, open_deadline,
          stale_stages)
        VALUES ($1, 1, $12, $2, $3, $4, $5, $6, $7, $8, $9, $10, $13)
        ON CONFLICT (delegation_id) DO NOTHING RETURNING delegation_id)
      INSERT INTO ${o} (delegation_id, version, change) SELECT delegation_id, 1, $11 FROM r`,
    get: `SELECT ${SELECT} FROM ${t} WHERE delegation_id = $1`,
    lock: `SELECT ${SELECT} FROM ${t} WHERE delegation_id = $1 FOR UPDATE`,
    setStatus: `WITH u AS (
        UPDATE ${t} SET status = $3, open_deadline = $4, stale_stages = $6, version = version + 1
        WHERE delegation_id = $1 AND version = $2 RETURNING version)
      INSERT INTO ${o} (delegation_id, version, change) SELECT $1, version, $5 FROM u`,
    setData: `WITH u AS (
        UPDATE ${t} SET sub_task_data = $3, target_subject_id = $4, task_id = $6, sub_task_id = $7,
          workflow_level = $8, delegation_type = $9, sender_subject_id = $10, version = version + 1
        WHERE delegation_id = $1 AND version = $2 RETURNING version)
      INSERT INTO ${o} (delegation_id, version, change) SELECT $1, version, $5 FROM u`,
    delete: `WITH d AS (DELETE FROM ${t} WHERE delegation_id = $1 AND version = $2 RETURNING version)
      INSERT INTO ${o} (delegation_id, version, change) SELECT $1, version + 1, $3 FROM d`,
    overdue: `SELECT ${SELECT} FROM ${t} WHERE open_deadline IS NOT NULL AND open_deadline <= $1
      ORDER BY open_deadline, delegation_id LIMIT $2`,
    claim: `UPDATE ${o} SET lease_until = $1 WHERE seq IN
      (SELECT seq FROM ${o} WHERE lease_until <= $2 ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING seq, change`,
    ack: `DELETE FROM ${o} WHERE seq = ANY($1::bigint[])`,
    release: `UPDATE ${o} SET lease_until = 0 WHERE seq = ANY($1::bigint[])`,
    size: `SELECT count(*)::int AS n FROM ${o}`,
  };
}

/** What {@link createPgTables} needs: names already checked and quoted. */
export interface PgTableNames {
  schema: string | undefined;
  prefix: string;
  table: string;
  outbox: string;
}

/** Creates the schema, tables and indexes if missing, inside the caller's transaction. */
export async function createPgTables(
  client: { query(sql: string, values?: unknown[]): Promise<{ rows: unknown[] }> },
  { schema, prefix, table, outbox }: PgTableNames,
): Promise<void> {
  const idx = (suffix: string) => `"${prefix}delegations_${suffix}"`;
  // Serialise concurrent first-time setup from several processes.
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [table]);
  if (schema) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await client.query(`CREATE TABLE IF NOT EXISTS ${table} (
    delegation_id TEXT COLLATE "C" PRIMARY KEY,
    version INTEGER NOT NULL,
    incarnation TEXT NOT NULL,
    task_id TEXT NOT NULL,
    sub_task_id TEXT NOT NULL,
    workflow_level INTEGER NOT NULL,
    delegation_type TEXT NOT NULL,
    sender_subject_id TEXT NOT NULL,
    target_subject_id TEXT NOT NULL,
    status JSONB NOT NULL,
    sub_task_data JSONB NOT NULL,
    open_deadline BIGINT,
    stale_stages JSONB NOT NULL DEFAULT '[]'::jsonb
  )`);
  const { rows: columns } = await client.query(
    `SELECT 1 FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'stale_stages' AND NOT attisdropped`,
    [table],
  );
  if (columns.length === 0) throw oldTablesError(table);
  await client.query(`CREATE INDEX IF NOT EXISTS ${idx('sender')} ON ${table} (sender_subject_id)`);
  await client.query(`CREATE INDEX IF NOT EXISTS ${idx('target')} ON ${table} (target_subject_id)`);
  await client.query(`CREATE INDEX IF NOT EXISTS ${idx('task')} ON ${table} (task_id)`);
  await client.query(
    `CREATE INDEX IF NOT EXISTS ${idx('deadline')} ON ${table} (open_deadline) WHERE open_deadline IS NOT NULL`,
  );
  await client.query(`CREATE TABLE IF NOT EXISTS ${outbox} (
    seq BIGSERIAL PRIMARY KEY,
    delegation_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    change JSONB NOT NULL,
    lease_until BIGINT NOT NULL DEFAULT 0
  )`);
}
