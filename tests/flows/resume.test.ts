import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  CONSENT_QUESTION,
  REASON_QUESTION,
  SCORE_QUESTION,
  THANKS_LINE,
} from '../../examples/survey/index.js';
import {
  type CheckpointStore,
  MemoryCheckpointStore,
  PostgresCheckpointStore,
  SqliteCheckpointStore,
} from '../../src/flows/checkpoints/index.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { serviceMissing } from '../services.js';
import { startSurvey } from './helpers.js';
import { PG_URL, uniqueTable } from './pg.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-resume-'));
const pgTable = uniqueTable('taskline_resume_test');
const closers: Array<() => Promise<void>> = [];
const callers: SimulatedCaller[] = [];

afterEach(async () => {
  for (const c of callers.splice(0)) await c.close();
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  rmSync(dir, { recursive: true, force: true });
});

const RESUME_LINE = "Welcome back. We'll pick up where we left off: the reason for your score.";
const EXPECTED = { consent: true, score: 3, reason: 'the wait was too long' };

async function uninterrupted() {
  const s = await startSurvey({ checkpoints: new MemoryCheckpointStore(), callId: 'straight' });
  callers.push(s.caller);
  await s.caller.say('yes');
  await s.caller.dtmf('3');
  await s.caller.say('the wait was too long');
  if (s.agent.result?.status !== 'completed') throw new Error('not completed');
  return s.agent.result.value;
}

/** Answers consent and score, then drops the call (the session closes mid-survey). */
async function dropAfterScore(checkpoints: CheckpointStore, callId: string) {
  let finalWrite!: () => void;
  const written = new Promise<void>((resolve) => {
    finalWrite = resolve;
  });
  const s = await startSurvey({
    checkpoints,
    callId,
    onCheckpoint: (info) => {
      if (info.status === 'hangup') finalWrite();
    },
  });
  callers.push(s.caller);
  await s.caller.say('yes');
  await s.caller.dtmf('3');
  expect(s.caller.agentLines.at(-1)).toBe(REASON_QUESTION);
  await s.caller.hangup();
  expect(s.agent.result).toMatchObject({ status: 'hangup', step: 'reason' });
  // The flow records the interrupted step as it stops; wait for that write (an event, not time).
  await written;
}

async function resumeAndFinish(checkpoints: CheckpointStore, callId: string) {
  const s = await startSurvey({ checkpoints, callId });
  callers.push(s.caller);
  expect(s.caller.agentLines).toEqual([RESUME_LINE, REASON_QUESTION]);
  await s.caller.say('the wait was too long');
  expect(s.caller.agentLines.at(-1)).toBe(THANKS_LINE);
  return s.agent.result;
}

function describeResume(name: string, open: () => Promise<CheckpointStore>, skip = false) {
  describe(`resume from ${name}`, { skip }, () => {
    it('continues a dropped call at the first unanswered step with the same typed result', async () => {
      const callId = `${name}-dropped`;
      await dropAfterScore(await open(), callId);
      // A new session (and a new store handle, as a new process would have).
      const result = await resumeAndFinish(await open(), callId);
      expect(result?.status).toBe('completed');
      if (result?.status !== 'completed') return;
      expect(result.value).toEqual(EXPECTED);
      expect(result.value).toEqual(await uninterrupted());
      expect(result.report.resumes).toBe(1);
      expect(result.report.steps.map((r) => [r.step, r.outcome])).toEqual([
        ['consent', 'ok'],
        ['score', 'ok'],
        ['reason', 'hangup'],
        ['reason', 'ok'],
        ['thanks', 'ok'],
      ]);
      expect(result.report.steps.find((r) => r.step === 'score')?.modality).toBe('dtmf');
    });

    it('returns a completed call without asking again when asked to (ifCompleted: return)', async () => {
      const callId = `${name}-done`;
      await dropAfterScore(await open(), callId);
      await resumeAndFinish(await open(), callId);
      const s = await startSurvey({ checkpoints: await open(), callId, ifCompleted: 'return' });
      callers.push(s.caller);
      expect(s.caller.agentLines).toEqual([]);
      expect(s.agent.result).toMatchObject({ status: 'completed', value: EXPECTED });
    });

    it('starts from the beginning for a new call id', async () => {
      const s = await startSurvey({ checkpoints: await open(), callId: `${name}-new` });
      callers.push(s.caller);
      expect(s.caller.agentLines).toEqual([CONSENT_QUESTION]);
      await s.caller.say('yes');
      expect(s.caller.agentLines.at(-1)).toBe(SCORE_QUESTION);
    });
  });
}

const noPostgres = (await serviceMissing('postgres')) !== undefined;

describeResume('sqlite', async () => {
  const store = await SqliteCheckpointStore.open({ path: join(dir, 'resume.db') });
  closers.push(() => store.close());
  return store;
});

describeResume(
  'postgres',
  async () => {
    const store = await PostgresCheckpointStore.connect({
      connectionString: PG_URL,
      table: pgTable,
    });
    closers.push(async () => {
      await store.close();
    });
    return store;
  },
  noPostgres,
);

afterAll(async () => {
  if (noPostgres) return;
  const cleanup = await PostgresCheckpointStore.connect({
    connectionString: PG_URL,
    table: pgTable,
  });
  await cleanup.drop();
  await cleanup.close();
});
