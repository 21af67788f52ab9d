// Fault class: a typed or keypad task ended from outside while it is the current agent
// (a supervisor, a flow step's timer, `complete()` from a tool), a tool that never settles,
// and the agent replaced mid-task (`session.updateAgent`). Each asserts the awaiter's typed
// outcome, what the caller heard (nothing lost, nothing twice), and an end on the virtual clock.
import { llm, type voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Outcome } from '../../src/outcome.js';
import { defineTask } from '../../src/tasks/define.js';
import { yesNo } from '../../src/tasks/prebuilt.js';
import { collectDigits } from '../../src/telephony/digits.js';
import { menu } from '../../src/telephony/menu.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { Supervisor, startDesk } from './helpers.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

const PROMPT = 'What is your account number?';

function accountTask(tools?: llm.ToolContextLike, maxDurationMs = 60_000) {
  return defineTask({
    name: 'account',
    instructions: 'Collect the account number.',
    prompt: PROMPT,
    schema: z.object({ account: z.string() }),
    tools,
    watchdog: { maxDurationMs },
    retry: { noInputTimeoutMs: 5_000 },
  });
}

/** The three kinds of capture task, each started by the desk and waiting on the caller. */
type Make = () => voice.AgentTask<Outcome<unknown>>;
const captures: { typed: Make; digits: Make; menu: Make } = {
  typed: () => accountTask().create(),
  digits: () => collectDigits({ name: 'pin', prompt: 'Enter your PIN.', maxDigits: 4 }).create(),
  menu: () =>
    menu({
      name: 'main',
      prompt: 'Main menu.',
      options: { '1': { label: 'balance', value: 'balance' } },
      modelFallback: false,
    }).create(),
};

describe('a capture completed from outside while it is current', () => {
  for (const [kind, make] of Object.entries(captures)) {
    it(`${kind}: the awaiter gets that outcome, the call goes on, no stray timer fires`, async () => {
      const started = await startDesk(make);
      caller = started.caller;
      const { desk } = started;
      expect(desk.current?.done).toBe(false);
      const outcome = { status: 'cancelled', attempts: 0, reason: 'a supervisor stepped in' };
      desk.current?.complete(outcome as never);
      await caller.settle();
      expect(desk.errors).toEqual([]);
      expect(desk.outcomes).toEqual([outcome]);
      expect(caller.agentLines.at(-1)).toBe('Back at the desk.');
      // The task's no-input timer and watchdog are gone with it: silence is harmless.
      const lines = caller.agentLines.length;
      await caller.silence(600_000);
      expect(caller.agentLines).toHaveLength(lines);
      expect(caller.clock.pendingTimers).toBe(0);
    });
  }

  it('complete(error) surfaces that error to the awaiter', async () => {
    const started = await startDesk(captures.typed);
    caller = started.caller;
    const boom = new Error('the CRM said no');
    started.desk.current?.complete(boom);
    await caller.settle();
    expect(started.desk.outcomes).toEqual([]);
    expect(started.desk.errors).toEqual([boom]);
  });

  it('complete() from one of the task’s own tools ends it with that outcome', async () => {
    let task: ReturnType<ReturnType<typeof accountTask>['create']> | undefined;
    const skip = llm.tool({
      description: 'The caller has no account.',
      execute: async () => {
        task?.complete({ status: 'declined', attempts: 1, reason: 'no account' });
        return 'ok';
      },
    });
    const started = await startDesk(() => {
      task = accountTask({ skip }).create();
      return task;
    });
    caller = started.caller;
    started.model.for('account', [{ toolCalls: [{ name: 'skip' }] }]);
    await caller.say('I do not have one');
    expect(started.desk.errors).toEqual([]);
    expect(started.desk.outcomes).toEqual([
      { status: 'declined', attempts: 1, reason: 'no account' },
    ]);
    expect(caller.agentLines.at(-1)).toBe('Back at the desk.');
  });

  it('a second run() throws as upstream’s AgentTask does', async () => {
    const started = await startDesk(captures.typed);
    caller = started.caller;
    const task = started.desk.current!;
    task.complete({ status: 'cancelled', attempts: 0 });
    await caller.settle();
    await expect(task.run()).rejects.toThrow(/already started/);
  });
});

describe('the watchdog while a tool never settles', () => {
  it('ends the task on time and aborts the tool’s signal', async () => {
    let signal: AbortSignal | undefined;
    let called: () => void = () => {};
    const calling = new Promise<void>((resolve) => {
      called = resolve;
    });
    const lookup = llm.tool({
      description: 'Look the account up.',
      execute: (_args, opts) => {
        signal = opts.abortSignal;
        called();
        return new Promise<never>(() => {});
      },
    });
    const started = await startDesk(() => accountTask({ lookup }, 30_000).create());
    caller = started.caller;
    const current = caller;
    started.model.for('account', [{ toolCalls: [{ name: 'lookup' }] }]);
    // The caller's turn cannot end while the tool hangs: time passes under it.
    const turn = current.say('look it up please');
    await calling;
    expect(signal?.aborted).toBe(false);
    await current.clock.advance(29_999);
    expect(started.desk.outcomes).toEqual([]);
    await current.clock.advance(1);
    await turn;
    expect(started.desk.errors).toEqual([]);
    expect(started.desk.outcomes).toEqual([
      { status: 'timeout', attempts: 0, reason: 'no answer within 30000 ms' },
    ]);
    expect(signal?.aborted).toBe(true);
    expect(caller.agentLines.at(-1)).toBe('Back at the desk.');
  });
});

describe('the agent replaced mid-task (session.updateAgent)', () => {
  for (const [kind, make] of Object.entries({
    ...captures,
    yesNo: () => yesNo({ name: 'ok', question: 'OK?' }).create(),
  })) {
    it(`${kind}: the awaiter gets cancelled with the reason, in bounded time`, async () => {
      const started = await startDesk(make);
      caller = started.caller;
      caller.session.updateAgent(new Supervisor());
      await caller.settle();
      expect(started.desk.errors).toEqual([]);
      expect(started.desk.outcomes).toHaveLength(1);
      expect(started.desk.outcomes[0]).toMatchObject({ status: 'cancelled' });
      expect(
        started.desk.outcomes[0]?.status === 'cancelled' && started.desk.outcomes[0].reason,
      ).toMatch(/replaced/);
      expect(caller.session.currentAgent).toBeInstanceOf(Supervisor);
      expect(caller.agentLines.at(-1)).toBe('A supervisor here; I will take it from now.');
      // Nothing of the old task is left to fire.
      await caller.silence(600_000);
      expect(caller.clock.pendingTimers).toBe(0);
    });
  }
});

describe('a tool that throws', () => {
  it('the model hears an error, the task goes on, and the answer is still captured', async () => {
    const lookup = llm.tool({
      description: 'Look the account up.',
      execute: async () => {
        throw new Error('CRM is down');
      },
    });
    const started = await startDesk(() => accountTask({ lookup }).create());
    caller = started.caller;
    started.model.for('account', [
      { toolCalls: [{ name: 'lookup' }] },
      (req) => ({
        say: req.lastToolOutput?.isError ? 'I could not look it up. What is the number?' : 'odd',
      }),
      { toolCalls: [{ name: 'submit', args: { account: '4412' } }] },
    ]);
    await caller.say('look it up please');
    expect(caller.agentLines.at(-1)).toBe('I could not look it up. What is the number?');
    await caller.say('four four one two');
    expect(started.desk.errors).toEqual([]);
    expect(started.desk.outcomes).toMatchObject([{ status: 'ok', value: { account: '4412' } }]);
    expect(caller.agentLines.at(-1)).toBe('Back at the desk.');
  });
});

describe('the session ending mid-task', () => {
  for (const [kind, make] of Object.entries(captures)) {
    it(`${kind}: the caller hangs up → hangup, the call ended by the caller`, async () => {
      const started = await startDesk(make);
      caller = started.caller;
      await caller.hangup();
      expect(started.desk.errors).toEqual([]);
      expect(started.desk.outcomes).toMatchObject([{ status: 'hangup', reason: 'caller hung up' }]);
      expect(caller.endedBy).toBe('caller');
    });

    it(`${kind}: the worker closes the session → cancelled, not a hang-up`, async () => {
      const started = await startDesk(make);
      caller = started.caller;
      await caller.close();
      expect(started.desk.errors).toEqual([]);
      expect(started.desk.outcomes).toMatchObject([{ status: 'cancelled' }]);
      expect(caller.endedBy).toBeUndefined();
    });
  }
});
