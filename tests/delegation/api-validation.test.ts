// Strict validation on every delegations route: a wrong type is a 400 in the envelope naming the
// field (null is never "omitted", true is never 1, "5" is never 5, 1.5 is never an integer), an
// empty body is never a valid request, and ids that name a route cannot be created.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeys } from '../../src/service/api/auth.js';
import { createDelegationsApi, type DelegationsApi } from '../../src/service/api/server.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';

const ADMIN = 'admin-key-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'taskline-validation-'));
let api: DelegationsApi;
let store: SqliteDelegationStore;
let bus: InProcessDelegationBus;

beforeAll(async () => {
  store = await SqliteDelegationStore.open({ path: join(dir, 'v.db') });
  bus = new InProcessDelegationBus();
  api = await createDelegationsApi({
    store,
    bus,
    requestLog: false,
    publisher: false,
    keys: new ApiKeys([{ key: ADMIN, admin: true }]),
  });
});
afterAll(async () => {
  await api.close();
  await bus.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, raw?: string) {
  const res = await api.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${ADMIN}`,
      ...(raw !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(raw !== undefined ? { payload: raw } : {}),
  });
  const body = res.body === '' ? undefined : (res.json() as Record<string, unknown>);
  return { status: res.statusCode, body };
}

/** Every failure is a 4xx with the envelope and a message naming `field`. */
async function refused(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  body: unknown,
  field: RegExp,
) {
  const r = await call(method, url, body === undefined ? undefined : JSON.stringify(body));
  const what = `${method} ${url} ${JSON.stringify(body)}`;
  expect(r.status, what).toBeGreaterThanOrEqual(400);
  expect(r.status, what).toBeLessThan(500);
  expect(r.body, what).toMatchObject({ success: false });
  expect(String(r.body?.message), what).toMatch(field);
}

const base = {
  task_id: 't1',
  sub_task_id: 's1',
  workflow_level: 1,
  delegation_type: 'manual',
  target_subject_id: 'agentB',
  sender_subject_id: 'agentA',
  sub_task_data: { key: 'value' },
};

describe('wrong types are 400s naming the field', () => {
  it('on create: null, true, 1.5 and "1 OR 1=1" where a string or integer is required', async () => {
    const wrong: Array<[string, unknown]> = [
      ['workflow_level', null],
      ['workflow_level', true],
      ['workflow_level', 1.5],
      ['workflow_level', '1 OR 1=1'],
      ['workflow_level', '1'],
      ['task_id', null],
      ['task_id', true],
      ['task_id', 1.5],
      ['delegation_type', 7],
      ['sender_subject_id', ['agentA']],
      ['sub_task_data', null],
      ['sub_task_data', []],
      ['status', null],
      ['delegation_id', null],
      ['delegation_id', 5],
      ['delegation_id', 'a\u0000b'],
    ];
    for (const [field, value] of wrong) {
      await refused('POST', '/delegations', { ...base, [field]: value }, new RegExp(field));
    }
    await refused(
      'POST',
      '/delegations',
      { ...base, status: { execution: { state: 'pending', time: 1717390000, deadline: null } } },
      /deadline/,
    );
    await refused(
      'POST',
      '/delegations',
      { ...base, status: { execution: { state: 'pending', time: 1717390000000 } } },
      /milliseconds/,
    );
    expect((await store.query({})).items).toEqual([]);
  });

  it('on the status and result routes: nulls, empty bodies and results without a final state', async () => {
    const created = await call(
      'POST',
      '/delegations',
      JSON.stringify({ ...base, delegation_id: 'v-1' }),
    );
    expect(created.status).toBe(200);
    const status = '/delegations/v-1/status/execution';
    await refused('PUT', status, { state: 'in_progress', time: null }, /time/);
    await refused('PUT', status, { state: 'in_progress', deadline: null }, /deadline/);
    await refused('PUT', status, { state: 'done', delegation_result: null }, /delegation_result/);
    await refused('PUT', status, { state: 'in_progress', time: true }, /time/);
    await refused('PUT', status, { state: 'in_progress', time: 1717390000.5 }, /time/);
    await refused(
      'PUT',
      status,
      { state: 'in_progress', delegation_result: 'x' },
      /"done" or "failed"/,
    );
    await refused('PUT', status, {}, /state/);
    await refused('PUT', status, undefined, /JSON object/);
    const submit = '/delegations/submit_result/v-1';
    await refused('PUT', submit, {}, /empty result/);
    await refused('PUT', submit, { state: null }, /state/);
    await refused('PUT', submit, { state: 'done', stage: null }, /stage/);
    await refused('PUT', submit, { delegation_result: null }, /delegation_result/);
    await refused('PUT', '/delegations/v-1', { workflow_level: null }, /workflow_level/);
    await refused('PUT', '/delegations/v-1', { task_id: 5 }, /task_id/);
    await refused('PUT', '/delegations/v-1', {}, /Nothing to update/);
    await refused('PUT', '/delegations/v-1', { 'sub_task_data.': 1 }, /unknown field/);
    const record = (await call('GET', '/delegations/v-1')).body?.data;
    expect(record).toMatchObject({ workflow_level: 1, task_id: 't1', status: {} });
  });

  it('on query: typed fields compare with their own type, paging is digits, a body is required', async () => {
    await refused('POST', '/delegations/query', { workflow_level: '1 OR 1=1' }, /workflow_level/);
    await refused('POST', '/delegations/query', { workflow_level: true }, /workflow_level/);
    await refused('POST', '/delegations/query', { workflow_level: 1.5 }, /workflow_level/);
    await refused('POST', '/delegations/query', { task_id: null }, /task_id/);
    await refused('POST', '/delegations/query', { task_id: { $in: ['a', 1] } }, /task_id/);
    await refused('POST', '/delegations/query', { 'status.execution.state': 'finished' }, /state/);
    await refused('POST', '/delegations/query', { filter: {}, limit: true }, /limit/);
    await refused('POST', '/delegations/query', { filter: {}, limit: '5' }, /limit/);
    await refused('POST', '/delegations/query?limit=1.5', {}, /limit/);
    await refused('POST', '/delegations/query?limit=5&limit=6', {}, /limit/);
    await refused('POST', '/delegations/query?limit=true', {}, /limit/);
    await refused('POST', '/delegations/query?owner=me', {}, /owner/);
    await refused('POST', '/delegations/query', undefined, /JSON object/);
    const ok = await call('POST', '/delegations/query?limit=5', '{}');
    expect(ok).toMatchObject({ status: 200, body: { success: true } });
  });

  it('on the other routes: no query parameters, and DELETE takes no body', async () => {
    await call('POST', '/delegations', JSON.stringify({ ...base, delegation_id: 'v-2' }));
    await refused('GET', '/delegations/v-2?limit=1', undefined, /no query parameters; got "limit"/);
    await refused('PUT', '/delegations/v-2?x=1', { workflow_level: 2 }, /no query parameters/);
    await refused('DELETE', '/delegations/v-2', { delegation_id: 'v-2' }, /DELETE takes no body/);
    expect((await call('GET', '/delegations/v-2')).status).toBe(200);
    expect((await call('DELETE', '/delegations/v-2', '{}')).status).toBe(200);
  });
});

describe('ids that name a route', () => {
  it('cannot be created, and those routes answer in the envelope', async () => {
    for (const id of ['events', 'query', 'submit_result', '.', '..']) {
      await refused('POST', '/delegations', { ...base, delegation_id: id }, /names a route/);
    }
    const events = await call('GET', '/delegations/events');
    expect(events.status).toBe(426);
    expect(events.body).toMatchObject({ success: false, code: 'upgrade_required' });
    const query = await call('GET', '/delegations/query');
    expect(query.status).toBe(404);
    expect(query.body).toMatchObject({ success: false, code: 'not_found' });
    expect(String(query.body?.message)).toMatch(/POST \/delegations\/query/);
  });
});
