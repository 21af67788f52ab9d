// The live calls board is scoped by who reports: a call is (owner, call_id), so one key cannot
// hide or overwrite another's call by posting the same id, and a flood of posts evicts only the
// flooder's own calls. Reports and diagrams are validated before the console ever sees them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ApiKeys } from '../../src/service/api/auth.js';
import type { CallBoardOptions, CallView } from '../../src/service/api/calls.js';
import { createDelegationsApi } from '../../src/service/api/server.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';

const KEYS = {
  voice: 'voice-bot-key-0123456789',
  office: 'back-office-key-0123456789',
  admin: 'admin-key-0123456789abcdef',
};
type Who = keyof typeof KEYS;
const dir = mkdtempSync(join(tmpdir(), 'taskline-calls-'));
let n = 0;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function serve(calls: CallBoardOptions = {}) {
  const store = await SqliteDelegationStore.open({ path: join(dir, `c-${++n}.db`) });
  const bus = new InProcessDelegationBus();
  const api = await createDelegationsApi({
    store,
    bus,
    calls,
    requestLog: false,
    keys: new ApiKeys([
      { key: KEYS.voice, agent: 'voice-bot' },
      // An admin named like an agent: still a different owner.
      { key: KEYS.admin, admin: true, name: 'back-office' },
      { key: KEYS.office, agent: 'back-office' },
    ]),
  });
  cleanups.push(async () => {
    await api.close();
    await bus.close();
    await store.close();
  });
  const post = async (as: Who, body: unknown) => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/calls/events',
      headers: { authorization: `Bearer ${KEYS[as]}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    return { status: res.statusCode, body: res.json() as { success: boolean; message?: string } };
  };
  const list = async (as: Who) => {
    const res = await api.app.inject({
      method: 'GET',
      url: '/calls',
      headers: { authorization: `Bearer ${KEYS[as]}` },
    });
    return (res.json() as { data: CallView[] }).data;
  };
  return { post, list };
}

describe('the calls board, scoped by owner', () => {
  it('the same call_id from two keys is two calls; neither hides the other', async () => {
    const { post, list } = await serve();
    expect((await post('office', { call_id: 'call-1', step: 'pin' })).status).toBe(200);
    expect(
      (await post('voice', { call_id: 'call-1', step: 'hijacked', state: 'ended' })).status,
    ).toBe(200);
    expect(await list('office')).toEqual([
      expect.objectContaining({
        call_id: 'call-1',
        step: 'pin',
        state: 'active',
        owner: 'agent:back-office',
      }),
    ]);
    expect(await list('voice')).toEqual([
      expect.objectContaining({ call_id: 'call-1', step: 'hijacked', owner: 'agent:voice-bot' }),
    ]);
    // The admin (named like the agent) sees both, and its own report is a third call.
    await post('admin', { call_id: 'call-1', step: 'admin' });
    const all = await list('admin');
    expect(all.map((c) => `${c.owner}/${c.step}`).sort()).toEqual([
      'admin:back-office/admin',
      'agent:back-office/pin',
      'agent:voice-bot/hijacked',
    ]);
    expect((await list('office')).map((c) => c.step)).toEqual(['pin']);
  });

  it('1,010 posts from one key evict only its own calls (per-owner cap)', async () => {
    const { post, list } = await serve({ maxCallsPerOwner: 1_000 });
    for (let i = 0; i < 5; i++) await post('office', { call_id: `office-${i}` });
    for (let i = 0; i < 1_010; i++) await post('voice', { call_id: `flood-${i}` });
    expect((await list('office')).map((c) => c.call_id).sort()).toEqual([
      'office-0',
      'office-1',
      'office-2',
      'office-3',
      'office-4',
    ]);
    const flood = await list('voice');
    expect(flood).toHaveLength(1_000);
    expect(flood.some((c) => c.call_id === 'flood-0')).toBe(false);
    expect(flood.some((c) => c.call_id === 'flood-1009')).toBe(true);
  });

  it('past the total cap, the owner with the most calls loses its oldest', async () => {
    const { post, list } = await serve({ maxCalls: 10, maxCallsPerOwner: 100 });
    for (let i = 0; i < 3; i++) await post('office', { call_id: `office-${i}` });
    for (let i = 0; i < 20; i++) await post('voice', { call_id: `flood-${i}` });
    expect(await list('office')).toHaveLength(3);
    expect(await list('voice')).toHaveLength(7);
  });
});

describe('reports and diagrams are validated', () => {
  const step = {
    step: 'consent',
    outcome: 'ok',
    attempts: 1,
    noInput: 0,
    noMatch: 0,
    durationMs: 900,
  };

  it('refuses a report whose steps are not a list of steps', async () => {
    const { post, list } = await serve();
    for (const report of [
      { steps: 'boom' },
      { steps: { 0: step } },
      { steps: [{ ...step, attempts: '1' }] },
      { steps: [{ ...step, durationMs: null }] },
      {},
    ]) {
      const r = await post('voice', { call_id: 'c', report });
      expect(r.status, JSON.stringify(report)).toBe(400);
      expect(r.body.success).toBe(false);
      expect(r.body.message).toMatch(/report/);
    }
    expect(await list('voice')).toEqual([]);
    expect(
      (await post('voice', { call_id: 'c', report: { steps: [step], status: 'running' } })).status,
    ).toBe(200);
  });

  it('refuses HTML, entity codes, init directives, clicks and url() in a diagram', async () => {
    const { post } = await serve();
    for (const diagram of [
      'flowchart TD\n  a["<img src=/console/x.png>"]',
      'flowchart TD\n  a["< img src=x >"]',
      'flowchart TD\n  a["#60;img src=x#62;"]',
      'flowchart TD\n  a["&lt;b&gt;"]',
      '%%{init: {"flowchart": {"htmlLabels": true}}}%%\nflowchart TD\n  a',
      'flowchart TD\n  %%{init: {"htmlLabels": true}}%%\n  a',
      'flowchart TD\n  a\n  click a "https://example.com"',
      'flowchart TD\n  a\n  style a fill:url(/console/x.png)',
      'sequenceDiagram\n  a->>b: hi',
    ]) {
      const r = await post('voice', { call_id: 'c', diagram });
      expect(r.status, diagram).toBe(400);
      expect(r.body.message).toMatch(/diagram/);
    }
    const ok = 'flowchart TD\n  a["consent"] -->|yes| b(["thanks"])\n  classDef taken fill:#dcfce7';
    expect((await post('voice', { call_id: 'c', diagram: ok })).status).toBe(200);
  });
});
