/**
 * Delegation records and events, side by side with the raw drivers:
 *   - record writes/s through SqliteDelegationStore / PostgresDelegationStore (validation,
 *     a new incarnation id, outbox row in the same transaction) vs better-sqlite3 / pg doing the
 *     same inserts (same tables, same rows, same transaction shape) — goal ≥ 80 %;
 *   - event publish → receive latency (p50/p99), ping-pong, on the in-process bus and on
 *     NATS JetStream (NatsDelegationBus) vs raw @nats-io JetStream publish + pull consumer;
 *   - HTTP API requests/s (GET and POST, 32 keep-alive connections, client in-process).
 *
 *   npx tsx bench/records-bench.ts [--quick]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { initializeLogger } from '@livekit/agents';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, nanos } from '@nats-io/transport-node';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { DelegationRecord } from '../src/delegation/record.js';
import { openDeadline } from '../src/delegation/stores/common.js';
import { ApiKeys } from '../src/service/api/auth.js';
import { createDelegationsApi } from '../src/service/api/server.js';
import type { DelegationEvent } from '../src/service/bus/events.js';
import { InProcessDelegationBus } from '../src/service/bus/in-process.js';
import { NatsDelegationBus } from '../src/service/bus/nats.js';
import type { DelegationBus } from '../src/service/bus/types.js';
import type { DelegationChange } from '../src/service/stores/change.js';
import { PostgresDelegationStore } from '../src/service/stores/postgres.js';
import { SqliteDelegationStore } from '../src/service/stores/sqlite.js';
import { interleave, median, pairedRatio, type Sample, stopwatch } from './interleave.js';
import type { BenchResult } from './result.js';

/** Sizes of the records benchmark. */
export interface RecordsBenchOptions {
  /** Smaller sizes for a smoke run. */
  quick?: boolean;
}

const PG_URL = process.env.TASKLINE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const NATS_URL = process.env.TASKLINE_NATS_URL ?? '127.0.0.1:4222';
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

function record(tag: string, i: number): DelegationRecord {
  const id = `${tag}-${String(i).padStart(7, '0')}`;
  return {
    delegation_id: id,
    task_id: `task-${i >> 4}`,
    sub_task_id: `sub-${i}`,
    workflow_level: 1,
    delegation_type: 'lookup',
    sender_subject_id: 'voice-bot',
    target_subject_id: 'back-office',
    status: {
      execution: {
        state: 'pending',
        time: Math.floor(T0 / 1000),
        deadline: Math.floor((T0 + 60_000) / 1000),
      },
    },
    sub_task_data: {
      account: `A-${i}`,
      amount: i % 1000,
      note: 'check the balance and read it back',
    },
  };
}

function createChange(r: DelegationRecord): DelegationChange {
  return {
    op: 'create',
    delegation_id: r.delegation_id,
    version: 1,
    incarnation: 'bench',
    time: Math.floor(Date.now() / 1000),
    record: r,
  };
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const round3 = (n: number) => Math.round(n * 1000) / 1000;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

// ---------------------------------------------------------------------------------------------
// Record writes

async function sqliteWrites(n: number, runs: number, dir: string): Promise<BenchResult> {
  let round = 0;
  const files: string[] = [];
  const freshFile = () => {
    const f = join(dir, `w-${round++}.db`);
    files.push(f);
    return f;
  };
  const timing = await interleave(
    {
      store: async (): Promise<Sample> => {
        const store = await SqliteDelegationStore.open({ path: freshFile() });
        const records = Array.from({ length: n }, (_, i) => record('s', i));
        const sw = stopwatch();
        for (const r of records) await store.create(r);
        const t = sw.stop(n);
        return { ...t, cleanup: () => store.close() };
      },
      raw: async (): Promise<Sample> => {
        const path = freshFile();
        await (await SqliteDelegationStore.open({ path })).close(); // same tables and indexes
        const db = new Database(path);
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL');
        const insert = db.prepare(
          `INSERT INTO "taskline_delegations" (delegation_id, version, incarnation, task_id, sub_task_id,
             workflow_level, delegation_type, sender_subject_id, target_subject_id, status, sub_task_data,
             open_deadline)
           VALUES (?, 1, 'bench', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        );
        const outbox = db.prepare(
          'INSERT INTO "taskline_delegation_outbox" (delegation_id, version, change) VALUES (?, 1, ?)',
        );
        const write = db.transaction((r: DelegationRecord) => {
          insert.run(
            r.delegation_id,
            r.task_id,
            r.sub_task_id,
            r.workflow_level,
            r.delegation_type,
            r.sender_subject_id,
            r.target_subject_id,
            JSON.stringify(r.status),
            JSON.stringify(r.sub_task_data),
            r.status.execution?.deadline ?? null,
          );
          outbox.run(r.delegation_id, JSON.stringify(createChange(r)));
        });
        const records = Array.from({ length: n }, (_, i) => record('s', i));
        const sw = stopwatch();
        for (const r of records) write.immediate(r);
        const t = sw.stop(n);
        return {
          ...t,
          cleanup: async () => {
            db.close();
          },
        };
      },
    },
    { warmup: 1, runs },
  );
  const store = 1000 / median(timing.store.wall);
  const raw = 1000 / median(timing.raw.wall);
  for (const f of files) rmSync(f, { force: true });
  return {
    name: 'records.write.sqlite',
    metric: `create() of ${n} records, one transaction each (record + outbox row), WAL`,
    value: Math.round(store),
    unit: 'writes/s',
    baseline: Math.round(raw),
    ratio: round3(store / raw),
    note: `baseline: better-sqlite3 prepared inserts of the same rows; goal ratio ≥ 0.8; median of ${runs} interleaved rounds; paired per-round ratio ${round3(pairedRatio(timing.raw.wall, timing.store.wall))}; CPU ratio ${round3(median(timing.raw.cpu) / median(timing.store.cpu))}`,
  };
}

async function postgresWrites(n: number, runs: number, inFlight: number): Promise<BenchResult> {
  const schema = `bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: PG_URL, max: inFlight });
  let round = 0;
  const run = async (write: (r: DelegationRecord) => Promise<unknown>, tag: string) => {
    const records = Array.from({ length: n }, (_, i) => record(tag, i));
    let next = 0;
    const sw = stopwatch();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < records.length) await write(records[next++]!);
      }),
    );
    return sw.stop(n);
  };
  try {
    const timing = await interleave(
      {
        store: async (): Promise<Sample> => {
          const store = await PostgresDelegationStore.open({
            pool,
            schema,
            prefix: `s${round++}_`,
          });
          const t = await run((r) => store.create(r), 's');
          return { ...t, cleanup: () => store.dropTables() };
        },
        raw: async (): Promise<Sample> => {
          const prefix = `r${round++}_`;
          const store = await PostgresDelegationStore.open({ pool, schema, prefix }); // same tables
          const t = `"${schema}"."${prefix}delegations"`;
          const o = `"${schema}"."${prefix}delegation_outbox"`;
          const sql = `WITH r AS (
              INSERT INTO ${t} (delegation_id, version, incarnation, task_id, sub_task_id, workflow_level,
                delegation_type, sender_subject_id, target_subject_id, status, sub_task_data, open_deadline)
              VALUES ($1, 1, 'bench', $2, $3, $4, $5, $6, $7, $8, $9, $10)
              ON CONFLICT (delegation_id) DO NOTHING RETURNING delegation_id)
            INSERT INTO ${o} (delegation_id, version, change) SELECT delegation_id, 1, $11 FROM r`;
          const timed = await run(
            (r) =>
              pool.query(sql, [
                r.delegation_id,
                r.task_id,
                r.sub_task_id,
                r.workflow_level,
                r.delegation_type,
                r.sender_subject_id,
                r.target_subject_id,
                JSON.stringify(r.status),
                JSON.stringify(r.sub_task_data),
                openDeadline(r),
                JSON.stringify(createChange(r)),
              ]),
            'r',
          );
          return { ...timed, cleanup: () => store.dropTables() };
        },
      },
      { warmup: 1, runs },
    );
    const store = 1000 / median(timing.store.wall);
    const raw = 1000 / median(timing.raw.wall);
    return {
      name: 'records.write.postgres',
      metric: `create() of ${n} records, ${inFlight} in flight (record + outbox row in one statement)`,
      value: Math.round(store),
      unit: 'writes/s',
      baseline: Math.round(raw),
      ratio: round3(store / raw),
      note: `baseline: pg pool.query of the same statement and rows; goal ratio ≥ 0.8; median of ${runs} interleaved rounds; paired per-round ratio ${round3(pairedRatio(timing.raw.wall, timing.store.wall))}`,
    };
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Event latency

function event(i: number, to = 'back-office'): DelegationEvent {
  const r = { ...record('e', i), target_subject_id: to };
  return {
    event: 'delegation_task',
    delegation_id: r.delegation_id,
    version: 1,
    incarnation: 'bench',
    to,
    change: 'create',
    time: Math.floor(Date.now() / 1000),
    record: r,
  };
}

/** Ping-pong: publish one event, wait until the subscriber got it, repeat; ms per event. */
async function busLatency(bus: DelegationBus, n: number, warmup: number): Promise<number[]> {
  let arrived: () => void = () => {};
  const sub = await bus.subscribe('back-office', 'work', () => arrived());
  const latencies: number[] = [];
  for (let i = 0; i < warmup + n; i++) {
    const got = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const t0 = performance.now();
    await bus.publish(event(i));
    await got;
    if (i >= warmup) latencies.push(performance.now() - t0);
  }
  await sub.close();
  return latencies;
}

/**
 * The contract's view: publish through the bus (JetStream store, then the contract JSON on the
 * agent's plain subject) until a plain core-NATS subscriber of that subject has it; ms per event.
 */
async function contractLatency(
  bus: NatsDelegationBus,
  n: number,
  warmup: number,
): Promise<number[]> {
  const nc = await connect({ servers: NATS_URL });
  const agent = `bench-contract-${process.pid}-${randomBytes(3).toString('hex')}`;
  let arrived: () => void = () => {};
  nc.subscribe(agent, {
    callback: (_err, msg) => {
      JSON.parse(msg.string());
      arrived();
    },
  });
  await nc.flush();
  const latencies: number[] = [];
  for (let i = 0; i < warmup + n; i++) {
    const got = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const t0 = performance.now();
    await bus.publish(event(i, agent));
    await got;
    if (i >= warmup) latencies.push(performance.now() - t0);
  }
  await nc.close();
  return latencies;
}

/** Events stored per second through `bus.publish`, one at a time (each waits for its ack). */
async function publishRate(bus: NatsDelegationBus, n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await bus.publish(event(100_000 + i, 'bench-rate'));
  return (n * 1000) / (performance.now() - t0);
}

/** The same ping-pong with the raw NATS client: JetStream publish + durable pull consumer. */
async function rawNatsLatency(n: number, warmup: number): Promise<number[]> {
  const nc = await connect({ servers: NATS_URL });
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const stream = `rawbench_${process.pid}_${randomBytes(3).toString('hex')}`;
  await jsm.streams.add({
    name: stream,
    subjects: [`${stream}.>`],
    duplicate_window: nanos(120_000),
  });
  await jsm.consumers.add(stream, {
    durable_name: 'd',
    ack_policy: 'explicit' as never,
    ack_wait: nanos(30_000),
    filter_subject: `${stream}.to.back-office.work.*`,
  });
  const consumer = await js.consumers.get(stream, 'd');
  const messages = await consumer.consume({ max_messages: 64 });
  let arrived: () => void = () => {};
  void (async () => {
    for await (const m of messages) {
      JSON.parse(m.string());
      m.ack();
      arrived();
    }
  })();
  const latencies: number[] = [];
  for (let i = 0; i < warmup + n; i++) {
    const got = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const e = event(i);
    const t0 = performance.now();
    await js.publish(`${stream}.to.back-office.work.delegation_task`, JSON.stringify(e), {
      msgID: `${e.delegation_id}:delegation_task:1`,
    });
    await got;
    if (i >= warmup) latencies.push(performance.now() - t0);
  }
  await messages.close();
  await jsm.streams.delete(stream);
  await nc.close();
  return latencies;
}

function latencyRows(
  name: string,
  metric: string,
  values: number[],
  base?: number[],
  note = '',
): BenchResult[] {
  return [50, 99].map((p) => {
    const v = percentile(values, p);
    const b = base ? percentile(base, p) : undefined;
    return {
      name: `${name}.p${p}`,
      metric: `${metric}, p${p}`,
      value: round3(v),
      unit: 'ms',
      ...(b !== undefined ? { baseline: round3(b), ratio: round3(v / b) } : {}),
      note,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// HTTP API

async function apiThroughput(n: number, dir: string): Promise<BenchResult[]> {
  const store = await SqliteDelegationStore.open({ path: join(dir, 'api.db') });
  const bus = new InProcessDelegationBus({ maxBuffered: 10_000_000 });
  const key = 'bench-voice-key-0123456789';
  const api = await createDelegationsApi({
    store,
    bus,
    keys: new ApiKeys([{ key, agent: 'voice-bot' }]),
  });
  const url = new URL(await api.listen({ port: 0 }));
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const send = (method: string, path: string, body?: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method,
          path,
          headers: {
            authorization: `Bearer ${key}`,
            ...(body
              ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
              : {}),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const blast = async (count: number, make: (i: number) => Promise<number>, expect: number) => {
    let next = 0;
    let bad = 0;
    const sw = stopwatch();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < count) if ((await make(next++)) !== expect) bad++;
      }),
    );
    const { ms } = sw.stop(count);
    if (bad > 0) throw new Error(`${bad} API requests failed during the bench`);
    return 1000 / ms;
  };
  try {
    await blast(500, (i) => send('POST', '/delegations', JSON.stringify(record('w', i))), 200);
    const post = await blast(
      n,
      (i) => send('POST', '/delegations', JSON.stringify(record('a', i))),
      200,
    );
    const get = await blast(
      n,
      (i) => send('GET', `/delegations/${record('a', i % n).delegation_id}`),
      200,
    );
    const note =
      'SQLite store, in-process bus + outbox publisher, 32 keep-alive connections, client in the same process';
    return [
      {
        name: 'api.post',
        metric: 'POST /delegations (validated create)',
        value: Math.round(post),
        unit: 'req/s',
        note,
      },
      {
        name: 'api.get',
        metric: 'GET /delegations/:id',
        value: Math.round(get),
        unit: 'req/s',
        note,
      },
    ];
  } finally {
    agent.destroy();
    await api.close();
    await bus.close();
    await store.close();
  }
}

/** Runs every measurement and returns the result rows. */
export async function runRecordsBench(options: RecordsBenchOptions = {}): Promise<BenchResult[]> {
  const quick = options.quick ?? false;
  const dir = mkdtempSync(join(tmpdir(), 'taskline-records-bench-'));
  const results: BenchResult[] = [];
  try {
    results.push(await sqliteWrites(quick ? 2_000 : 20_000, quick ? 3 : 7, dir));
    results.push(await postgresWrites(quick ? 1_000 : 5_000, quick ? 3 : 7, 16));

    const n = quick ? 300 : 3_000;
    const warm = quick ? 50 : 300;
    const inproc = new InProcessDelegationBus({ maxBuffered: 1_000_000, dedupeWindow: 1_000_000 });
    results.push(
      ...latencyRows(
        'events.inprocess',
        `publish → receive on the in-process bus, ${n} ping-pongs`,
        await busLatency(inproc, n, warm),
      ),
    );
    await inproc.close();
    const prefix = `bench_${process.pid}_${randomBytes(3).toString('hex')}`;
    const nats = await NatsDelegationBus.connect({ servers: NATS_URL, prefix });
    try {
      const ours = await busLatency(nats, n, warm);
      const raw = await rawNatsLatency(n, warm);
      results.push(
        ...latencyRows(
          'events.nats',
          `publish (JetStream ack) → receive via durable consumer, ${n} ping-pongs`,
          ours,
          raw,
          'baseline: raw @nats-io JetStream publish + pull consume of the same JSON; target p99 ≤ 2 ms',
        ),
      );
      results.push(
        ...latencyRows(
          'events.contract',
          `publish → a plain core-NATS subscriber of the agent's subject has the contract JSON, ${n} ping-pongs`,
          await contractLatency(nats, n, warm),
          ours,
          "baseline: the same publish received through taskline's durable consumer",
        ),
      );
    } finally {
      await nats.deleteStream();
      await nats.close();
    }
    // What the contract's second publish costs: publish rate with and without it, interleaved.
    const on = await NatsDelegationBus.connect({ servers: NATS_URL, prefix: `${prefix}_on` });
    const off = await NatsDelegationBus.connect({
      servers: NATS_URL,
      prefix: `${prefix}_off`,
      contract: false,
    });
    try {
      const rounds = quick ? 3 : 7;
      const per = quick ? 500 : 3_000;
      const withContract: number[] = [];
      const without: number[] = [];
      for (let r = 0; r < rounds; r++) {
        without.push(await publishRate(off, per));
        withContract.push(await publishRate(on, per));
      }
      results.push({
        name: 'events.contract.publish_rate',
        metric: `events stored per second with the contract publish (JetStream + plain subject), ${rounds}×${per}`,
        value: median(withContract),
        unit: 'events/s',
        baseline: Math.round(median(without)),
        ratio: round3(median(withContract) / median(without)),
        note: 'baseline: the same bus with contract: false (JetStream only); median of interleaved rounds',
      });
    } finally {
      for (const b of [on, off]) {
        await b.deleteStream();
        await b.close();
      }
    }
    results.push(...(await apiThroughput(quick ? 2_000 : 20_000, dir)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return results.map((r) => ({ ...r, value: r.unit === 'ms' ? r.value : round1(r.value) }));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  initializeLogger({ pretty: false, level: 'silent' });
  const results = await runRecordsBench({ quick: process.argv.includes('--quick') });
  console.log(JSON.stringify(results, null, 2));
}
