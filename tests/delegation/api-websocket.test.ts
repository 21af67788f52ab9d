import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ApiKeys } from '../../src/service/api/auth.js';
import { createDelegationsApi, type DelegationsApi } from '../../src/service/api/server.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { makeRecord } from './store-suite.js';

const KEYS = {
  voice: 'voice-bot-key-0123456789',
  office: 'back-office-key-0123456789',
  intruder: 'intruder-key-0123456789ab',
  admin: 'admin-key-0123456789abcdef',
};
type Who = keyof typeof KEYS;

/** A record created now with an hour to go. */
function record(id: string, over: Parameters<typeof makeRecord>[1] = {}) {
  const now = Date.now();
  return makeRecord(id, {
    status: {
      execution: {
        state: 'pending',
        time: Math.floor(now / 1000),
        deadline: Math.floor((now + 3_600_000) / 1000),
      },
    },
    ...over,
  });
}

const dir = mkdtempSync(join(tmpdir(), 'taskline-deleg-ws-'));
let api: DelegationsApi;
let store: SqliteDelegationStore;
let bus: InProcessDelegationBus;
let base: string;

beforeAll(async () => {
  store = await SqliteDelegationStore.open({ path: join(dir, 'ws.db') });
  bus = new InProcessDelegationBus();
  api = await createDelegationsApi({
    store,
    bus,
    keys: new ApiKeys([
      { key: KEYS.voice, agent: 'voice-bot' },
      { key: KEYS.office, agent: 'back-office' },
      { key: KEYS.intruder, agent: 'intruder' },
      { key: KEYS.admin, admin: true },
    ]),
  });
  base = await api.listen({ port: 0 });
});
afterAll(async () => {
  await api.close();
  await bus.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Change {
  delegation_id: string;
  version: number;
  change: string;
  state?: string;
  time: number;
  record: { status: Record<string, { time: number; deadline?: number }> };
}

/** A connected client that records every change pushed to it. */
async function client(who: Who, via: 'header' | 'query' = 'header') {
  const url = `${base.replace('http', 'ws')}/delegations/events${via === 'query' ? `?access_token=${KEYS[who]}` : ''}`;
  const socket = new WebSocket(
    url,
    via === 'header' ? { headers: { authorization: `Bearer ${KEYS[who]}` } } : {},
  );
  const changes: Change[] = [];
  const waiters: Array<{ test: (c: Change) => boolean; resolve: () => void }> = [];
  await new Promise<void>((resolve, reject) => {
    socket.on('message', (raw) => {
      const msg = JSON.parse(String(raw)) as { type: string; data: Change };
      if (msg.type === 'ready') resolve();
      if (msg.type !== 'delegation') return;
      changes.push(msg.data);
      for (const w of [...waiters]) {
        if (w.test(msg.data)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
    socket.on('error', reject);
  });
  return {
    socket,
    changes,
    until(test: (c: Change) => boolean): Promise<void> {
      if (changes.some(test)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ test, resolve }));
    },
    summary: () =>
      changes.map(
        (c) => `${c.delegation_id}@${c.version}:${c.change}${c.state ? `:${c.state}` : ''}`,
      ),
  };
}

async function http(who: Who, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${KEYS[who]}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  expect(res.status).toBeLessThan(300);
  return res.json();
}

describe('WebSocket /delegations/events', () => {
  it('pushes each status change to the parties and admins, and nothing to others', async () => {
    const [voice, office, intruder, admin] = await Promise.all([
      client('voice'),
      client('office', 'query'),
      client('intruder'),
      client('admin'),
    ]);
    await http('voice', 'POST', '/delegations', record('ws-1'));
    await http('office', 'PUT', '/delegations/ws-1/status/execution', { state: 'in_progress' });
    await http('office', 'PUT', '/delegations/submit_result/ws-1', {
      stage: 'execution',
      delegation_result: { balance: 3 },
    });
    const expected = ['ws-1@1:create', 'ws-1@2:stage:in_progress', 'ws-1@3:stage:done'];
    const last = (c: Change) => c.delegation_id === 'ws-1' && c.version === 3;
    await Promise.all([voice.until(last), office.until(last), admin.until(last)]);
    expect(voice.summary()).toEqual(expected);
    expect(office.summary()).toEqual(expected);
    expect(admin.summary()).toEqual(expected);
    // The contract's record shape: integer epoch seconds everywhere.
    for (const c of voice.changes) {
      expect(Number.isInteger(c.time)).toBe(true);
      for (const stage of Object.values(c.record.status)) {
        expect(Number.isInteger(stage.time)).toBe(true);
        if (stage.deadline !== undefined) expect(Number.isInteger(stage.deadline)).toBe(true);
      }
    }

    // A change the intruder may see, made after the others: once it arrives, nothing before it came.
    await http(
      'intruder',
      'POST',
      '/delegations',
      record('ws-sentinel', { sender_subject_id: 'intruder' }),
    );
    await intruder.until((c) => c.delegation_id === 'ws-sentinel');
    expect(intruder.summary()).toEqual(['ws-sentinel@1:create']);
    for (const c of [voice, office, intruder, admin]) c.socket.close();
  });

  it('tells an agent that lost a delegation (re-target) and stops telling it afterwards', async () => {
    const office = await client('office');
    const voice = await client('voice');
    await http('voice', 'POST', '/delegations', record('ws-2'));
    await http('voice', 'PUT', '/delegations/ws-2', { target_subject_id: 'billing' });
    await http('voice', 'PUT', '/delegations/ws-2/status/execution', { state: 'cancelled' });
    await voice.until((c) => c.delegation_id === 'ws-2' && c.version === 3);
    await http(
      'office',
      'POST',
      '/delegations',
      record('ws-office', { sender_subject_id: 'back-office', target_subject_id: 'voice-bot' }),
    );
    await office.until((c) => c.delegation_id === 'ws-office');
    expect(office.summary()).toEqual(['ws-2@1:create', 'ws-2@2:update', 'ws-office@1:create']);
    office.socket.close();
    voice.socket.close();
  });

  it('refuses the upgrade without a valid key (401)', async () => {
    const url = `${base.replace('http', 'ws')}/delegations/events`;
    for (const headers of [{}, { authorization: 'Bearer not-a-real-key-123456' }]) {
      const status = await new Promise<number>((resolve) => {
        const socket = new WebSocket(url, { headers });
        socket.on('unexpected-response', (_req, res) => {
          resolve(res.statusCode ?? 0);
          socket.terminate();
        });
        socket.on('open', () => resolve(101));
        socket.on('error', () => {});
      });
      expect(status).toBe(401);
    }
  });
});
