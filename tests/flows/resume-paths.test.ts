// Checkpoints the runner itself writes always resume: a call that dropped in the middle of a
// go-back, after looping back to an earlier step, or inside a nested flow passes the checks a
// resumed checkpoint goes through (re-walked answers, position, path) and goes on where it was.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import {
  EMAIL_QUESTION,
  REFERRAL_QUESTION,
  SCORE_QUESTION,
  THANKS_LINE,
} from '../../examples/survey/index.js';
import { flow } from '../../src/flows/builder.js';
import { MemoryCheckpointStore } from '../../src/flows/checkpoints/index.js';
import type { CheckpointInfo, FlowRunOptions } from '../../src/flows/runner.js';
import type { FlowResult } from '../../src/flows/types.js';
import { yesNo } from '../../src/tasks/prebuilt.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { startSurvey } from './helpers.js';

const callers: SimulatedCaller[] = [];
afterEach(async () => {
  for (const c of callers.splice(0)) await c.close();
});

/** A promise for the write a hang-up leaves, and the listener that resolves it. */
function hangupWrite() {
  let done!: () => void;
  const written = new Promise<void>((resolve) => {
    done = resolve;
  });
  return { written, onCheckpoint: (i: CheckpointInfo) => i.status === 'hangup' && done() };
}

async function host(run: (o: FlowRunOptions) => Promise<FlowResult<unknown>>, o: FlowRunOptions) {
  const box: { result?: FlowResult<unknown> } = {};
  class Host extends voice.Agent {
    constructor() {
      super({ id: 'host', instructions: 'host' });
    }
    override async onEnter(): Promise<void> {
      box.result = await run(o);
    }
  }
  const caller = await SimulatedCaller.start({ agent: new Host(), llm: new ScriptedLLM() });
  callers.push(caller);
  return { caller, box };
}

const q = (name: string) => yesNo({ name, question: `${name}?` });

describe('a resumed call goes on where it was', () => {
  it('in the middle of a go-back: at the step it went back to, then on to where it was', async () => {
    const checkpoints = new MemoryCheckpointStore();
    const w = hangupWrite();
    const s = await startSurvey({ checkpoints, callId: 'revisit', onCheckpoint: w.onCheckpoint });
    callers.push(s.caller);
    await s.caller.say('yes');
    await s.caller.say('nine');
    await s.caller.say('yes');
    expect(s.caller.agentLines.at(-1)).toBe(EMAIL_QUESTION);
    await s.caller.say('hold on, I want to change my score');
    expect(s.caller.agentLines.at(-1)).toBe(SCORE_QUESTION);
    await s.caller.hangup();
    await w.written;

    const back = await startSurvey({ checkpoints, callId: 'revisit' });
    callers.push(back.caller);
    expect(back.caller.agentLines).toEqual([
      "Welcome back. We'll pick up where we left off: your score from 0 to 10.",
      SCORE_QUESTION,
    ]);
    await back.caller.say('ten');
    // The later answers still apply: straight back to the email question.
    expect(back.caller.agentLines.at(-1)).toBe(EMAIL_QUESTION);
    await back.caller.say('jane dot doe at example dot com');
    await back.caller.say('yes');
    expect(back.caller.agentLines.at(-1)).toBe(THANKS_LINE);
    expect(back.agent.result).toMatchObject({
      status: 'completed',
      value: { consent: true, score: 10, referral: true, email: 'jane.doe@example.com' },
    });
    expect(back.caller.agentLines).not.toContain(REFERRAL_QUESTION);
  });

  it('after looping back to an earlier step: there, asked again', async () => {
    const loop = flow('loop')
      .step('ask', q('ask'), { next: 'again', maxVisits: 3 })
      .step('again', q('again'), { next: { true: 'ask', false: 'end' } });
    const checkpoints = new MemoryCheckpointStore();
    const w = hangupWrite();
    const first = await host((o) => loop.run(o), {
      checkpoints,
      callId: 'loop',
      onCheckpoint: w.onCheckpoint,
    });
    await first.caller.say('yes');
    await first.caller.say('yes');
    expect(first.caller.agentLines).toEqual(['ask?', 'again?', 'ask?']);
    await first.caller.hangup();
    await w.written;

    const back = await host((o) => loop.run(o), { checkpoints, callId: 'loop', resumeLine: false });
    expect(back.caller.agentLines).toEqual(['ask?']);
    await back.caller.say('no');
    await back.caller.say('no');
    expect(back.box.result).toMatchObject({
      status: 'completed',
      value: { ask: false, again: false },
    });
  });

  it('inside a nested flow: the outer and the inner flow both resume', async () => {
    const inner = flow('inner').step('one', q('one')).step('two', q('two'));
    const outer = flow('outer')
      .step('start', q('start'))
      .step('nested', inner)
      .step('done', q('done'));
    const checkpoints = new MemoryCheckpointStore();
    const w = hangupWrite();
    const first = await host((o) => outer.run(o), {
      checkpoints,
      callId: 'nested',
      onCheckpoint: w.onCheckpoint,
    });
    await first.caller.say('yes');
    await first.caller.say('no');
    expect(first.caller.agentLines.at(-1)).toBe('two?');
    await first.caller.hangup();
    await w.written;

    const back = await host((o) => outer.run(o), {
      checkpoints,
      callId: 'nested',
      resumeLine: false,
    });
    expect(back.caller.agentLines).toEqual(['two?']);
    await back.caller.say('yes');
    await back.caller.say('yes');
    expect(back.box.result).toMatchObject({
      status: 'completed',
      value: { start: true, nested: { one: false, two: true }, done: true },
    });
  });
});
