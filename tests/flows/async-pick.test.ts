// Async where a call needs it (issue 31 part 3, issue 24 item 16): a pick may look something
// up mid-flow, bounded by its timeout on the call's clock, its failure a typed step outcome;
// an announce line may be made from the answers so far.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { announce } from '../../src/flows/announce.js';
import { flow } from '../../src/flows/builder.js';
import { MemoryCheckpointStore } from '../../src/flows/checkpoints/index.js';
import type { FlowRunOptions } from '../../src/flows/runner.js';
import type { FlowResult } from '../../src/flows/types.js';
import { number, yesNo } from '../../src/tasks/prebuilt.js';
import { collectDigits } from '../../src/telephony/digits.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

const callers: SimulatedCaller[] = [];
afterEach(async () => {
  for (const c of callers.splice(0)) await c.close();
});

async function host<R>(run: () => Promise<FlowResult<R>>, callId?: string) {
  const box: { result?: FlowResult<R> } = {};
  class Host extends voice.Agent {
    constructor() {
      super({ id: 'host', instructions: 'host' });
    }
    override async onEnter(): Promise<void> {
      box.result = await run();
    }
  }
  const caller = await SimulatedCaller.start({ agent: new Host(), llm: new ScriptedLLM(), callId });
  callers.push(caller);
  return { caller, box };
}

/** A lookup the test answers by hand; `called` resolves when it is first asked. */
function lookup<T>() {
  const calls: Array<{ value: unknown; signal: AbortSignal; answer: (v: T) => void }> = [];
  let asked!: () => void;
  const called = new Promise<void>((resolve) => {
    asked = resolve;
  });
  const fn = (value: unknown, _answers: unknown, { signal }: { signal: AbortSignal }) =>
    new Promise<T>((resolve) => {
      calls.push({ value, signal, answer: resolve });
      asked();
    });
  return { calls, fn, called };
}

const ACCOUNT = 'Enter your 6-digit account number.';
const AMOUNT = 'How much would you like to pay?';
const LOCKED = 'That account is locked. Goodbye.';
const SORRY = 'Sorry, our systems are busy. Please call back later.';

function accountFlow(
  pick: (
    v: string,
    a: unknown,
    c: { signal: AbortSignal },
  ) => 'amount' | 'locked' | 'sorry' | PromiseLike<'amount' | 'locked' | 'sorry'>,
  extra: { onError?: 'sorry'; timeoutMs?: number } = {},
) {
  return flow('account')
    .step(
      'account',
      collectDigits({ name: 'account', prompt: ACCOUNT, minDigits: 6, maxDigits: 6 }),
      { next: { to: ['amount', 'locked', 'sorry'], pick, ...extra } },
    )
    .step('amount', number({ name: 'amount', question: AMOUNT, min: 1, max: 500 }), {
      next: 'end',
    })
    .step('locked', announce(LOCKED), { next: 'end' })
    .step('sorry', announce(SORRY), { next: 'end' });
}

describe('an async pick', () => {
  it('waits for a backend lookup mid-flow and takes the branch it answers', async () => {
    const backend = lookup<'amount' | 'locked'>();
    const f = accountFlow(backend.fn);
    const { caller, box } = await host(() => f.run());
    // The caller's turn lasts until the next question: it ends once the lookup answers.
    const pressed = caller.dtmf('123456');
    await backend.called;
    expect(backend.calls.map((c) => c.value)).toEqual(['123456']);
    expect(caller.agentLines).toEqual([ACCOUNT]);
    backend.calls[0]!.answer('locked');
    await pressed;
    expect(caller.agentLines).toEqual([ACCOUNT, LOCKED]);
    expect(box.result).toMatchObject({ status: 'completed', value: { account: '123456' } });
  });

  it('is bounded by its timeout on the call clock: the flow fails with pick_timeout, the lookup aborted', async () => {
    const backend = lookup<'amount'>();
    const f = accountFlow(backend.fn, { timeoutMs: 3_000 });
    const { caller, box } = await host(() => f.run({ checkpoints: new MemoryCheckpointStore() }));
    const pressed = caller.dtmf('123456');
    await backend.called;
    await caller.clock.advance(2_999);
    expect(box.result).toBeUndefined();
    await caller.clock.advance(1);
    await pressed;
    expect(box.result).toMatchObject({
      status: 'failed',
      step: 'account',
      error: { code: 'pick_timeout' },
      outcome: { status: 'timeout' },
    });
    expect(box.result?.report.steps.at(-1)).toMatchObject({
      step: 'account',
      outcome: 'timeout',
      reason: 'Step "account": its pick did not answer within 3000 ms.',
    });
    expect(backend.calls[0]!.signal.aborted).toBe(true);
    expect(caller.agentLines).toEqual([ACCOUNT]);
  });

  it('goes to onError when the lookup fails, recording the step outcome as error', async () => {
    const f = accountFlow(
      async () => {
        throw new Error('connection refused');
      },
      { onError: 'sorry' },
    );
    const { caller, box } = await host(() => f.run());
    await caller.dtmf('123456');
    expect(caller.agentLines).toEqual([ACCOUNT, SORRY]);
    expect(box.result).toMatchObject({ status: 'completed' });
    expect(box.result?.report.steps[0]).toMatchObject({
      step: 'account',
      outcome: 'error',
      next: 'sorry',
      reason: 'Step "account": its pick failed: connection refused',
    });
  });

  it('fails the flow with pick_failed when a pick throws or picks an undeclared target', async () => {
    for (const pick of [
      () => {
        throw new Error('bug');
      },
      async () => 'nowhere' as 'amount',
    ]) {
      const f = accountFlow(pick);
      const { caller, box } = await host(() => f.run());
      await caller.dtmf('123456');
      expect(caller.agentLines).toEqual([ACCOUNT]);
      expect(box.result).toMatchObject({
        status: 'failed',
        step: 'account',
        error: { code: 'pick_failed' },
      });
    }
  });

  it('runs again when a dropped call resumes: the path is re-walked, not taken on trust', async () => {
    const checkpoints = new MemoryCheckpointStore();
    let open = true;
    let calls = 0;
    const f = accountFlow(async () => {
      calls += 1;
      return open ? 'amount' : 'locked';
    });
    const options: FlowRunOptions = { checkpoints, callId: 'acct-1' };
    let written!: () => void;
    const hungUp = new Promise<void>((resolve) => {
      written = resolve;
    });
    const first = await host(
      () => f.run({ ...options, onCheckpoint: (i) => i.status === 'hangup' && written() }),
      'acct-1',
    );
    await first.caller.dtmf('123456');
    expect(first.caller.agentLines.at(-1)).toBe(AMOUNT);
    await first.caller.hangup();
    await hungUp;
    expect(calls).toBe(1);

    open = false; // the account was locked in the meantime
    const back = await host(() => f.run({ ...options, resumeLine: false }), 'acct-1');
    expect(calls).toBe(2);
    expect(back.caller.agentLines).toEqual([LOCKED]);
    expect(back.box.result).toMatchObject({ status: 'completed', value: { account: '123456' } });
  });
});

describe('an announce line made from the answers', () => {
  it('speaks what the caller answered', async () => {
    const f = flow('order')
      .step('size', number({ name: 'size', question: 'How many?', min: 1, max: 9 }))
      .step('gift', yesNo({ name: 'gift', question: 'Gift wrapped?' }))
      .step(
        'recap',
        announce(
          (a: { size?: number; gift?: boolean }) =>
            `${a.size} items${a.gift ? ', gift wrapped' : ''}. Thank you!`,
        ),
      );
    const { caller, box } = await host(() => f.run());
    await caller.say('three');
    await caller.say('yes');
    expect(caller.agentLines.at(-1)).toBe('3 items, gift wrapped. Thank you!');
    expect(box.result).toMatchObject({ status: 'completed', value: { size: 3, gift: true } });
  });

  it('is said by the flow itself: no switch to another agent for one sentence', async () => {
    const f = flow('thanks')
      .step('ok', yesNo({ name: 'ok', question: 'Ready?' }))
      .step('bye', announce('Thank you, goodbye!', 'bye'))
      .step('more', yesNo({ name: 'more', question: 'Anything else?' }));
    const { caller, box } = await host(() => f.run());
    const handoffs: Array<string | undefined> = [];
    caller.session.on(voice.AgentSessionEventTypes.ConversationItemAdded, (ev) => {
      if (ev.item.type === 'agent_handoff') handoffs.push(ev.item.newAgentId);
    });
    await caller.say('yes');
    await caller.say('no');
    expect(caller.agentLines).toEqual(['Ready?', 'Thank you, goodbye!', 'Anything else?']);
    // Into the next question and back to the flow: never into a task that only speaks.
    expect(handoffs).not.toContain('bye');
    expect(handoffs.filter((id) => id === 'more')).toHaveLength(1);
    expect(box.result).toMatchObject({ status: 'completed', value: { ok: true, more: false } });
    expect(box.result?.report.steps.map((s) => [s.step, s.outcome])).toEqual([
      ['ok', 'ok'],
      ['bye', 'ok'],
      ['more', 'ok'],
    ]);
  });

  it('fails its step (and says nothing) when the line cannot be made', async () => {
    const f = flow('broken')
      .step('ok', yesNo({ name: 'ok', question: 'Ready?' }))
      .step(
        'recap',
        announce(() => {
          throw new Error('no template');
        }),
      );
    const { caller, box } = await host(() => f.run());
    await caller.say('yes');
    expect(caller.agentLines).toEqual(['Ready?']);
    expect(box.result).toMatchObject({
      status: 'failed',
      step: 'recap',
      outcome: { status: 'invalid', reason: 'the announce line could not be made: no template' },
    });
  });
});
