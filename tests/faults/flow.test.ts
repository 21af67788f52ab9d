// Fault classes on a running flow: a step that never answers (its timeoutMs), the agent
// replaced and the session closed mid-flow, the caller hanging up at every step, and a
// checkpoint store that is unwritable, slow or silent, or that another session won. Each
// asserts the flow's typed result, what the caller heard (nothing twice, a goodbye where one
// is due), the checkpoint left behind, and an end on the virtual clock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { voice } from '@livekit/agents';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  CONSENT_QUESTION,
  EMAIL_QUESTION,
  GOODBYE_LINE,
  REFERRAL_QUESTION,
  SCORE_QUESTION,
  THANKS_LINE,
} from '../../examples/survey/index.js';
import { announce } from '../../src/flows/announce.js';
import { flow } from '../../src/flows/builder.js';
import {
  type CheckpointKey,
  type CheckpointStore,
  type FlowState,
  MemoryCheckpointStore,
  SqliteCheckpointStore,
} from '../../src/flows/checkpoints/index.js';
import { freeText } from '../../src/tasks/prebuilt.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { flushAsync, VirtualClock } from '../../src/testing/virtual-clock.js';
import { startSurvey } from '../flows/helpers.js';
import { Supervisor } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-flow-faults-'));
const callers: SimulatedCaller[] = [];
afterEach(async () => {
  for (const c of callers.splice(0)) await c.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A store whose saves can be made to fail, wait, or never answer, around a real store. */
class FaultyStore implements CheckpointStore {
  readonly kind = 'faulty';
  saves = 0;
  constructor(
    private readonly inner: CheckpointStore,
    private readonly fault: (save: number) => Promise<void> | undefined,
  ) {}
  load(key: CheckpointKey) {
    return this.inner.load(key);
  }
  async save(key: CheckpointKey, state: FlowState, expected: number): Promise<number> {
    this.saves += 1;
    await this.fault(this.saves);
    return this.inner.save(key, state, expected);
  }
  delete(key: CheckpointKey) {
    return this.inner.delete(key);
  }
  close() {
    return this.inner.close();
  }
}

/** A real SQLite store that becomes read-only after `writable` saves (a disk gone read-only). */
async function turnsReadOnly(writable: number) {
  const path = join(dir, `ro-${Math.random().toString(36).slice(2)}.db`);
  const rw = await SqliteCheckpointStore.open({ path });
  const ro = await SqliteCheckpointStore.open({ db: new Database(path, { readonly: true }) });
  let saves = 0;
  const store: CheckpointStore = {
    kind: 'sqlite',
    load: (key) => rw.load(key),
    save: (key, state, expected) => {
      saves += 1;
      return (saves <= writable ? rw : ro).save(key, state, expected);
    },
    delete: (key) => rw.delete(key),
    close: () => rw.close(),
  };
  return { store, rw };
}

/** Lets the event loop run until `done()` holds (bounded in turns, never in time). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await flushAsync(1);
  expect(done()).toBe(true);
}

async function survey(options: Parameters<typeof startSurvey>[0] = {}) {
  const s = await startSurvey(options);
  callers.push(s.caller);
  return s;
}

describe('a step that never answers', () => {
  it('with timeoutMs and onFailure "skip": the step is skipped and the flow goes on', async () => {
    const nickname = freeText({ name: 'nickname', question: 'Any nickname we should use?' });
    const f = flow('profile')
      .step('nickname', nickname.with({ retry: { noInputTimeoutMs: 60_000 } }), {
        timeoutMs: 5_000,
        onFailure: 'skip',
      })
      .step('done', announce('All set. Goodbye!'));
    class Profile extends voice.Agent {
      result: unknown;
      override async onEnter(): Promise<void> {
        this.result = await f.run();
      }
    }
    const agent = new Profile({ instructions: 'x' });
    const caller = await SimulatedCaller.start({ agent, llm: new ScriptedLLM() });
    callers.push(caller);
    await caller.silence(4_999);
    expect(agent.result).toBeUndefined();
    await caller.silence(1);
    expect(agent.result).toMatchObject({ status: 'completed', value: {} });
    expect(caller.agentLines).toEqual(['Any nickname we should use?', 'All set. Goodbye!']);
    const record = (agent.result as { report: { steps: Array<{ outcome: string }> } }).report
      .steps[0];
    expect(record?.outcome).toBe('skipped');
  });
});

describe('a flow awaited twice', () => {
  it('a second run() throws as upstream’s AgentTask does', async () => {
    const f = flow('hello').step('hi', announce('Hello!'));
    class Once extends voice.Agent {
      task = f.create();
      result: unknown;
      override async onEnter(): Promise<void> {
        this.result = await this.task.run();
      }
    }
    const agent = new Once({ instructions: 'x' });
    const caller = await SimulatedCaller.start({ agent, llm: new ScriptedLLM() });
    callers.push(caller);
    expect(agent.result).toMatchObject({ status: 'completed' });
    await expect(agent.task.run()).rejects.toThrow(/already started/);
  });
});

describe('the flow interrupted from outside', () => {
  it('agent replaced mid-flow: the awaiter gets cancelled, the checkpoint stays on the step', async () => {
    const checkpoints = new MemoryCheckpointStore();
    const s = await survey({ checkpoints, callId: 'replaced' });
    await s.caller.say('yes');
    expect(s.caller.agentLines.at(-1)).toBe(SCORE_QUESTION);
    s.caller.session.updateAgent(new Supervisor());
    await s.caller.settle();
    expect(s.agent.result).toMatchObject({
      status: 'cancelled',
      step: 'score',
      answers: { consent: true },
    });
    expect(s.agent.result?.status !== 'completed' && s.agent.result?.reason).toMatch(/replaced/);
    // The supervisor has the call now: the flow neither says goodbye nor ends it.
    expect(s.caller.agentLines.at(-1)).toBe('A supervisor here; I will take it from now.');
    expect(s.caller.endedBy).toBeUndefined();
    const saved = await checkpoints.load({ flow: 'survey', callId: 'replaced' });
    expect(saved?.state.position).toBe('score');
    await s.caller.silence(600_000);
    expect(s.caller.clock.pendingTimers).toBe(0);
  });

  it('session closed mid-flow (worker shutdown): cancelled, resumable, not "ended by the bot"', async () => {
    const checkpoints = new MemoryCheckpointStore();
    const s = await survey({ checkpoints, callId: 'closed' });
    await s.caller.say('yes');
    await s.caller.close();
    expect(s.agent.result).toMatchObject({ status: 'cancelled', step: 'score' });
    expect(s.caller.endedBy).toBeUndefined();
    expect(s.caller.agentLines).toEqual([CONSENT_QUESTION, SCORE_QUESTION]);
    const saved = await checkpoints.load({ flow: 'survey', callId: 'closed' });
    expect(saved?.state).toMatchObject({ status: 'cancelled', position: 'score' });
  });
});

describe('the caller hangs up at every step', () => {
  const steps = [
    { step: 'consent', question: CONSENT_QUESTION, answers: {} },
    { step: 'score', question: SCORE_QUESTION, answers: { consent: true } },
    { step: 'referral', question: REFERRAL_QUESTION, answers: { consent: true, score: 9 } },
    {
      step: 'email',
      question: EMAIL_QUESTION,
      answers: { consent: true, score: 9, referral: true },
    },
  ];
  for (const [i, at] of steps.entries()) {
    it(`at ${at.step}: hangup there, the answers so far kept, no goodbye`, async () => {
      const checkpoints = new MemoryCheckpointStore();
      const s = await survey({ checkpoints, callId: `hangup-${at.step}` });
      const replies = [
        () => s.caller.say('yes'),
        () => s.caller.dtmf('9'),
        () => s.caller.say('yes'),
      ];
      for (const reply of replies.slice(0, i)) await reply();
      expect(s.caller.agentLines.at(-1)).toBe(at.question);
      const heard = s.caller.agentLines.length;
      await s.caller.hangup();
      expect(s.agent.result).toMatchObject({
        status: 'hangup',
        step: at.step,
        answers: at.answers,
      });
      expect(s.caller.agentLines).toHaveLength(heard);
      expect(s.caller.endedBy).toBe('caller');
      expect(new Set(s.caller.agentLines).size).toBe(heard);
      const saved = await checkpoints.load({ flow: 'survey', callId: `hangup-${at.step}` });
      expect(saved?.state).toMatchObject({ status: 'hangup', position: at.step });
    });
  }
});

describe('the checkpoint store fails', () => {
  it('unwritable mid-call (SQLite gone read-only): failed with the error, answers kept, goodbye, call ended', async () => {
    const { store, rw } = await turnsReadOnly(2);
    const s = await survey({ checkpoints: store, callId: 'read-only' });
    await s.caller.say('yes');
    await s.caller.dtmf('9');
    // The score was given, but its write failed: the result still has it, and names the
    // step the flow could not go on to.
    expect(s.agent.result).toMatchObject({
      status: 'failed',
      step: 'referral',
      answers: { consent: true, score: 9 },
      error: { code: 'SQLITE_READONLY' },
    });
    expect(s.caller.agentLines).toEqual([CONSENT_QUESTION, SCORE_QUESTION, GOODBYE_LINE]);
    expect(s.caller.endedBy).toBe('bot');
    // What was written before the fault is intact: a later session resumes at the score.
    const saved = await rw.load({ flow: 'survey', callId: 'read-only' });
    expect(saved?.state.position).toBe('score');
    await rw.close();
  });

  it('slow (3 s a write): the call completes with every answer, each question asked once', async () => {
    const clock = new VirtualClock();
    // Every write after the first (the claim) takes 3 s on the call's clock.
    const store = new FaultyStore(new MemoryCheckpointStore(), (n) =>
      n >= 2 ? clock.sleep(3_000) : undefined,
    );
    const s = await survey({ checkpoints: store, callId: 'slow', clock });
    // Whenever a write starts (an event), 3 s pass on the call's clock, until the turn ends.
    const turn = async (act: () => Promise<unknown>) => {
      let finished = false;
      const done = act().finally(() => {
        finished = true;
      });
      let seen = store.saves;
      while (!finished) {
        await until(() => finished || store.saves > seen);
        if (store.saves > seen) {
          seen = store.saves;
          await clock.advance(3_000);
        }
      }
      await done;
    };
    await turn(() => s.caller.say('yes'));
    await turn(() => s.caller.dtmf('7'));
    expect(s.agent.result).toMatchObject({
      status: 'completed',
      value: { consent: true, score: 7 },
    });
    expect(s.caller.agentLines).toEqual([CONSENT_QUESTION, SCORE_QUESTION, THANKS_LINE]);
    expect(s.caller.endedBy).toBe('bot');
  });

  it('silent (a write never answers): failed as timeout within checkpointTimeoutMs', async () => {
    const clock = new VirtualClock();
    const store = new FaultyStore(new MemoryCheckpointStore(), (n) =>
      n >= 2 ? new Promise<never>(() => {}) : undefined,
    );
    const s = await survey({
      checkpoints: store,
      callId: 'silent',
      clock,
      checkpointTimeoutMs: 4_000,
    });
    const answered = s.caller.say('yes');
    await until(() => store.saves === 2);
    await clock.advance(3_999);
    expect(s.agent.result).toBeUndefined();
    await clock.advance(1);
    await answered;
    expect(s.agent.result).toMatchObject({
      status: 'failed',
      step: 'score',
      answers: { consent: true },
      error: { code: 'timeout' },
    });
    expect(s.caller.agentLines).toEqual([CONSENT_QUESTION, GOODBYE_LINE]);
    expect(s.caller.endedBy).toBe('bot');
  });

  it('at the start (the store rejects everything): failed before asking, goodbye, ended', async () => {
    const store = new FaultyStore(new MemoryCheckpointStore(), () =>
      Promise.reject(new Error('disk full')),
    );
    const s = await survey({ checkpoints: store, callId: 'full' });
    expect(s.agent.result).toMatchObject({
      status: 'failed',
      error: { code: 'store_error', message: 'disk full' },
    });
    expect(s.caller.agentLines).toEqual([GOODBYE_LINE]);
    expect(s.caller.endedBy).toBe('bot');
  });
});

describe('two sessions on one call', () => {
  it('the losing session tells its caller and ends the call', async () => {
    const checkpoints = new MemoryCheckpointStore();
    const a = await survey({ checkpoints, callId: 'contested' });
    await a.caller.say('yes');
    const b = await survey({ checkpoints, callId: 'contested' });
    await a.caller.say('nine');
    expect(a.agent.result).toMatchObject({ status: 'conflict' });
    expect(a.caller.agentLines.at(-1)).toBe('This survey is continuing on another line. Goodbye.');
    expect(a.caller.endedBy).toBe('bot');
    // The winner carries on untouched.
    expect(b.caller.endedBy).toBeUndefined();
    expect(b.caller.agentLines.at(-1)).toBe(SCORE_QUESTION);
  });
});
