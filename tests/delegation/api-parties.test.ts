// Who may do what on the delegations API (docs/service.md, src/service/api/parties.ts), row by
// row: each route and state tried by the sender, the target, an admin and a stranger, on a fresh
// record each time, asserting the status and that a refused write changed nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeys } from '../../src/service/api/auth.js';
import { createDelegationsApi, type DelegationsApi } from '../../src/service/api/server.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { makeRecord } from './store-suite.js';

const KEYS = {
  sender: 'voice-bot-key-0123456789',
  target: 'back-office-key-0123456789',
  admin: 'admin-key-0123456789abcdef',
  stranger: 'intruder-key-0123456789ab',
};
type Party = keyof typeof KEYS;
const PARTIES: Party[] = ['sender', 'target', 'admin', 'stranger'];

const dir = mkdtempSync(join(tmpdir(), 'taskline-parties-'));
let api: DelegationsApi;
let store: SqliteDelegationStore;
let bus: InProcessDelegationBus;
beforeAll(async () => {
  store = await SqliteDelegationStore.open({ path: join(dir, 'p.db') });
  bus = new InProcessDelegationBus();
  api = await createDelegationsApi({
    store,
    bus,
    requestLog: false,
    publisher: false,
    keys: new ApiKeys([
      { key: KEYS.sender, agent: 'voice-bot' },
      { key: KEYS.target, agent: 'back-office' },
      { key: KEYS.admin, admin: true },
      { key: KEYS.stranger, agent: 'intruder' },
    ]),
  });
});
afterAll(async () => {
  await api.close();
  await bus.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

let seq = 0;
/** A fresh record from voice-bot to back-office, its `execution` stage in `state`. */
async function fresh(state: 'pending' | 'in_progress' = 'pending'): Promise<string> {
  const id = `p-${seq++}`;
  const now = Math.floor(Date.now() / 1000);
  await store.create(
    makeRecord(id, {
      sender_subject_id: 'voice-bot',
      target_subject_id: 'back-office',
      status: { execution: { state: 'pending', time: now, deadline: now + 3_600 } },
    }),
  );
  if (state === 'in_progress') await store.setStage(id, 'execution', { state: 'in_progress' });
  return id;
}

async function call(as: Party, method: 'PUT' | 'DELETE' | 'GET', url: string, body?: unknown) {
  const res = await api.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${KEYS[as]}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
  return { status: res.statusCode, body: res.json() as { success: boolean; code?: string } };
}

interface Row {
  what: string;
  start?: 'pending' | 'in_progress';
  method: 'PUT' | 'DELETE' | 'GET';
  url: (id: string) => string;
  body?: unknown;
  expect: Record<Party, number>;
}

const stage = (id: string) => `/delegations/${id}/status/execution`;
const ROWS: Row[] = [
  {
    what: 'read',
    method: 'GET',
    url: (id) => `/delegations/${id}`,
    expect: { sender: 200, target: 200, admin: 200, stranger: 404 },
  },
  {
    what: 'update the task while pending',
    method: 'PUT',
    url: (id) => `/delegations/${id}`,
    body: { 'sub_task_data.amount': 9 },
    expect: { sender: 200, target: 403, admin: 200, stranger: 404 },
  },
  {
    what: 'update the task once started',
    start: 'in_progress',
    method: 'PUT',
    url: (id) => `/delegations/${id}`,
    body: { 'sub_task_data.amount': 9 },
    expect: { sender: 409, target: 403, admin: 200, stranger: 404 },
  },
  {
    what: 're-target while pending',
    method: 'PUT',
    url: (id) => `/delegations/${id}`,
    body: { target_subject_id: 'billing' },
    expect: { sender: 200, target: 403, admin: 200, stranger: 404 },
  },
  {
    what: 're-target once started',
    start: 'in_progress',
    method: 'PUT',
    url: (id) => `/delegations/${id}`,
    body: { target_subject_id: 'billing' },
    expect: { sender: 409, target: 403, admin: 200, stranger: 404 },
  },
  {
    what: 'change the sender',
    method: 'PUT',
    url: (id) => `/delegations/${id}`,
    body: { sender_subject_id: 'someone' },
    expect: { sender: 403, target: 403, admin: 200, stranger: 404 },
  },
  {
    what: 'delete',
    method: 'DELETE',
    url: (id) => `/delegations/${id}`,
    expect: { sender: 200, target: 403, admin: 200, stranger: 404 },
  },
  {
    what: 'stage → in_progress',
    method: 'PUT',
    url: stage,
    body: { state: 'in_progress' },
    expect: { sender: 403, target: 200, admin: 200, stranger: 404 },
  },
  {
    what: 'stage → pending (a new deadline)',
    method: 'PUT',
    url: stage,
    body: { state: 'pending', deadline: 1_900_000_000 },
    expect: { sender: 200, target: 200, admin: 200, stranger: 404 },
  },
  {
    what: 'stage → done with a result',
    method: 'PUT',
    url: stage,
    body: { state: 'done', delegation_result: 'ok' },
    expect: { sender: 403, target: 200, admin: 200, stranger: 404 },
  },
  {
    what: 'stage → failed',
    method: 'PUT',
    url: stage,
    body: { state: 'failed', delegation_result: 'no' },
    expect: { sender: 403, target: 200, admin: 200, stranger: 404 },
  },
  {
    what: 'stage → cancelled',
    method: 'PUT',
    url: stage,
    body: { state: 'cancelled' },
    expect: { sender: 200, target: 403, admin: 200, stranger: 404 },
  },
  {
    what: 'stage → expired',
    method: 'PUT',
    url: stage,
    body: { state: 'expired' },
    expect: { sender: 403, target: 403, admin: 200, stranger: 404 },
  },
  {
    what: 'submit_result',
    method: 'PUT',
    url: (id) => `/delegations/submit_result/${id}`,
    body: { state: 'done', delegation_result: 'ok' },
    expect: { sender: 403, target: 200, admin: 200, stranger: 404 },
  },
  {
    what: 'submit_result of a stage',
    method: 'PUT',
    url: (id) => `/delegations/submit_result/${id}`,
    body: { stage: 'execution', delegation_result: 'ok' },
    expect: { sender: 403, target: 200, admin: 200, stranger: 404 },
  },
];

describe('who may do what', () => {
  for (const row of ROWS) {
    it(row.what, async () => {
      for (const party of PARTIES) {
        const id = await fresh(row.start);
        const before = await store.get(id);
        const r = await call(party, row.method, row.url(id), row.body);
        expect(r.status, `${row.what} as ${party}: ${JSON.stringify(r.body)}`).toBe(
          row.expect[party],
        );
        expect(r.body.success).toBe(r.status === 200);
        if (r.status !== 200) expect(await store.get(id)).toEqual(before);
      }
    });
  }

  it('a sender that is also the target has both columns', async () => {
    const id = `p-self-${seq++}`;
    const now = Math.floor(Date.now() / 1000);
    await store.create(
      makeRecord(id, {
        sender_subject_id: 'voice-bot',
        target_subject_id: 'voice-bot',
        status: { execution: { state: 'pending', time: now } },
      }),
    );
    expect((await call('sender', 'PUT', stage(id), { state: 'in_progress' })).status).toBe(200);
    expect((await call('sender', 'PUT', stage(id), { state: 'cancelled' })).status).toBe(200);
  });
});
