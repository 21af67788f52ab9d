import { llm, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { attachCall } from '../../src/core/call.js';
import type { Expectation, TurnJudgement } from '../../src/core/expectation.js';
import {
  TaskAwareTurnDetector,
  type TextTurnDetector,
  TURN_TIMING,
  type TurnDecision,
  taskAwareTurnHandling,
  useTaskAwareTurns,
} from '../../src/tasks/turn-detector.js';

/** A chat whose last message is the caller's words so far, as upstream hands it over. */
function heard(text: string): llm.ChatContext {
  const ctx = llm.ChatContext.empty();
  ctx.addMessage({ role: 'assistant', content: 'What is your phone number?' });
  ctx.addMessage({ role: 'user', content: text });
  return ctx;
}

/** An expectation judging by a table of phrases (the capture's judge, as the detector sees it). */
function expecting(table: Record<string, TurnJudgement>, task = 'phone'): Expectation {
  return {
    task,
    kind: 'phone',
    phrases: [],
    judge: (text) => table[text] ?? 'unknown',
  };
}

function setup(options: ConstructorParameters<typeof TaskAwareTurnDetector>[0] = {}) {
  // No VAD: the end of speech is "now" when the prediction is asked for.
  const session = new voice.AgentSession({ vad: null });
  const call = attachCall(session);
  const decisions: TurnDecision[] = [];
  const detector = new TaskAwareTurnDetector({
    acknowledgement: false,
    unknownDelayMs: 40,
    onDecision: (d) => decisions.push(d),
    ...options,
  }).bind(session);
  return { session, call, detector, decisions };
}

describe('task-aware end of turn', () => {
  it('waits the long timing while the caller is mid-answer', async () => {
    const { call, detector, decisions } = setup();
    call.expect(expecting({ 'my number is four one five': 'incomplete' }));
    const threshold = await detector.unlikelyThreshold();
    const p = await detector.predictEndOfTurn(heard('my number is four one five'));
    expect(p).toBeLessThan(threshold);
    expect(decisions).toMatchObject([{ judgement: 'incomplete', task: 'phone', timing: 'long' }]);
  });

  it('without an acknowledgement, a complete answer keeps the ordinary timing', async () => {
    const { call, detector, decisions } = setup({ unknownDelayMs: 80 });
    call.expect(expecting({ 'four one five five five five zero one nine nine': 'complete' }));
    const started = Date.now();
    const p = await detector.predictEndOfTurn(
      heard('four one five five five five zero one nine nine'),
    );
    expect(p).toBeGreaterThanOrEqual(await detector.unlikelyThreshold());
    // Held until the ordinary time after the end of speech: a cut utterance can still join.
    expect(Date.now() - started).toBeGreaterThanOrEqual(70);
    expect(decisions[0]).toMatchObject({ judgement: 'complete', timing: 'ordinary' });
  });

  it('with nothing expected, ends the turn after the ordinary delay', async () => {
    const { detector, decisions } = setup({ unknownDelayMs: 60 });
    const started = Date.now();
    const p = await detector.predictEndOfTurn(heard('I lost my card somewhere in town'));
    expect(p).toBeGreaterThanOrEqual(await detector.unlikelyThreshold());
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    expect(decisions[0]).toMatchObject({ judgement: 'none', timing: 'ordinary' });
    expect(decisions[0]!.task).toBeUndefined();
  });

  it('follows the most recent expectation, and the one below once it is released', async () => {
    const { call, detector, decisions } = setup();
    call.expect(expecting({ five: 'complete' }, 'outer'));
    const release = call.expect(expecting({ five: 'incomplete' }, 'inner'));
    await detector.predictEndOfTurn(heard('five'));
    release();
    await detector.predictEndOfTurn(heard('five'));
    expect(decisions.map((d) => [d.task, d.judgement])).toEqual([
      ['inner', 'incomplete'],
      ['outer', 'complete'],
    ]);
  });

  it('a judge that throws leaves the ordinary timing', async () => {
    const { call, detector, decisions } = setup();
    call.expect({
      task: 'broken',
      kind: 'custom',
      phrases: [],
      judge: () => {
        throw new Error('parser bug');
      },
    });
    const p = await detector.predictEndOfTurn(heard('anything'));
    expect(p).toBe(1);
    expect(decisions[0]).toMatchObject({ judgement: 'unknown', timing: 'ordinary' });
  });

  it('judges nothing when the last message is not the caller (no transcript yet)', async () => {
    const { call, detector, decisions } = setup();
    let judged = 0;
    call.expect({
      task: 'q',
      kind: 'yesNo',
      phrases: [],
      judge: () => {
        judged += 1;
        return 'complete';
      },
    });
    const ctx = llm.ChatContext.empty();
    ctx.addMessage({ role: 'assistant', content: 'Is that right?' });
    await detector.predictEndOfTurn(ctx);
    expect(judged).toBe(0);
    expect(decisions[0]).toMatchObject({ judgement: 'none' });
  });

  it("asks the app's turn-detector model when the capture cannot judge", async () => {
    const asked: string[] = [];
    const model: TextTurnDetector = {
      model: 'eou-test',
      provider: 'test',
      supportsLanguage: async () => true,
      unlikelyThreshold: async () => 0.3,
      predictEndOfTurn: async (ctx) => {
        const text = ctx.items.at(-1)?.type === 'message' ? ctx.items.at(-1) : undefined;
        const words = text && 'textContent' in text ? (text.textContent ?? '') : '';
        asked.push(words);
        return words.endsWith('and') ? 0.1 : 0.9;
      },
    };
    const { call, detector, decisions } = setup({ fallback: model });
    call.expect(expecting({ 'four one five': 'incomplete' }));
    expect(await detector.predictEndOfTurn(heard('I would like to pay and'))).toBe(0);
    expect(await detector.predictEndOfTurn(heard('I would like to pay'))).toBe(1);
    // The capture's own judgement wins where it has one: the model is not asked.
    expect(await detector.predictEndOfTurn(heard('four one five'))).toBe(0);
    expect(asked).toEqual(['I would like to pay and', 'I would like to pay']);
    expect(decisions.map((d) => d.timing)).toEqual(['long', 'ordinary', 'long']);
  });

  it('a model that fails leaves the ordinary timing', async () => {
    const model: TextTurnDetector = {
      model: 'eou-test',
      provider: 'test',
      supportsLanguage: async () => true,
      unlikelyThreshold: async () => 0.3,
      predictEndOfTurn: async () => {
        throw new Error('inference failed');
      },
    };
    const { detector } = setup({ fallback: model });
    expect(await detector.predictEndOfTurn(heard('hello there'))).toBe(1);
  });

  it('serves one session only, and refuses nonsense timing', () => {
    const { detector } = setup();
    expect(() => detector.bind(new voice.AgentSession({}))).toThrow(/one session/);
    const bad = /unknownDelayMs must be between 0 and 10000 ms \(got (-1|NaN)\)/;
    expect(() => new TaskAwareTurnDetector({ unknownDelayMs: -1 })).toThrow(bad);
    expect(() => new TaskAwareTurnDetector({ unknownDelayMs: Number.NaN })).toThrow(bad);
    try {
      new TaskAwareTurnDetector({ unknownDelayMs: 20_000 });
      expect.unreachable('a delay over 10 s is refused');
    } catch (err) {
      expect(err).toMatchObject({ name: 'TasklineError', code: 'invalid_argument' });
    }
  });

  it("installs itself and taskline's endpointing on a session", () => {
    const session = new voice.AgentSession({});
    const detector = useTaskAwareTurns(session, { acknowledgement: false });
    expect(session.turnDetection).toBe(detector);
    expect(session.sessionOptions.turnHandling.endpointing).toMatchObject({
      minDelay: TURN_TIMING.completeDelayMs,
      maxDelay: TURN_TIMING.incompleteDelayMs,
    });
    const options = taskAwareTurnHandling();
    expect(options.turnHandling.turnDetection).toBe(options.detector);
  });
});
