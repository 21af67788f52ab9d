import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { REFERRAL_QUESTION, SCORE_QUESTION } from '../../examples/survey/index.js';
import {
  type CheckpointStore,
  MemoryCheckpointStore,
  SqliteCheckpointStore,
} from '../../src/flows/checkpoints/index.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { startSurvey } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-race-'));
const callers: SimulatedCaller[] = [];
const stores: CheckpointStore[] = [];
afterEach(async () => {
  for (const c of callers.splice(0)) await c.close();
});
afterAll(async () => {
  for (const s of stores) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

async function open(kind: 'memory' | 'sqlite', shared?: CheckpointStore) {
  if (kind === 'memory') return shared ?? new MemoryCheckpointStore();
  const store = await SqliteCheckpointStore.open({ path: join(dir, 'race.db') });
  stores.push(store);
  return store;
}

describe.each(['memory', 'sqlite'] as const)('two sessions on one call id (%s)', (kind) => {
  it('a second session takes the call over; the first cannot advance it any more', async () => {
    const callId = `${kind}-takeover`;
    const storeA = await open(kind);
    const a = await startSurvey({ checkpoints: storeA, callId });
    callers.push(a.caller);
    await a.caller.say('yes');
    expect(a.caller.agentLines.at(-1)).toBe(SCORE_QUESTION);

    const b = await startSurvey({ checkpoints: await open(kind, storeA), callId });
    callers.push(b.caller);
    expect(b.caller.agentLines).toEqual([
      "Welcome back. We'll pick up where we left off: your score from 0 to 10.",
      SCORE_QUESTION,
    ]);

    // The first session's caller answers, but its write names a stale version.
    await a.caller.say('nine');
    expect(a.agent.result).toMatchObject({ status: 'conflict', answers: { consent: true } });
    expect(a.agent.result?.status === 'conflict' && a.agent.result.reason).toMatch(
      /^Call "[\w-]+" \(flow "survey"\) was advanced by another session: this one expected checkpoint version 2 but found 3\./,
    );
    // The losing session no longer owns the call: it says so and ends its call.
    expect(a.caller.agentLines.slice(-2)).toEqual([
      SCORE_QUESTION,
      'This survey is continuing on another line. Goodbye.',
    ]);
    expect(a.caller.endedBy).toBe('bot');

    await b.caller.say('two');
    await b.caller.say('no reason');
    expect(b.agent.result).toMatchObject({
      status: 'completed',
      value: { consent: true, score: 2, reason: 'no reason' },
    });
    const saved = await storeA.load({ flow: 'survey', callId });
    expect(saved?.state.entries.score).toEqual({ value: 2 });
  });

  it('of two sessions starting together, exactly one advances the call', async () => {
    const callId = `${kind}-together`;
    const store = await open(kind);
    const [a, b] = await Promise.all([
      startSurvey({ checkpoints: store, callId }),
      startSurvey({ checkpoints: await open(kind, store), callId }),
    ]);
    callers.push(a.caller, b.caller);
    for (const s of [a, b]) if (!s.caller.isClosed && !s.agent.result) await s.caller.say('yes');
    for (const s of [a, b]) if (!s.agent.result) await s.caller.say('nine');
    const statuses = [a.agent.result?.status, b.agent.result?.status];
    expect(statuses.filter((s) => s === 'conflict')).toHaveLength(1);
    const winner = a.agent.result?.status === 'conflict' ? b : a;
    expect(winner.agent.result).toBeUndefined();
    expect(winner.caller.agentLines.at(-1)).toBe(REFERRAL_QUESTION);
    const saved = await store.load({ flow: 'survey', callId });
    expect(saved?.state.position).toBe('referral');
  });
});
