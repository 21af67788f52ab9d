// Issue 24: one escalation path. `retry.onExhausted` runs where upstream lets an inline
// AgentTask run (inside a tool call), whatever reached the cap — a spoken answer, a key, or
// the no-input timer — so a warm transfer (upstream's WarmTransferTask, an inline AgentTask)
// works as the escalation of any capture.
//
// Simulated here: upstream's WarmTransferTask needs a SIP trunk and a LiveKit room, so the
// WarmTransferer below builds an inline AgentTask of the same shape instead (it speaks to the
// caller, then completes with the human's identity). What the test pins is the constraint that
// breaks a real warm transfer: `AgentTask.run()` only works inside a tool or `onEnter`.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/outcome.js';
import { yesNo } from '../../src/tasks/prebuilt.js';
import { collectDigits } from '../../src/telephony/digits.js';
import { menu } from '../../src/telephony/menu.js';
import { type TransferRequest, transferOnExhausted } from '../../src/telephony/transfer.js';
import { WarmTransferer } from '../../src/telephony/warm-transfer.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

/** Stands in for upstream's WarmTransferTask: an inline task that briefs and connects. */
class BriefingTask extends voice.AgentTask<{ humanAgentIdentity: string }> {
  constructor() {
    super({ id: 'warm_transfer', instructions: 'Brief the pharmacist.' });
  }
  override async onEnter(): Promise<void> {
    await this.session.say('Connecting you to a pharmacist now.').waitForPlayout();
    this.complete({ humanAgentIdentity: 'pharmacist-7' });
  }
}

/** The real WarmTransferer (request checks, result mapping) with the stand-in task. */
class TestWarmTransferer extends WarmTransferer {
  readonly requests: TransferRequest[] = [];
  override createTask(request: TransferRequest) {
    this.requests.push(request);
    return new BriefingTask() as never;
  }
}

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function call<T>(start: (session: voice.AgentSession) => Promise<Outcome<T>>) {
  const outcomes: Outcome<T>[] = [];
  class Line extends voice.Agent {
    override async onEnter(): Promise<void> {
      outcomes.push(await start(this.session));
    }
  }
  caller = await SimulatedCaller.start({
    agent: new Line({ instructions: 'line' }),
    llm: new ScriptedLLM(),
  });
  return { caller, outcomes };
}

const warmTo = (warm: TestWarmTransferer, session: voice.AgentSession) =>
  transferOnExhausted(warm, {
    to: '+15550100',
    mode: 'warm',
    summary: 'Caller could not answer',
    session,
  });

describe('a warm transfer as onExhausted', () => {
  it('works after a typed yes/no question runs out of no-input retries', async () => {
    const warm = new TestWarmTransferer({ sipTrunkId: 'ST_test' });
    const { caller, outcomes } = await call((session) =>
      yesNo({
        name: 'consent',
        question: 'May we text you when it is ready?',
        retry: { maxNoInput: 2, noInputTimeoutMs: 4000, onExhausted: warmTo(warm, session) },
      }).run(),
    );
    await caller.silence(4000);
    expect(caller.agentLines.at(-1)).toBe(
      "Sorry, I didn't hear anything. May we text you when it is ready?",
    );
    await caller.silence(4000);
    expect(outcomes).toEqual([
      { status: 'transferred', attempts: 2, reason: 'transferred to +15550100 (warm)' },
    ]);
    expect(caller.agentLines.at(-1)).toBe('Connecting you to a pharmacist now.');
    expect(warm.requests.map((r) => r.summary)).toEqual([
      'Caller could not answer. The automated step ended: no answer after 2 prompts.',
    ]);
  });

  it('works after a spoken answer reaches the no-match cap of a typed task', async () => {
    const warm = new TestWarmTransferer({ sipTrunkId: 'ST_test' });
    const { caller, outcomes } = await call((session) =>
      yesNo({
        name: 'consent',
        question: 'May we text you?',
        modelFallback: false,
        retry: { maxNoMatch: 1, onExhausted: warmTo(warm, session) },
      }).run(),
    );
    await caller.say('purple');
    expect(outcomes).toEqual([
      { status: 'transferred', attempts: 1, reason: 'transferred to +15550100 (warm)' },
    ]);
  });

  it('works after keys reach the cap of a menu and of a digit collection', async () => {
    const warm = new TestWarmTransferer({ sipTrunkId: 'ST_test' });
    const { caller, outcomes } = await call(async (session) => {
      const pick = await menu({
        name: 'main_menu',
        options: { '1': { label: 'refills', value: 'refill' } },
        retry: { maxInvalid: 1, onExhausted: warmTo(warm, session) },
      }).run();
      const pin = await collectDigits({
        name: 'pin',
        prompt: 'Enter your PIN.',
        minDigits: 4,
        maxDigits: 4,
        retry: { maxInvalid: 1, onExhausted: warmTo(warm, session) },
      }).run();
      return { status: 'ok', value: [pick.status, pin.status], attempts: 1 } as Outcome<string[]>;
    });
    await caller.dtmf('9');
    await caller.dtmf('12#');
    expect(outcomes).toEqual([
      { status: 'ok', value: ['transferred', 'transferred'], attempts: 1 },
    ]);
    expect(warm.requests).toHaveLength(2);
  });
});
