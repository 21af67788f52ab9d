// Fault class: PostgreSQL silent (accepts TCP, never answers), refused, or going silent
// mid-use (a proxy in front of the real server stops forwarding). Every store — delegation
// records, flow checkpoints, files — and `taskline delegations serve --postgres` must give up
// within its bound with a TasklineError `timeout` (or the driver's refusal), never hang.
// Real I/O, so the bound is a hard wall-clock limit on each call; nothing sleeps.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { GOODBYE_LINE, SCORE_QUESTION } from '../../examples/survey/index.js';
import { isTasklineError } from '../../src/core/errors.js';
import { PostgresCheckpointStore } from '../../src/flows/checkpoints/postgres.js';
import { delegationsMain } from '../../src/service/cli/delegations.js';
import { PostgresDelegationStore } from '../../src/service/stores/postgres.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { PostgresFileStore } from '../../src/tools/files/backends/store-postgres.js';
import { makeRecord } from '../delegation/store-suite.js';
import { startSurvey } from '../flows/helpers.js';
import { PG_URL, PgPeer, refusedPort, urlOn } from './pg-peer.js';

const BOUND_MS = 5_000;
const FAST = { connectTimeoutMs: 400, queryTimeoutMs: 400 };
const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
const peers: PgPeer[] = [];
const cleanups: Array<() => Promise<unknown>> = [];
let caller: SimulatedCaller | undefined;

afterEach(async () => {
  await caller?.close();
  caller = undefined;
  for (const p of peers.splice(0)) await p.close();
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

/** Runs `work` and returns how it ended and how long it took (wall clock, real I/O). */
async function timed<T>(work: () => Promise<T>) {
  const started = Date.now();
  const outcome = await work().then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  return { ...outcome, ms: Date.now() - started };
}

function expectTimeout(r: Awaited<ReturnType<typeof timed>>): void {
  expect(r.ok, 'expected the call to fail').toBe(false);
  if (!r.ok) expect(isTasklineError(r.error, 'timeout'), String(r.error)).toBe(true);
  expect(r.ms).toBeLessThan(BOUND_MS);
}

async function silentPeer(): Promise<PgPeer> {
  const peer = await PgPeer.silent();
  peers.push(peer);
  return peer;
}

async function proxy(): Promise<PgPeer> {
  const peer = await PgPeer.proxy();
  peers.push(peer);
  return peer;
}

/** A checkpoint store reached through `peer`, whose table is dropped after the run. */
async function checkpointsVia(peer: PgPeer, table: string): Promise<PostgresCheckpointStore> {
  const store = await PostgresCheckpointStore.connect({
    connectionString: peer.url,
    table,
    ...FAST,
  });
  cleanups.push(async () => {
    const direct = await PostgresCheckpointStore.connect({ connectionString: PG_URL, table });
    await direct.drop();
    await direct.close();
  });
  return store;
}

describe('a silent PostgreSQL (accepts TCP, never answers)', () => {
  it('delegation store: open gives up with timeout', async () => {
    const peer = await silentPeer();
    expectTimeout(
      await timed(() => PostgresDelegationStore.open({ connectionString: peer.url, ...FAST })),
    );
  });

  it('checkpoint store: connect gives up with timeout', async () => {
    const peer = await silentPeer();
    expectTimeout(
      await timed(() => PostgresCheckpointStore.connect({ connectionString: peer.url, ...FAST })),
    );
  });

  it('file store on a pool with no timeouts of its own: create and every call give up', async () => {
    const peer = await silentPeer();
    const pool = new pg.Pool({ connectionString: peer.url });
    const options = { pool, tenant: 't', user: 'u', ...FAST };
    expectTimeout(await timed(() => PostgresFileStore.create(options)));
    const store = new PostgresFileStore(options);
    expectTimeout(await timed(() => store.read('/a.md')));
    expectTimeout(await timed(() => store.write('/a.md', 'x')));
  });

  it('taskline delegations serve --postgres: exits with the timeout instead of hanging', async () => {
    const peer = await silentPeer();
    const dir = mkdtempSync(join(tmpdir(), 'taskline-serve-'));
    const keys = join(dir, 'keys.json');
    writeFileSync(
      keys,
      JSON.stringify({ keys: [{ key: 'admin-key-0123456789abcdef', admin: true }] }),
    );
    vi.stubEnv('TASKLINE_PG_CONNECT_TIMEOUT_MS', '400');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const r = await timed(() =>
        delegationsMain(['serve', '--postgres', peer.url, '--keys', keys, '--port', '0']),
      );
      expect(r).toMatchObject({ ok: true, value: 1 });
      expect(r.ms).toBeLessThan(BOUND_MS);
      expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toMatch(
        /PostgreSQL did not accept a connection within 400 ms/,
      );
    } finally {
      stderr.mockRestore();
      vi.unstubAllEnvs();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a refused connection (nothing listens)', () => {
  it('every store fails at once with the driver’s refusal', async () => {
    const url = urlOn(await refusedPort());
    const pool = new pg.Pool({ connectionString: url });
    const opens: Array<() => Promise<unknown>> = [
      () => PostgresDelegationStore.open({ connectionString: url, ...FAST }),
      () => PostgresCheckpointStore.connect({ connectionString: url, ...FAST }),
      () => PostgresFileStore.create({ pool, tenant: 't', user: 'u', ...FAST }),
    ];
    for (const open of opens) {
      const r = await timed(open);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(String(r.error)).toMatch(/ECONNREFUSED/);
      expect(r.ms).toBeLessThan(BOUND_MS);
    }
    await pool.end();
  });
});

describe('PostgreSQL going silent mid-use', () => {
  it('checkpoint store: a read after the silence times out', async () => {
    const peer = await proxy();
    const store = await checkpointsVia(peer, `taskline_fault_ckpt_${tag}`);
    const key = { flow: 'f', callId: 'c' };
    expect(await store.load(key)).toBeUndefined();
    peer.silence();
    expectTimeout(await timed(() => store.load(key)));
    await store.close();
  });

  it('file store: a read after the silence times out', async () => {
    const peer = await proxy();
    const table = `taskline_fault_files_${tag}`;
    const pool = new pg.Pool({ connectionString: peer.url });
    const store = await PostgresFileStore.create({ pool, table, tenant: 't', user: 'u', ...FAST });
    cleanups.push(async () => {
      const direct = new pg.Pool({ connectionString: PG_URL });
      await direct.query(`DROP TABLE IF EXISTS "${table}"`);
      await direct.end();
    });
    await store.write('/notes.md', 'hello');
    peer.silence();
    expectTimeout(await timed(() => store.read('/notes.md')));
    pool.end().catch(() => undefined);
  });

  it('delegation store: a read after the silence times out', async () => {
    const peer = await proxy();
    const prefix = `taskline_fault_${tag}_`;
    const store = await PostgresDelegationStore.open({
      connectionString: peer.url,
      prefix,
      ...FAST,
    });
    cleanups.push(async () => {
      const direct = new pg.Pool({ connectionString: PG_URL });
      await direct.query(
        `DROP TABLE IF EXISTS "${prefix}delegations", "${prefix}delegation_outbox"`,
      );
      await direct.end();
    });
    await store.create(makeRecord('d-1'));
    peer.silence();
    expectTimeout(await timed(() => store.get('d-1')));
    store.close().catch(() => undefined);
  });

  it('a survey whose checkpoint store goes silent: failed with timeout, goodbye, call ended', async () => {
    const peer = await proxy();
    const checkpoints = await checkpointsVia(peer, `taskline_fault_survey_${tag}`);
    const s = await startSurvey({ checkpoints, callId: `silent-${tag}` });
    caller = s.caller;
    await s.caller.say('yes');
    expect(s.caller.agentLines.at(-1)).toBe(SCORE_QUESTION);
    peer.silence();
    const r = await timed(() => s.caller.dtmf('9'));
    expect(r.ok).toBe(true);
    expect(r.ms).toBeLessThan(BOUND_MS);
    expect(s.agent.result).toMatchObject({
      status: 'failed',
      answers: { consent: true, score: 9 },
      error: { code: 'timeout' },
    });
    expect(s.caller.agentLines.at(-1)).toBe(GOODBYE_LINE);
    expect(s.caller.endedBy).toBe('bot');
    checkpoints.close().catch(() => undefined);
  });
});
