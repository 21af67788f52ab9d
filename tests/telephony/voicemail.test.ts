import { voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { attachCall } from '../../src/core/call.js';
import { isTasklineError } from '../../src/core/errors.js';
import {
  type AmdSource,
  type AnsweringMachineResult,
  detectAnsweringMachine,
  renderTemplate,
} from '../../src/telephony/voicemail.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { flushAsync, VirtualClock } from '../../src/testing/virtual-clock.js';

function prediction(category: voice.AMDCategory, transcript = ''): voice.AMDPredictionEvent {
  return {
    type: 'amd_prediction',
    category,
    transcript,
    reason: 'llm',
    rawResponse: '',
    isMachine: category.startsWith('machine'),
    speechDurationMs: 0,
    delayMs: 0,
  };
}

/** An AMD stand-in that settles when the test says so. */
class FakeAmd implements AmdSource {
  closed = false;
  private settle: ((ev: voice.AMDPredictionEvent) => void) | undefined;
  private fail: ((e: Error) => void) | undefined;
  execute(): Promise<voice.AMDPredictionEvent> {
    return new Promise((resolve, reject) => {
      this.settle = resolve;
      this.fail = reject;
    });
  }
  emit(ev: voice.AMDPredictionEvent): void {
    this.settle?.(ev);
  }
  error(e: Error): void {
    this.fail?.(e);
  }
  async aclose(): Promise<void> {
    this.closed = true;
  }
}

function offlineCall() {
  const session = new voice.AgentSession({ llm: new ScriptedLLM() });
  const clock = new VirtualClock();
  const call = attachCall(session, { clock, callerIdentity: 'callee' });
  return { session, clock, call };
}

describe('detectAnsweringMachine', () => {
  it.each<[voice.AMDCategory, Partial<AnsweringMachineResult>]>([
    [voice.AMDCategory.HUMAN, { answeredBy: 'human', canLeaveMessage: false }],
    [voice.AMDCategory.MACHINE_VM, { answeredBy: 'machine', canLeaveMessage: true }],
    [voice.AMDCategory.MACHINE_UNAVAILABLE, { answeredBy: 'machine', canLeaveMessage: false }],
    [voice.AMDCategory.MACHINE_IVR, { answeredBy: 'machine', canLeaveMessage: false }],
    [voice.AMDCategory.UNCERTAIN, { answeredBy: 'unknown', canLeaveMessage: false }],
  ])('maps %s', async (category, expected) => {
    const { session } = offlineCall();
    const amd = new FakeAmd();
    const result = detectAnsweringMachine(session, { detector: amd });
    amd.emit(prediction(category, 'hello'));
    expect(await result).toEqual({ category, transcript: 'hello', reason: 'llm', ...expected });
  });

  it('resolves unknown on a detector error, a timeout on the call clock, or a hang-up', async () => {
    const { session, clock, call } = offlineCall();
    const failing = new FakeAmd();
    const failed = detectAnsweringMachine(session, { detector: failing });
    failing.error(new Error('llm down'));
    expect(await failed).toMatchObject({
      answeredBy: 'unknown',
      reason: 'detector failed: llm down',
    });

    const slow = detectAnsweringMachine(session, { detector: new FakeAmd(), timeoutMs: 5000 });
    await clock.advance(5000);
    expect(await slow).toMatchObject({ answeredBy: 'unknown', reason: 'timeout' });
    expect(clock.pendingTimers).toBe(0);

    const dropped = detectAnsweringMachine(session, { detector: new FakeAmd() });
    call.hangup('callee hung up');
    expect(await dropped).toMatchObject({ answeredBy: 'unknown', reason: 'hangup' });
  });

  it('refuses a bad timeoutMs before detection starts, naming it and its range', async () => {
    const { session, clock } = offlineCall();
    for (const [bad, got] of [
      [-1, '-1'],
      [Number.NaN, 'NaN'],
      ['5000', '"5000"'],
      [999, '999'],
      [120_001, '120001'],
      [30 * 86_400_000, '2592000000'],
    ] as const) {
      const amd = new FakeAmd();
      let started = false;
      amd.execute = () => {
        started = true;
        return new Promise(() => undefined);
      };
      await expect(
        detectAnsweringMachine(session, { detector: amd, timeoutMs: bad as number }),
      ).rejects.toMatchObject({
        code: 'invalid_argument',
        message: `detectAnsweringMachine: timeoutMs must be between 1000 and 120000 ms (got ${got}).`,
      });
      expect(started).toBe(false);
    }
    expect(clock.pendingTimers).toBe(0);
    // The boundaries are waited in full.
    for (const timeoutMs of [1_000, 120_000]) {
      let settled = false;
      const bounded = detectAnsweringMachine(session, { detector: new FakeAmd(), timeoutMs }).then(
        (result) => {
          settled = true;
          return result;
        },
      );
      await clock.advance(timeoutMs - 1);
      expect(settled).toBe(false);
      await clock.advance(1);
      expect(await bounded).toMatchObject({ answeredBy: 'unknown', reason: 'timeout' });
    }
  });

  it("wraps upstream voice.AMD: a voicemail greeting classified by the session's model", async () => {
    class Dialer extends voice.Agent {}
    const model = new ScriptedLLM().for(Dialer, [
      { toolCalls: [{ name: 'save_prediction', args: { label: 'machine-vm' } }] },
    ]);
    const caller = await SimulatedCaller.start({
      agent: new Dialer({ instructions: 'dialer' }),
      llm: model,
    });
    try {
      const amd = new voice.AMD(caller.session, {
        llm: model,
        stt: null,
        suppressCompatibilityWarning: true,
      });
      const detecting = detectAnsweringMachine(caller.session, { detector: amd });
      await flushAsync();
      amd.onUserSpeechStarted();
      amd.onTranscript("Hi, you've reached Sam. Please leave a message after the beep.");
      // The greeting ended long enough ago that both of AMD's gates open at once.
      amd.onUserSpeechEnded(10_000);
      const result = await detecting;
      expect(result).toMatchObject({
        answeredBy: 'machine',
        canLeaveMessage: true,
        category: 'machine-vm',
      });
      expect(result.transcript).toContain('leave a message');
      await amd.aclose();
    } finally {
      await caller.close();
    }
  });
});

describe('renderTemplate', () => {
  it('rejects a template variable without a value', () => {
    let error: unknown;
    try {
      renderTemplate('Hi {name}, call {number}.', { name: 'Sam' });
    } catch (e) {
      error = e;
    }
    expect(isTasklineError(error, 'invalid_argument')).toBe(true);
    expect((error as Error).message).toMatch(/uses \{number\} but no value/);
  });
});
