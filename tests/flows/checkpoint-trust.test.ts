// A checkpoint is data from a database, not a promise: a forged or corrupted row is refused
// with a typed reason before anything is asked (issue 25, item 4), on SQLite and PostgreSQL.
// Resume re-walks the answers from the first step and checks each against its step.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CheckpointKey } from '../../src/flows/checkpoints/index.js';
import type { FlowResult } from '../../src/flows/types.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { serviceMissing } from '../services.js';
import {
  AMOUNT,
  CONSENT,
  DONE,
  postgresUnderTest,
  type StoreUnderTest,
  sqliteUnderTest,
  startBank,
} from './bank-flow.js';
import { PG_URL, uniqueTable } from './pg.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-trust-'));
const callers: SimulatedCaller[] = [];
const stores: StoreUnderTest[] = [];
afterEach(async () => {
  for (const c of callers.splice(0)) await c.close();
});
afterAll(async () => {
  for (const s of stores) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

const T = Date.UTC(2026, 0, 5, 9, 0, 0);

/** A well-formed state of a call that answered consent and PIN and hung up at the amount. */
function droppedAtAmount(callId: string) {
  return {
    flow: 'bank',
    callId,
    status: 'hangup',
    position: 'amount',
    entries: { consent: { value: true }, pin: { value: '4321' } },
    path: ['consent', 'pin'],
    visits: { consent: 1, pin: 1, amount: 1 },
    records: [],
    backSteps: 0,
    resumes: 0,
    owner: '1:x',
    startedAt: T,
    savedAt: T,
  };
}

/** Nine ways a row can be broken (and one copied from another call). */
function corruptions(callId: string): Array<[string, unknown]> {
  const good = droppedAtAmount(callId);
  return [
    ['a null state', null],
    ['a string state', 'consent=true'],
    ['entries a string', { ...good, entries: 'consent' }],
    ['an entry not an object', { ...good, entries: { consent: 'yes' } }],
    ['path a number', { ...good, path: 7 }],
    ['visits null', { ...good, visits: null }],
    ['records a string', { ...good, records: 'none' }],
    ['a record null', { ...good, records: [null] }],
    ['position a number', { ...good, position: 42 }],
    ['an unknown status', { ...good, status: 'paused' }],
    ["another call's row", { ...good, callId: `${callId}-other` }],
  ];
}

async function resume(store: StoreUnderTest, callId: string, extra = {}) {
  const s = await startBank({ checkpoints: await store.open(), callId, ...extra });
  callers.push(s.caller);
  return s;
}

function expectRefused(result: FlowResult<unknown> | undefined, code: string, step?: string) {
  expect(result).toMatchObject({
    status: 'failed',
    error: { code: 'checkpoint_refused' },
    refused: { code, ...(step ? { step } : {}) },
  });
}

function describeTrust(make: () => Promise<StoreUnderTest>, name: string, skip: boolean) {
  describe(`checkpoints are checked before they are trusted (${name})`, { skip }, () => {
    let store: StoreUnderTest;
    beforeAll(async () => {
      store = await make();
      stores.push(store);
    });
    const key = (callId: string): CheckpointKey => ({ flow: 'bank', callId });

    it('resumes a well-formed checkpoint where the answers lead', async () => {
      const callId = `${name}-good`;
      await store.forge(key(callId), droppedAtAmount(callId));
      const { caller, box } = await resume(store, callId);
      expect(caller.agentLines).toEqual([
        "Welcome back. We'll pick up where we left off: the amount.",
        AMOUNT,
      ]);
      await caller.say('forty');
      expect(caller.agentLines.at(-1)).toBe(DONE);
      expect(box.result).toMatchObject({
        status: 'completed',
        value: { consent: true, pin: '4321', amount: 40 },
      });
    });

    it('refuses a forged position past consent and PIN, asking nothing and writing nothing', async () => {
      const callId = `${name}-forged-position`;
      const forged = {
        ...droppedAtAmount(callId),
        entries: {},
        path: [],
      };
      await store.forge(key(callId), forged);
      const before = await store.raw(key(callId));
      const { caller, box } = await resume(store, callId);
      expect(caller.agentLines).toEqual([]);
      expectRefused(box.result, 'position_mismatch', 'amount');
      expect(box.result?.answers).toEqual({});
      expect(await store.raw(key(callId))).toBe(before);
    });

    it('refuses a completed row whose answers fail their steps (ifCompleted: return)', async () => {
      const callId = `${name}-forged-completed`;
      await store.forge(key(callId), {
        ...droppedAtAmount(callId),
        status: 'completed',
        position: 'end',
        entries: {
          consent: { value: true },
          pin: { value: 'letmein' },
          amount: { value: 'all of it' },
          done: {},
        },
        path: ['consent', 'pin', 'amount', 'done'],
      });
      const { caller, box } = await resume(store, callId, { ifCompleted: 'return' });
      expect(caller.agentLines).toEqual([]);
      expectRefused(box.result, 'invalid_answer', 'pin');
    });

    it('refuses answers for steps the flow does not have, and skips it cannot make', async () => {
      const good = droppedAtAmount(`${name}-x`);
      const cases: Array<[string, object, string]> = [
        [
          'extra',
          {
            entries: { ...good.entries, admin: { value: true } },
            path: [...good.path, 'admin'],
          },
          'invalid_answer',
        ],
        [
          'skipped',
          { entries: { consent: { value: true }, pin: { skipped: true } } },
          'invalid_answer',
        ],
        ['off-path', { path: ['consent'] }, 'position_mismatch'],
      ];
      for (const [tag, change, code] of cases) {
        const callId = `${name}-bad-${tag}`;
        await store.forge(key(callId), { ...droppedAtAmount(callId), ...change });
        const { caller, box } = await resume(store, callId);
        expect(caller.agentLines, tag).toEqual([]);
        expectRefused(box.result, code);
      }
    });

    it('refuses every structural corruption with a typed reason instead of throwing', async () => {
      const cases = corruptions(`${name}-corrupt`);
      if (name === 'sqlite') cases.push(['text that is not JSON', undefined]);
      for (const [what, state] of cases) {
        const callId = `${name}-corrupt-${what.replace(/\W+/g, '-')}`;
        await store.forge(
          key(callId),
          state,
          state === undefined ? { text: '{"flow":"bank",' } : {},
        );
        const { caller, box } = await resume(store, callId);
        expect(caller.agentLines, what).toEqual([]);
        expect(box.result, what).toMatchObject({
          status: 'failed',
          error: { code: 'checkpoint_refused' },
          refused: { code: 'corrupt' },
        });
      }
    });

    it('with ifRefused: restart, a refused checkpoint starts the call afresh over it', async () => {
      const callId = `${name}-restart`;
      await store.forge(key(callId), null);
      const { caller, box } = await resume(store, callId, { ifRefused: 'restart' });
      expect(caller.agentLines).toEqual([CONSENT]);
      await caller.say('no');
      expect(box.result).toMatchObject({ status: 'completed', value: { consent: false } });
    });
  });
}

describeTrust(() => sqliteUnderTest(join(dir, 'trust.db')), 'sqlite', false);
const noPostgres = (await serviceMissing('postgres')) !== undefined;
describeTrust(
  () => postgresUnderTest(PG_URL, uniqueTable('taskline_trust_test')),
  'postgres',
  noPostgres,
);
