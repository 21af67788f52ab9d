import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiKeys } from '../../src/service/api/auth.js';
import { createDelegationsApi, type DelegationsApi } from '../../src/service/api/server.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { type OutboxPublisher, startOutboxPublisher } from '../../src/service/bus/publisher.js';
import type { DelegationBus } from '../../src/service/bus/types.js';
import { ResultSchemaRegistry } from '../../src/service/constraints.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { makeRecord } from './store-suite.js';

const KEYS = {
  voice: 'voice-bot-key-0123456789',
  office: 'back-office-key-0123456789',
  intruder: 'intruder-key-0123456789ab',
  admin: 'admin-key-0123456789abcdef',
};

const dir = mkdtempSync(join(tmpdir(), 'taskline-deleg-api-'));
const clock = new VirtualClock();
let api: DelegationsApi;
let store: SqliteDelegationStore;
let bus: InProcessDelegationBus;
let publisher: OutboxPublisher;
/** Publishes everything written so far. */
const publisherDrained = () => publisher.drain();

beforeAll(async () => {
  store = await SqliteDelegationStore.open({ path: join(dir, 'api.db'), clock });
  bus = new InProcessDelegationBus();
  api = await createDelegationsApi({
    store,
    bus,
    clock,
    bodyLimit: 64 * 1024,
    publisher: false,
    schemas: new ResultSchemaRegistry().register('lookup', z.strictObject({ balance: z.number() })),
    keys: new ApiKeys([
      { key: KEYS.voice, agent: 'voice-bot' },
      { key: KEYS.office, agent: 'back-office' },
      { key: KEYS.intruder, agent: 'intruder' },
      { key: KEYS.admin, admin: true },
    ]),
  });
  publisher = startOutboxPublisher({ store, bus, clock, pollMs: 0 });
});
afterAll(async () => {
  await publisher.close();
  await api.close();
  await bus.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

type Who = keyof typeof KEYS | 'none';
interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  as?: Who;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}

async function call(
  c: Call,
): Promise<{ status: number; body: Record<string, unknown>; res: LightMyRequestResponse }> {
  const headers: Record<string, string> = { ...(c.headers ?? {}) };
  const who = c.as ?? 'voice';
  if (who !== 'none') headers.authorization = `Bearer ${KEYS[who]}`;
  let payload: string | undefined;
  if (c.raw !== undefined) payload = c.raw;
  else if (c.body !== undefined) payload = JSON.stringify(c.body);
  if (payload !== undefined) headers['content-type'] ??= 'application/json';
  const res = await api.app.inject({
    method: c.method,
    url: c.url,
    headers,
    ...(payload !== undefined ? { payload } : {}),
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown>, res };
}

function expectFailure(
  r: { status: number; body: Record<string, unknown> },
  status: number,
  text?: RegExp,
) {
  expect(r.status).toBe(status);
  expect(r.body.success).toBe(false);
  expect(typeof r.body.message).toBe('string');
  if (text) expect(String(r.body.message)).toMatch(text);
}

let seq = 0;
const sec = (ms: number) => Math.floor(ms / 1000);
const fresh = (over: Parameters<typeof makeRecord>[1] = {}) =>
  makeRecord(`api-${String(seq++).padStart(4, '0')}`, {
    status: {
      execution: {
        state: 'pending',
        time: sec(clock.now()),
        deadline: sec(clock.now() + 60_000),
      },
    },
    ...over,
  });
const create = async (over: Partial<ReturnType<typeof makeRecord>> = {}) => {
  const record = { ...fresh(over), ...over };
  const r = await call({ method: 'POST', url: '/delegations', body: record });
  expect(r.status).toBe(200);
  return record.delegation_id;
};

describe('delegations API: authentication and visibility', () => {
  it('401 without a key or with an unknown one; the envelope says what to do', async () => {
    expectFailure(
      await call({ method: 'GET', url: '/delegations/x', as: 'none' }),
      401,
      /Authorization: Bearer/,
    );
    expectFailure(
      await call({
        method: 'GET',
        url: '/delegations/x',
        as: 'none',
        headers: { authorization: 'Bearer nope-nope-nope-nope' },
      }),
      401,
      /Unknown API key/,
    );
    expectFailure(
      await call({
        method: 'GET',
        url: '/delegations/x',
        as: 'none',
        headers: { authorization: `Basic ${KEYS.voice} x` },
      }),
      401,
    );
    // A huge unauthenticated body is refused for the key, before it is read.
    expectFailure(
      await call({ method: 'POST', url: '/delegations', as: 'none', raw: 'x'.repeat(200_000) }),
      401,
    );
  });

  it('parties and admins see a record; a stranger gets the same 404 as for a missing id', async () => {
    const id = await create();
    for (const who of ['voice', 'office', 'admin'] as const) {
      const r = await call({ method: 'GET', url: `/delegations/${id}`, as: who });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ success: true, data: { delegation_id: id } });
    }
    const routes = (target: string): Array<Pick<Call, 'method' | 'url' | 'body'>> => [
      { method: 'GET', url: `/delegations/${target}` },
      { method: 'PUT', url: `/delegations/${target}`, body: { workflow_level: 2 } },
      { method: 'DELETE', url: `/delegations/${target}` },
      {
        method: 'PUT',
        url: `/delegations/${target}/status/execution`,
        body: { state: 'cancelled' },
      },
      { method: 'PUT', url: `/delegations/submit_result/${target}`, body: { state: 'done' } },
    ];
    const missing = 'api-does-not-exist';
    const existing = routes(id);
    const absent = routes(missing);
    for (let i = 0; i < existing.length; i++) {
      const a = await call({ ...existing[i]!, as: 'intruder' });
      const b = await call({ ...absent[i]!, as: 'intruder' });
      expect(a.status).toBe(404);
      expect(b.status).toBe(404);
      expect({ ...a.body, message: String(a.body.message).replace(id, '<id>') }).toEqual({
        ...b.body,
        message: String(b.body.message).replace(missing, '<id>'),
      });
    }
    expect((await call({ method: 'GET', url: `/delegations/${id}` })).status).toBe(200);
  });
});

describe('delegations API: the contract routes and answers', () => {
  it('creates from the contract example (no id, no status) and answers with its message', async () => {
    const body = {
      task_id: 'task123',
      sub_task_id: 'sub456',
      workflow_level: 1,
      delegation_type: 'manual',
      target_subject_id: 'back-office',
      sender_subject_id: 'voice-bot',
      sub_task_data: { key: 'value' },
    };
    const created = await call({ method: 'POST', url: '/delegations', body });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      success: true,
      message: 'Delegation created successfully',
      data: { ...body, status: {} },
    });
    const id = (created.body.data as { delegation_id: string }).delegation_id;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const got = await call({ method: 'GET', url: `/delegations/${id}` });
    expect(got.body).toEqual({ success: true, data: { ...body, delegation_id: id, status: {} } });
  });

  it('sets a stage with the time and deadline the client gives, in epoch seconds', async () => {
    const id = await create({ status: {} });
    const r = await call({
      method: 'PUT',
      url: `/delegations/${id}/status/execution`,
      as: 'office',
      body: { state: 'in_progress', time: 1717390000, deadline: 1717400000 },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      message: 'Delegation status updated successfully',
    });
    const got = await call({ method: 'GET', url: `/delegations/${id}` });
    expect((got.body.data as { status: unknown }).status).toEqual({
      execution: { state: 'in_progress', time: 1717390000, deadline: 1717400000 },
    });
    expectFailure(
      await call({
        method: 'PUT',
        url: `/delegations/${id}/status/execution`,
        as: 'office',
        body: { state: 'in_progress', time: '2024-06-03T05:26:40Z' },
      }),
      400,
      /integer seconds since the epoch/,
    );
  });

  it("submit_result writes status.delegation_result, even after another stage's deadline", async () => {
    const id = await create({ delegation_type: 'manual' });
    await call({
      method: 'PUT',
      url: `/delegations/${id}/status/execution`,
      as: 'office',
      body: { state: 'in_progress', time: 1717390000, deadline: 1717400000 },
    });
    const r = await call({
      method: 'PUT',
      url: `/delegations/submit_result/${id}`,
      as: 'office',
      body: { state: 'done', delegation_result: 'Execution completed successfully' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      message: 'Delegation status updated successfully',
    });
    const got = await call({ method: 'GET', url: `/delegations/${id}` });
    expect((got.body.data as { status: Record<string, unknown> }).status.delegation_result).toEqual(
      {
        state: 'done',
        time: sec(clock.now()),
        delegation_result: 'Execution completed successfully',
      },
    );
  });

  it('finishes a stage whose deadline was already past when written (kept as written)', async () => {
    const id = await create({ delegation_type: 'manual', status: {} });
    const url = `/delegations/${id}/status/execution`;
    await call({
      method: 'PUT',
      url,
      as: 'office',
      body: { state: 'in_progress', time: 1717390000, deadline: 1717400000 },
    });
    const done = await call({
      method: 'PUT',
      url,
      as: 'office',
      body: { state: 'done', time: 1717395000, delegation_result: 'ok' },
    });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      data: {
        status: {
          execution: {
            state: 'done',
            time: 1717395000,
            deadline: 1717400000,
            delegation_result: 'ok',
          },
        },
      },
    });
  });

  it('updates the fields given (any but id and status), with its message', async () => {
    const id = await create();
    const r = await call({
      method: 'PUT',
      url: `/delegations/${id}`,
      body: { workflow_level: 2, sub_task_data: { key: 'new' }, target_subject_id: 'back-office' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      message: 'Delegation updated successfully',
      data: { workflow_level: 2, sub_task_data: { key: 'new' } },
    });
    const nested = await call({
      method: 'PUT',
      url: `/delegations/${id}`,
      body: { 'sub_task_data.extra.n': 1 },
    });
    expect(nested.body).toMatchObject({ data: { sub_task_data: { key: 'new', extra: { n: 1 } } } });
    expectFailure(
      await call({ method: 'PUT', url: `/delegations/${id}`, body: { status: {} } }),
      400,
      /status cannot be changed/,
    );
    // The whole record sent back, with its status unchanged, is a plain update.
    const whole = (await call({ method: 'GET', url: `/delegations/${id}` })).body.data as Record<
      string,
      unknown
    >;
    const back = await call({
      method: 'PUT',
      url: `/delegations/${id}`,
      body: { ...whole, workflow_level: 3 },
    });
    expect(back.body).toMatchObject({ success: true, data: { workflow_level: 3 } });
  });

  it('deletes with Content-Type: application/json and no body, as contract clients do', async () => {
    const id = await create();
    const r = await call({
      method: 'DELETE',
      url: `/delegations/${id}`,
      raw: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, message: 'Delegation deleted successfully' });
    expectFailure(await call({ method: 'GET', url: `/delegations/${id}` }), 404);
  });

  it('queries with a bare Mongo filter and answers a list', async () => {
    const id = await create({ delegation_type: 'bare-q', sub_task_data: { key: 'value', n: 3 } });
    const r = await call({
      method: 'POST',
      url: '/delegations/query',
      body: {
        delegation_type: 'bare-q',
        'sub_task_data.n': { $gte: 2 },
        workflow_level: { $in: [1] },
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect((r.body.data as Array<{ delegation_id: string }>).map((d) => d.delegation_id)).toEqual([
      id,
    ]);
  });

  it('a record deleted and created again under the same id is delivered again', async () => {
    const id = 'api-reborn';
    const seen: string[] = [];
    const sub = await bus.subscribe('reborn-target', 'work', (e) => {
      if (e.event === 'delegation_task') seen.push(`${e.delegation_id}:${e.incarnation}`);
    });
    await create({ delegation_id: id, target_subject_id: 'reborn-target' });
    await call({ method: 'DELETE', url: `/delegations/${id}` });
    const again = await call({
      method: 'POST',
      url: '/delegations',
      body: fresh({ delegation_id: id, target_subject_id: 'reborn-target' }),
    });
    expect(again.status).toBe(200);
    await publisherDrained();
    await bus.idle();
    expect(seen).toHaveLength(2);
    expect(new Set(seen).size).toBe(2);
    await sub.close();
  });
});

describe('delegations API: records', () => {
  it('creates, updates, re-targets and deletes with the right roles', async () => {
    const record = fresh();
    const created = await call({ method: 'POST', url: '/delegations', body: record });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      success: true,
      message: 'Delegation created successfully',
      data: record,
    });
    const id = record.delegation_id;
    expectFailure(
      await call({ method: 'POST', url: '/delegations', body: record }),
      409,
      /already exists/,
    );

    // What the target was asked is the sender's to change, not the target's.
    expectFailure(
      await call({
        method: 'PUT',
        url: `/delegations/${id}`,
        as: 'office',
        body: { sub_task_data: { note: 'ok' } },
      }),
      403,
      /Only the sender/,
    );
    const upd = await call({
      method: 'PUT',
      url: `/delegations/${id}`,
      body: { sub_task_data: { note: 'ok' } },
    });
    expect(upd.body).toMatchObject({ success: true, data: { sub_task_data: { note: 'ok' } } });
    expectFailure(
      await call({
        method: 'PUT',
        url: `/delegations/${id}`,
        as: 'office',
        body: { target_subject_id: 'elsewhere' },
      }),
      403,
      /Only the sender/,
    );
    expectFailure(
      await call({ method: 'PUT', url: `/delegations/${id}`, body: { sender_subject_id: 'me' } }),
      403,
      /Only an admin/,
    );
    expectFailure(
      await call({
        method: 'PUT',
        url: `/delegations/${id}`,
        as: 'intruder',
        body: { sub_task_data: {} },
      }),
      404,
    );
    const retarget = await call({
      method: 'PUT',
      url: `/delegations/${id}`,
      body: { target_subject_id: 'billing' },
    });
    expect(retarget.body).toMatchObject({ data: { target_subject_id: 'billing' } });
    // back-office is no longer a party.
    expectFailure(await call({ method: 'GET', url: `/delegations/${id}`, as: 'office' }), 404);

    expectFailure(await call({ method: 'DELETE', url: `/delegations/${id}`, as: 'intruder' }), 404);
    const del = await call({ method: 'DELETE', url: `/delegations/${id}` });
    expect(del.body).toEqual({ success: true, message: 'Delegation deleted successfully' });
    expectFailure(await call({ method: 'DELETE', url: `/delegations/${id}` }), 404);
  });

  it('only lets an agent create delegations it sends, and never already finished', async () => {
    expectFailure(
      await call({ method: 'POST', url: '/delegations', as: 'office', body: fresh() }),
      403,
      /only create delegations it sends/,
    );
    const done = fresh({ status: { execution: { state: 'done', time: 1767603600 } } });
    expectFailure(
      await call({ method: 'POST', url: '/delegations', body: done }),
      400,
      /cannot start finished/,
    );
    const asAdmin = await call({
      method: 'POST',
      url: '/delegations',
      as: 'admin',
      body: fresh({ sender_subject_id: 'ops' }),
    });
    expect(asAdmin.status).toBe(200);
  });

  it('lets the target move its stages and the sender add or cancel them (not expire them); illegal moves are 409', async () => {
    const id = await create();
    const url = `/delegations/${id}/status/execution`;
    // Progress is the target's: the sender cannot start the target's stage.
    expectFailure(
      await call({ method: 'PUT', url, body: { state: 'in_progress' } }),
      403,
      /Only the target \(back-office\)/,
    );
    const started = await call({
      method: 'PUT',
      url,
      as: 'office',
      body: { state: 'in_progress' },
    });
    expect(started.body).toMatchObject({
      success: true,
      data: { status: { execution: { state: 'in_progress' } } },
    });
    const again = await call({ method: 'PUT', url, as: 'office', body: { state: 'in_progress' } });
    expect(again.status).toBe(200);
    expectFailure(
      await call({ method: 'PUT', url, as: 'office', body: { state: 'expired' } }),
      403,
      /expiry checker/,
    );
    const review = await call({
      method: 'PUT',
      url: `/delegations/${id}/status/review`,
      body: { state: 'pending', deadline: 1769904000 },
    });
    expect(review.body).toMatchObject({
      data: { status: { review: { state: 'pending', deadline: 1769904000 } } },
    });
    const cancelled = await call({ method: 'PUT', url, body: { state: 'cancelled' } });
    expect(cancelled.status).toBe(200);
    expectFailure(
      await call({ method: 'PUT', url, as: 'admin', body: { state: 'in_progress' } }),
      409,
      /cannot move from cancelled/,
    );
  });

  it('lets the target finish a stage through the status route, checked like a result', async () => {
    const id = await create();
    const url = `/delegations/${id}/status/execution`;
    expectFailure(
      await call({
        method: 'PUT',
        url,
        as: 'office',
        body: { state: 'done', delegation_result: { balance: 'x' } },
      }),
      400,
      /"lookup" schema/,
    );
    const ok = await call({
      method: 'PUT',
      url,
      as: 'office',
      body: { state: 'done', delegation_result: { balance: 3 } },
    });
    expect(ok.body).toMatchObject({
      data: { status: { execution: { state: 'done', delegation_result: { balance: 3 } } } },
    });
  });

  it('accepts a result from a party, once, valid for the type, before the deadline', async () => {
    const id = await create();
    const url = `/delegations/submit_result/${id}`;
    expectFailure(
      await call({
        method: 'PUT',
        url,
        as: 'intruder',
        body: { delegation_result: { balance: 1 } },
      }),
      404,
    );
    expectFailure(
      await call({
        method: 'PUT',
        url,
        as: 'office',
        body: { delegation_result: { balance: 'x' } },
      }),
      400,
      /"lookup" schema/,
    );
    expectFailure(
      await call({ method: 'PUT', url, as: 'office', body: { state: 'completed' } }),
      400,
      /"done" or "failed"/,
    );
    const ok = await call({
      method: 'PUT',
      url,
      as: 'office',
      body: { delegation_result: { balance: 12 } },
    });
    expect(ok.body).toMatchObject({
      success: true,
      data: {
        status: { delegation_result: { state: 'done', delegation_result: { balance: 12 } } },
      },
    });
    expectFailure(
      await call({
        method: 'PUT',
        url,
        as: 'office',
        body: { delegation_result: { balance: 13 } },
      }),
      409,
      /already done/,
    );
    const failedOk = await create();
    const failed = await call({
      method: 'PUT',
      url: `/delegations/submit_result/${failedOk}`,
      as: 'office',
      body: { state: 'failed', delegation_result: 'no such account', stage: 'execution' },
    });
    expect(failed.body).toMatchObject({
      data: { status: { execution: { state: 'failed', delegation_result: 'no such account' } } },
    });
    const late = await create();
    await clock.advance(61_000);
    expectFailure(
      await call({
        method: 'PUT',
        url: `/delegations/submit_result/${late}`,
        as: 'office',
        body: { stage: 'execution', delegation_result: { balance: 1 } },
      }),
      409,
      /passed its deadline/,
    );
  });

  it('takes stage names that are Object.prototype keys, in every route', async () => {
    const id = await create();
    for (const stage of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      const url = `/delegations/${id}/status/${stage}`;
      const started = await call({
        method: 'PUT',
        url,
        as: 'office',
        body: { state: 'in_progress' },
      });
      expect(started.status, stage).toBe(200);
      const done = await call({
        method: 'PUT',
        url: `/delegations/submit_result/${id}`,
        as: 'office',
        body: { stage, delegation_result: { balance: 1 } },
      });
      expect(done.status, stage).toBe(200);
    }
    const got = await call({ method: 'GET', url: `/delegations/${id}` });
    const status = (got.body.data as { status: Record<string, { state: string }> }).status;
    expect(Object.keys(status).sort()).toEqual(
      ['__proto__', 'constructor', 'execution', 'hasOwnProperty', 'toString', 'valueOf'].sort(),
    );
    const proto = '__proto__';
    expect(Object.hasOwn(status, proto) && status[proto]?.state).toBe('done');
  });

  it('refuses JSON deeper than 64 levels with a clear 400, and the record stays usable', async () => {
    const id = await create();
    const deep = `${'{"a":'.repeat(1_000)}1${'}'.repeat(1_000)}`;
    expectFailure(
      await call({
        method: 'PUT',
        url: `/delegations/submit_result/${id}`,
        as: 'office',
        raw: `{"state":"done","delegation_result":${deep}}`,
      }),
      400,
      /nested deeper than 64 levels/,
    );
    const query = await call({
      method: 'POST',
      url: '/delegations/query',
      body: { delegation_id: id, 'status.execution.state': 'pending' },
    });
    expect((query.body.data as unknown[]).length).toBe(1);
    const ok = await call({
      method: 'PUT',
      url: `/delegations/submit_result/${id}`,
      as: 'office',
      body: { delegation_result: { balance: 1 } },
    });
    expect(ok.status).toBe(200);
  });
});

describe('delegations API: query', () => {
  it('filters with Mongo operators, scoped to the caller, paged by query parameters', async () => {
    const ids = [
      await create({ delegation_type: 'qtype' }),
      await create({ delegation_type: 'qtype' }),
      await create({ delegation_type: 'qtype' }),
    ];
    await call({
      method: 'POST',
      url: '/delegations',
      as: 'admin',
      body: fresh({
        delegation_type: 'qtype',
        sender_subject_id: 'ops',
        target_subject_id: 'ops2',
      }),
    });
    const page1 = await call({
      method: 'POST',
      url: '/delegations/query?limit=2',
      body: { delegation_type: 'qtype' },
    });
    const data1 = page1.body.data as Array<{ delegation_id: string }>;
    expect(data1.map((r) => r.delegation_id)).toEqual(ids.slice(0, 2));
    const page2 = await call({
      method: 'POST',
      url: `/delegations/query?limit=2&cursor=${String(page1.body.next)}`,
      body: { delegation_type: 'qtype' },
    });
    expect(
      (page2.body.data as Array<{ delegation_id: string }>).map((r) => r.delegation_id),
    ).toEqual(ids.slice(2));
    expect(page2.body.next).toBeUndefined();
    // The older wrapped form still works, with the same answer shape.
    const wrapped = await call({
      method: 'POST',
      url: '/delegations/query',
      body: { filter: { delegation_type: 'qtype' }, limit: 2 },
    });
    expect(wrapped.body.data).toEqual(page1.body.data);
    const intruder = await call({
      method: 'POST',
      url: '/delegations/query',
      as: 'intruder',
      body: { delegation_type: 'qtype' },
    });
    expect(intruder.body.data).toEqual([]);
    const admin = await call({
      method: 'POST',
      url: '/delegations/query',
      as: 'admin',
      body: { delegation_type: { $in: ['qtype'] }, workflow_level: { $gte: 1 } },
    });
    expect(admin.body.data).toHaveLength(4);
    const all = await call({ method: 'POST', url: '/delegations/query', as: 'office', body: {} });
    expect(all.status).toBe(200);
  });

  it('answers 400 for every operator and field outside the allow-list', async () => {
    const bad: unknown[] = [
      { delegation_type: { $regex: '^q' } },
      { $where: 'true' },
      { $function: { body: 'function() { return true }', args: [], lang: 'js' } },
      { $expr: {} },
      { $or: [{ $nor: [] }] },
      { $and: [] },
      { "delegation_type' OR 1=1 --": 'x' },
      { 'sub_task_data.__proto__.x': 1 },
      { 'sub_task_data.constructor': 1 },
      { status: 5 },
      { 'sub_task_data.amount': { $exists: 'yes' } },
    ];
    for (const filter of bad) {
      expectFailure(
        await call({ method: 'POST', url: '/delegations/query', body: filter }),
        400,
        /MongoDB-style|Unknown filter field/,
      );
    }
    expectFailure(
      await call({ method: 'POST', url: '/delegations/query?limit=501', body: {} }),
      400,
      /limit/,
    );
    expectFailure(
      await call({ method: 'POST', url: '/delegations/query?cursor=forged', body: {} }),
      400,
      /cursor/,
    );
    expectFailure(await call({ method: 'POST', url: '/delegations/query', body: [] }), 400);
  });
});

describe('delegations API: hostile input is a 4xx, never a 500', () => {
  it('malformed JSON, wrong content type, empty bodies, prototype poisoning', async () => {
    expectFailure(
      await call({ method: 'POST', url: '/delegations', raw: '{"delegation_id": "x",' }),
      400,
      /not valid JSON/,
    );
    expectFailure(await call({ method: 'POST', url: '/delegations', raw: '' }), 400);
    expectFailure(
      await call({
        method: 'POST',
        url: '/delegations',
        raw: 'delegation_id=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
      /application\/json/,
    );
    expectFailure(
      await call({ method: 'POST', url: '/delegations', raw: '{"__proto__": {"admin": true}}' }),
      400,
      /__proto__/,
    );
    expectFailure(await call({ method: 'POST', url: '/delegations' }), 400, /Send a JSON object/);
  });

  it('rejects unknown fields anywhere in a body, naming them', async () => {
    expectFailure(
      await call({ method: 'POST', url: '/delegations', body: { ...fresh(), is_admin: true } }),
      400,
      /is_admin/,
    );
    const nested = fresh();
    (nested.status.execution as unknown as Record<string, unknown>).owner = 'me';
    expectFailure(await call({ method: 'POST', url: '/delegations', body: nested }), 400, /owner/);
    const id = await create();
    expectFailure(
      await call({ method: 'PUT', url: `/delegations/${id}`, body: { owner: 'me' } }),
      400,
      /owner/,
    );
    expectFailure(
      await call({
        method: 'PUT',
        url: `/delegations/${id}/status/execution`,
        as: 'office',
        body: { state: 'in_progress', result: 1 },
      }),
      400,
      /result/,
    );
    expectFailure(
      await call({
        method: 'PUT',
        url: `/delegations/submit_result/${id}`,
        as: 'office',
        body: { delegation_result: { balance: 1 }, sender: 'x' },
      }),
      400,
      /sender/,
    );
  });

  it('refuses huge bodies with 413', async () => {
    const huge = fresh({ sub_task_data: { blob: 'x'.repeat(2 * 1024 * 1024) } });
    expectFailure(
      await call({ method: 'POST', url: '/delegations', body: huge }),
      413,
      /larger than 65536 bytes/,
    );
  });

  it('survives a battery of wrong types and shapes on every route', async () => {
    const id = await create();
    const bodies: unknown[] = [
      null,
      0,
      'x',
      [],
      true,
      { state: null },
      { filter: 'x' },
      { result: null, extra: 1 },
      { sub_task_data: [] },
      { status: 5 },
    ];
    const routes: Array<Pick<Call, 'method' | 'url'>> = [
      { method: 'POST', url: '/delegations' },
      { method: 'PUT', url: `/delegations/${id}` },
      { method: 'POST', url: '/delegations/query' },
      { method: 'PUT', url: `/delegations/${id}/status/execution` },
      { method: 'PUT', url: `/delegations/submit_result/${id}` },
    ];
    for (const route of routes) {
      for (const body of bodies) {
        const r = await call({ ...route, as: 'admin', raw: JSON.stringify(body) });
        expect(
          r.status,
          `${route.method} ${route.url} ${JSON.stringify(body)}`,
        ).toBeGreaterThanOrEqual(400);
        expect(r.status).toBeLessThan(500);
        expect(r.body.success).toBe(false);
      }
    }
    const longest = await create({ delegation_id: 'i'.repeat(200) });
    expect((await call({ method: 'GET', url: `/delegations/${longest}` })).status).toBe(200);
    expectFailure(
      await call({ method: 'GET', url: `/delegations/${'x'.repeat(201)}` }),
      400,
      /200/,
    );
    expectFailure(
      await call({ method: 'GET', url: `/delegations/${'x'.repeat(300)}` }),
      414,
      /at most 200/,
    );
    expectFailure(
      await call({ method: 'GET', url: '/delegations/%E0%A4%A' }),
      400,
      /URL is not valid/,
    );
    expectFailure(
      await call({
        method: 'PUT',
        url: `/delegations/${id}/status/${'s'.repeat(101)}`,
        body: { state: 'cancelled' },
      }),
      400,
    );
    expectFailure(await call({ method: 'GET', url: '/nowhere' }), 404, /No route GET \/nowhere/);
    const nul = await call({
      method: 'POST',
      url: '/delegations',
      body: fresh({ sub_task_data: { note: 'a\u0000b' } }),
    });
    expect(nul.status).toBeLessThan(500);
  });

  it('serves real HTTP with the same envelope', async () => {
    const url = await api.listen({ port: 0 });
    const res = await fetch(`${url}/delegations/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.admin}`, 'content-type': 'application/json' },
      body: '{"$where":"1"}',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ success: false, code: 'invalid_argument' });
  });
});

describe('delegations API: events go out before the answer', () => {
  it('answers a write once its events are published, or after 250 ms on the clock at most', async () => {
    const vclock = new VirtualClock();
    const db = await SqliteDelegationStore.open({
      path: join(dir, 'before-answer.db'),
      clock: vclock,
    });
    const inner = new InProcessDelegationBus();
    const gates: Array<() => void> = [];
    const entries: Array<() => void> = [];
    /** Resolves when the bus has been asked to publish `n` events. */
    const entered = (n: number) =>
      new Promise<void>((resolve) => {
        if (gates.length >= n) resolve();
        else entries.push(resolve);
      });
    const slow: DelegationBus = Object.assign(Object.create(inner) as DelegationBus, {
      publish: async (event: Parameters<DelegationBus['publish']>[0]) => {
        await new Promise<void>((resolve) => {
          gates.push(resolve);
          for (const e of entries.splice(0)) e();
        });
        return inner.publish(event);
      },
    });
    const server = await createDelegationsApi({
      store: db,
      bus: slow,
      clock: vclock,
      keys: new ApiKeys([{ key: KEYS.admin, admin: true }]),
    });
    const post = (id: string) =>
      server.app.inject({
        method: 'POST',
        url: '/delegations',
        headers: { authorization: `Bearer ${KEYS.admin}`, 'content-type': 'application/json' },
        payload: JSON.stringify(fresh({ delegation_id: id })),
      });
    let answered = false;
    const first = post('early-1').then((r) => {
      answered = true;
      return r;
    });
    await entered(1);
    expect(answered).toBe(false);
    gates[0]!();
    expect((await first).statusCode).toBe(200);
    // The bus stays stuck: the answer still comes, 250 ms later on the clock.
    let second = false;
    const stuck = post('early-2').then((r) => {
      second = true;
      return r;
    });
    await entered(2);
    await vclock.advance(249);
    expect(second).toBe(false);
    await vclock.advance(1);
    expect((await stuck).statusCode).toBe(200);
    gates[1]!();
    await server.close();
    await inner.close();
    await db.close();
  });
});
