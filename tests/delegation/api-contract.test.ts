import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiKeys } from '../../src/delegation/api/auth.js';
import { createDelegationsApi, type DelegationsApi } from '../../src/delegation/api/server.js';
import { InProcessDelegationBus } from '../../src/delegation/bus/in-process.js';
import { ResultSchemaRegistry } from '../../src/delegation/constraints.js';
import { SqliteDelegationStore } from '../../src/delegation/stores/sqlite.js';
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

beforeAll(async () => {
  store = await SqliteDelegationStore.open({ path: join(dir, 'api.db'), clock });
  bus = new InProcessDelegationBus();
  api = await createDelegationsApi({
    store,
    bus,
    clock,
    bodyLimit: 64 * 1024,
    schemas: new ResultSchemaRegistry().register('lookup', z.strictObject({ balance: z.number() })),
    keys: new ApiKeys([
      { key: KEYS.voice, agent: 'voice-bot' },
      { key: KEYS.office, agent: 'back-office' },
      { key: KEYS.intruder, agent: 'intruder' },
      { key: KEYS.admin, admin: true },
    ]),
  });
});
afterAll(async () => {
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
const fresh = (over: Parameters<typeof makeRecord>[1] = {}) => {
  const now = new Date(clock.now()).toISOString();
  return makeRecord(`api-${String(seq++).padStart(4, '0')}`, {
    status: {
      execution: {
        state: 'pending',
        time: now,
        deadline: new Date(clock.now() + 60_000).toISOString(),
      },
    },
    ...over,
  });
};
const create = async (over: Partial<ReturnType<typeof makeRecord>> = {}) => {
  const record = { ...fresh(over), ...over };
  const r = await call({ method: 'POST', url: '/delegations', body: record });
  expect(r.status).toBe(201);
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

  it('parties and admins see a record; anyone else gets 403; unknown ids 404', async () => {
    const id = await create();
    for (const who of ['voice', 'office', 'admin'] as const) {
      const r = await call({ method: 'GET', url: `/delegations/${id}`, as: who });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ success: true, data: { delegation_id: id } });
    }
    expectFailure(
      await call({ method: 'GET', url: `/delegations/${id}`, as: 'intruder' }),
      403,
      /neither sent nor received/,
    );
    expectFailure(await call({ method: 'GET', url: '/delegations/no-such-id' }), 404);
  });
});

describe('delegations API: records', () => {
  it('creates, updates, re-targets and deletes with the right roles', async () => {
    const record = fresh();
    const created = await call({ method: 'POST', url: '/delegations', body: record });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ success: true, data: record });
    const id = record.delegation_id;
    expectFailure(
      await call({ method: 'POST', url: '/delegations', body: record }),
      409,
      /already exists/,
    );

    const upd = await call({
      method: 'PUT',
      url: `/delegations/${id}`,
      as: 'office',
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
      await call({
        method: 'PUT',
        url: `/delegations/${id}`,
        as: 'intruder',
        body: { sub_task_data: {} },
      }),
      403,
    );
    const retarget = await call({
      method: 'PUT',
      url: `/delegations/${id}`,
      body: { target_subject_id: 'billing' },
    });
    expect(retarget.body).toMatchObject({ data: { target_subject_id: 'billing' } });
    // back-office is no longer a party.
    expectFailure(await call({ method: 'GET', url: `/delegations/${id}`, as: 'office' }), 403);

    expectFailure(await call({ method: 'DELETE', url: `/delegations/${id}`, as: 'intruder' }), 403);
    const del = await call({ method: 'DELETE', url: `/delegations/${id}` });
    expect(del.body).toEqual({ success: true, data: { deleted: true, delegation_id: id } });
    expectFailure(await call({ method: 'DELETE', url: `/delegations/${id}` }), 404);
  });

  it('only lets an agent create delegations it sends, and never already finished', async () => {
    expectFailure(
      await call({ method: 'POST', url: '/delegations', as: 'office', body: fresh() }),
      403,
      /only create delegations it sends/,
    );
    const done = fresh({ status: { execution: { state: 'done', time: '2026-01-05T09:00:00Z' } } });
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
    expect(asAdmin.status).toBe(201);
  });

  it('moves stages by role; illegal moves are 409', async () => {
    const id = await create();
    const url = `/delegations/${id}/status/execution`;
    expectFailure(
      await call({ method: 'PUT', url, body: { state: 'in_progress' } }),
      403,
      /may not set a stage to in_progress/,
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
    expectFailure(
      await call({ method: 'PUT', url, as: 'office', body: { state: 'done' } }),
      403,
      /submit_result/,
    );
    expectFailure(
      await call({ method: 'PUT', url, as: 'office', body: { state: 'expired' } }),
      403,
      /expiry checker/,
    );
    const review = await call({
      method: 'PUT',
      url: `/delegations/${id}/status/review`,
      body: { state: 'pending', deadline: '2026-02-01T00:00:00Z' },
    });
    expect(review.body).toMatchObject({
      data: { status: { review: { state: 'pending', deadline: '2026-02-01T00:00:00.000Z' } } },
    });
    const cancelled = await call({ method: 'PUT', url, body: { state: 'cancelled' } });
    expect(cancelled.status).toBe(200);
    expectFailure(
      await call({ method: 'PUT', url, as: 'admin', body: { state: 'in_progress' } }),
      409,
      /cannot move from cancelled/,
    );
  });

  it('accepts a result only from the target, once, valid for the type, before the deadline', async () => {
    const id = await create();
    const url = `/delegations/submit_result/${id}`;
    expectFailure(
      await call({ method: 'PUT', url, body: { result: { balance: 1 } } }),
      403,
      /Only the target/,
    );
    expectFailure(
      await call({ method: 'PUT', url, as: 'office', body: { result: { balance: 'x' } } }),
      400,
      /"lookup" schema/,
    );
    expectFailure(await call({ method: 'PUT', url, as: 'office', body: {} }), 400, /result/);
    const ok = await call({ method: 'PUT', url, as: 'office', body: { result: { balance: 12 } } });
    expect(ok.body).toMatchObject({
      success: true,
      data: { status: { execution: { state: 'done', delegation_result: { balance: 12 } } } },
    });
    expectFailure(
      await call({ method: 'PUT', url, as: 'office', body: { result: { balance: 13 } } }),
      409,
      /already done/,
    );
    const failedOk = await create();
    const failed = await call({
      method: 'PUT',
      url: `/delegations/submit_result/${failedOk}`,
      as: 'office',
      body: { state: 'failed', result: { error: 'no such account' } },
    });
    expect(failed.body).toMatchObject({ data: { status: { execution: { state: 'failed' } } } });
    const late = await create();
    await clock.advance(61_000);
    expectFailure(
      await call({
        method: 'PUT',
        url: `/delegations/submit_result/${late}`,
        as: 'office',
        body: { result: { balance: 1 } },
      }),
      409,
      /passed its deadline/,
    );
  });
});

describe('delegations API: query', () => {
  it('filters within the safe subset, scoped to the caller, paged', async () => {
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
      url: '/delegations/query',
      body: { filter: { delegation_type: 'qtype' }, limit: 2 },
    });
    const data1 = page1.body.data as { items: Array<{ delegation_id: string }>; next?: string };
    expect(data1.items.map((r) => r.delegation_id)).toEqual(ids.slice(0, 2));
    const page2 = await call({
      method: 'POST',
      url: '/delegations/query',
      body: { filter: { delegation_type: 'qtype' }, limit: 2, cursor: data1.next },
    });
    const data2 = page2.body.data as { items: Array<{ delegation_id: string }>; next?: string };
    expect(data2.items.map((r) => r.delegation_id)).toEqual(ids.slice(2));
    expect(data2.next).toBeUndefined();
    const intruder = await call({
      method: 'POST',
      url: '/delegations/query',
      as: 'intruder',
      body: { filter: { delegation_type: 'qtype' } },
    });
    expect((intruder.body.data as { items: unknown[] }).items).toEqual([]);
    const admin = await call({
      method: 'POST',
      url: '/delegations/query',
      as: 'admin',
      body: { filter: { delegation_type: { $in: ['qtype'] } } },
    });
    expect((admin.body.data as { items: unknown[] }).items).toHaveLength(4);
    const all = await call({ method: 'POST', url: '/delegations/query', as: 'office', body: {} });
    expect(all.status).toBe(200);
  });

  it('answers 400 for every operator outside the subset', async () => {
    const bad = [
      { delegation_type: { $regex: '^q' } },
      { $where: 'true' },
      { $expr: {} },
      { delegation_type: { $ne: 'x' } },
      { delegation_type: { $exists: true } },
      { workflow_level: { $gt: 0 } },
      { 'sub_task_data.secret': 'x' },
      { $or: [{ $nor: [] }] },
      { $and: [] },
      { "delegation_type' OR 1=1 --": 'x' },
      { 'status.execution.deadline': { $lt: 'soon' } },
    ];
    for (const filter of bad) {
      expectFailure(
        await call({ method: 'POST', url: '/delegations/query', body: { filter } }),
        400,
        /Filters allow|Unknown filter field|must be an ISO/,
      );
    }
    expectFailure(
      await call({ method: 'POST', url: '/delegations/query', body: { filter: {}, limit: 501 } }),
      400,
    );
    expectFailure(
      await call({
        method: 'POST',
        url: '/delegations/query',
        body: { filter: {}, cursor: 'forged' },
      }),
      400,
      /cursor/,
    );
    expectFailure(
      await call({ method: 'POST', url: '/delegations/query', body: { filter: [] } }),
      400,
    );
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
    );
    expectFailure(await call({ method: 'POST', url: '/delegations' }), 400, /needs a JSON body/);
  });

  it('rejects unknown fields anywhere in a body, naming them', async () => {
    expectFailure(
      await call({ method: 'POST', url: '/delegations', body: { ...fresh(), is_admin: true } }),
      400,
      /is_admin/,
    );
    const nested = fresh();
    (nested.status.execution as Record<string, unknown>).owner = 'me';
    expectFailure(await call({ method: 'POST', url: '/delegations', body: nested }), 400, /owner/);
    const id = await create();
    expectFailure(
      await call({ method: 'PUT', url: `/delegations/${id}`, body: { sender_subject_id: 'me' } }),
      400,
      /sender_subject_id/,
    );
    expectFailure(
      await call({
        method: 'PUT',
        url: `/delegations/${id}/status/execution`,
        as: 'office',
        body: { state: 'in_progress', result: 1 },
      }),
      400,
    );
    expectFailure(
      await call({
        method: 'PUT',
        url: `/delegations/submit_result/${id}`,
        as: 'office',
        body: { result: { balance: 1 }, sender: 'x' },
      }),
      400,
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
      /200 characters/,
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
      body: '{"filter":{"$where":"1"}}',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ success: false, code: 'invalid_argument' });
  });
});
