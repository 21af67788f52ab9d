/** The Postgres delegation store's statements, and the DDL it runs once at open. */
import { quoteIdentifier } from '../../core/sql/identifiers.js';
import type { BoundedClient } from '../../core/sql/postgres.js';
import { oldTablesError } from '../../delegation/stores/common.js';
import { delegationTablesSql, SELECT } from './rows.js';

/** Every statement the store runs, by name. */
export type PgStatements = ReturnType<typeof pgStatements>;

/** The statements for a records table and its outbox (both already quoted). */
export function pgStatements(table: string, outbox: string) {
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
    lock: `SELECT ${SELECT} FROM ${t} WHERE delegation_id = $1 FOR UPDATE`,
    setStatus: `WITH u AS (
        UPDATE ${t} SET status = $3, open_deadline = $4, stale_stages = $6, version = version + 1
        WHERE delegation_id = $1 AND version = $2 RETURNING version)
      INSERT INTO ${o} (delegation_id, version, change) SELECT $1, version, $5 FROM u`,
    setData: `WITH u AS (
        UPDATE ${t} SET task_id = $3, sub_task_id = $4, workflow_level = $5, delegation_type = $6,
          sender_subject_id = $7, target_subject_id = $8, sub_task_data = $9, version = version + 1
        WHERE delegation_id = $1 AND version = $2 RETURNING version)
      INSERT INTO ${o} (delegation_id, version, change) SELECT $1, version, $10 FROM u`,
    delete: `WITH d AS (DELETE FROM ${t} WHERE delegation_id = $1 AND version = $2 RETURNING version)
      INSERT INTO ${o} (delegation_id, version, change) SELECT $1, version + 1, $3 FROM d`,
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
export async function createPgTables(client: BoundedClient, names: PgTableNames): Promise<void> {
  const { schema, table } = names;
  if (schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
  const [records, ...rest] = delegationTablesSql('postgres', names);
  await client.query(records as string);
  const { rows: columns } = await client.query(
    `SELECT 1 FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'stale_stages' AND NOT attisdropped`,
    [table],
  );
  if (columns.length === 0) throw oldTablesError(table);
  for (const sql of rest) await client.query(sql);
}
