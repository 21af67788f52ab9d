/**
 * A supervisor's approval through the delegations HTTP API binds to exactly what runs: the
 * requester (the voice agent's key) can neither settle its own approval nor change what the
 * supervisor is asked to approve, re-target it to itself, or rewrite it after the decision.
 * Real parts: SQLite store, the fastify API with per-party keys, the approval gate's polling
 * on a virtual clock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { llm } from '@livekit/agents';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod/v4';
import { ApprovalGate } from '../../src/deep-agent/approval/guard.js';
import type { DelegationRecord } from '../../src/delegation/record.js';
import { ApiKeys } from '../../src/service/api/auth.js';
import { createDelegationsApi, type DelegationsApi } from '../../src/service/api/server.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { flushAsync, VirtualClock } from '../../src/testing/virtual-clock.js';
import { callTool } from '../tools/tool-helpers.js';

const KEYS = {
  voice: 'voice-agent-key-0123456789',
  supervisor: 'supervisor-key-0123456789',
  admin: 'admin-key-0123456789abcdef',
};

let dir: string;
let clock: VirtualClock;
let store: SqliteDelegationStore;
let bus: InProcessDelegationBus;
let api: DelegationsApi;
let charges: Array<{ room: string; amount: number }>;
let gate: ApprovalGate;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'taskline-approval-binding-'));
  clock = new VirtualClock();
  store = await SqliteDelegationStore.open({ path: join(dir, 'approvals.db'), clock });
  bus = new InProcessDelegationBus();
  api = await createDelegationsApi({
    store,
    bus,
    clock,
    publisher: false,
    requestLog: false,
    keys: new ApiKeys([
      { key: KEYS.voice, agent: 'voice-agent' },
      { key: KEYS.supervisor, agent: 'supervisor' },
      { key: KEYS.admin, admin: true },
    ]),
  });
  charges = [];
  gate = new ApprovalGate(
    {
      tools: ['charge_room'],
      caller: false,
      timeoutMs: 60_000,
      delegations: { store, pollMs: 1_000 },
    },
    { clock },
  );
});
afterEach(async () => {
  await api.close();
  await bus.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const chargeRoom = () =>
  llm.tool({
    description: 'Charge a room.',
    parameters: z.object({ room: z.string(), amount: z.number().positive() }),
    execute: async (args) => {
      charges.push(args);
      return `Charged room ${args.room} ${args.amount}.`;
    },
  });

async function http(
  as: keyof typeof KEYS,
  method: 'GET' | 'PUT' | 'POST',
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await api.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${KEYS[as]}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown>, res };
}

/** Starts a guarded charge of `amount` and resolves its pending approval record. */
async function ask(
  amount: number,
): Promise<{ result: Promise<unknown>; record: DelegationRecord }> {
  const guarded = gate.guard({ charge_room: chargeRoom() })[0]!;
  const result = callTool(guarded, { room: '1204', amount }, { toolCallId: `call_${amount}` });
  await flushAsync();
  const [record] = (await store.query({ delegation_type: 'approval' })).items;
  expect(record?.status.approval?.state).toBe('pending');
  return { result, record: record! };
}

const approve = { state: 'done', delegation_result: 'approve' };

describe('an approval record answered over the HTTP API', () => {
  it('the requester cannot settle its own approval; the supervisor can', async () => {
    const { result, record } = await ask(144);
    const id = record.delegation_id;
    for (const [url, body] of [
      [`/delegations/${id}/status/approval`, approve],
      [`/delegations/${id}/status/approval`, { state: 'in_progress' }],
      [`/delegations/submit_result/${id}`, { ...approve, stage: 'approval' }],
    ] as const) {
      const r = await http('voice', 'PUT', url, body);
      expect(r.status, url).toBe(403);
      expect(r.body).toMatchObject({ success: false, code: 'forbidden' });
      expect(String(r.body.message)).toMatch(/Only the target \(supervisor\)/);
    }
    await clock.advance(1_000);
    expect(charges).toEqual([]);
    expect((await store.get(id))?.status.approval?.state).toBe('pending');

    const ok = await http('supervisor', 'PUT', `/delegations/${id}/status/approval`, approve);
    expect(ok.status).toBe(200);
    await clock.advance(1_000);
    expect(await result).toBe('Charged room 1204 144.');
    expect(charges).toEqual([{ room: '1204', amount: 144 }]);
  });

  it('a change to what is asked voids the approval: the supervisor approved 9, nothing runs (not 900)', async () => {
    const { result, record } = await ask(900);
    const id = record.delegation_id;
    // The requester's key rewrites the amount the supervisor will see (allowed while pending).
    const changed = await http('voice', 'PUT', `/delegations/${id}`, {
      'sub_task_data.args.amount': 9,
    });
    expect(changed.status).toBe(200);
    const seen = await http('supervisor', 'GET', `/delegations/${id}`);
    expect(seen.body).toMatchObject({ data: { sub_task_data: { args: { amount: 9 } } } });
    await http('supervisor', 'PUT', `/delegations/${id}/status/approval`, approve);
    await clock.advance(1_000);
    const said = String(await result);
    expect(said).toContain('rejected: The supervisor did not approve');
    expect(said).toContain('changed after it was sent');
    expect(charges).toEqual([]);
  });

  it('the same holds when the change is undone before the decision is read', async () => {
    const { result, record } = await ask(900);
    const id = record.delegation_id;
    await http('voice', 'PUT', `/delegations/${id}`, { 'sub_task_data.args.amount': 9 });
    await clock.advance(1_000); // the gate sees the change on its next read
    await http('voice', 'PUT', `/delegations/${id}`, { 'sub_task_data.args.amount': 900 });
    const late = await http('supervisor', 'PUT', `/delegations/${id}/status/approval`, approve);
    expect(late.status).toBe(409); // the gate already cancelled it
    expect(String(await result)).toContain('changed after it was sent');
    expect(charges).toEqual([]);
  });

  it('re-targeting the approval to the requester and approving it there runs nothing', async () => {
    const { result, record } = await ask(500);
    const id = record.delegation_id;
    const moved = await http('voice', 'PUT', `/delegations/${id}`, {
      target_subject_id: 'voice-agent',
    });
    expect(moved.status).toBe(200);
    const self = await http('voice', 'PUT', `/delegations/${id}/status/approval`, approve);
    expect(self.status).toBe(200); // it is now its own target, but the gate knows whom it asked
    await clock.advance(1_000);
    expect(String(await result)).toContain('changed after it was sent');
    expect(charges).toEqual([]);
  });

  it('once decided, what was asked can no longer change; a stale If-Match is 412', async () => {
    const { result, record } = await ask(144);
    const id = record.delegation_id;
    const seen = await http('supervisor', 'GET', `/delegations/${id}`);
    const etag = seen.res.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    await http('voice', 'PUT', `/delegations/${id}`, { 'sub_task_data.note': 'x' });
    const stale = await http('supervisor', 'PUT', `/delegations/${id}/status/approval`, approve, {
      'if-match': etag,
    });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({ success: false, code: 'precondition_failed' });
    expect((await store.get(id))?.status.approval?.state).toBe('pending');
    await clock.advance(1_000);
    expect(String(await result)).toContain('changed after it was sent');

    const second = await ask2(144);
    const fresh = await http('supervisor', 'GET', `/delegations/${second.id}`);
    const ok = await http(
      'supervisor',
      'PUT',
      `/delegations/${second.id}/status/approval`,
      approve,
      {
        'if-match': fresh.res.headers.etag as string,
      },
    );
    expect(ok.status).toBe(200);
    const after = await http('voice', 'PUT', `/delegations/${second.id}`, {
      'sub_task_data.args.amount': 9_000,
    });
    expect(after.status).toBe(409);
    expect(String(after.body.message)).toMatch(/can no longer be changed/);
    await clock.advance(1_000);
    expect(await second.result).toBe('Charged room 1204 144.');
    expect(charges).toEqual([{ room: '1204', amount: 144 }]);
  });
});

describe('an approver that is the requester', () => {
  it('is refused: nothing is written and nothing runs', async () => {
    const self = new ApprovalGate(
      {
        tools: ['charge_room'],
        caller: false,
        delegations: { store, sender: 'voice-agent', target: 'voice-agent' },
      },
      { clock },
    );
    const said = await callTool(self.guard({ charge_room: chargeRoom() })[0]!, {
      room: '1204',
      amount: 5,
    });
    expect(String(said)).toContain('is the agent asking for approval');
    expect((await store.query({})).items).toEqual([]);
    expect(charges).toEqual([]);
  });
});

/** A second approval in the same test (a new tool call id). */
async function ask2(amount: number): Promise<{ result: Promise<unknown>; id: string }> {
  const guarded = gate.guard({ charge_room: chargeRoom() })[0]!;
  const result = callTool(guarded, { room: '1204', amount }, { toolCallId: 'call_second' });
  await flushAsync();
  const [record] = (await store.query({ task_id: 'call_second' })).items;
  return { result, id: record!.delegation_id };
}
