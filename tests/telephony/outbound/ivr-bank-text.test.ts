// Agent to agent, in text: taskline's navigator dials the ivr-bank example (the real bot,
// with its own scripted model) as the far end, reads its menu, keys 1 for the balance, keys
// the PIN when asked (masked), and reaches the balance — with no model call on its side.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { bankScriptedModel } from '../../../examples/ivr-bank/demo.js';
import { createBankCall } from '../../../examples/ivr-bank/index.js';
import { type CallOutOutcome, callOut } from '../../../src/telephony/outbound/call-out.js';
import type { Dialer } from '../../../src/telephony/outbound/dialer.js';
import {
  type IvrAnswer,
  type IvrOutcome,
  navigateIvr,
} from '../../../src/telephony/outbound/navigator.js';
import { LinkedCall } from '../../../src/testing/linked-call.js';
import { ScriptedLLM } from '../../../src/testing/scripted-llm.js';

type Goal = { reach: string; answers: IvrAnswer[]; reachedWhen?: RegExp; useModel?: boolean };

/** The calling side: dial, and when an IVR answers, find the balance. */
class BalanceFinder extends voice.Agent {
  answered: CallOutOutcome | undefined;
  route: IvrOutcome | undefined;
  constructor(
    private readonly dialer: Dialer,
    private readonly goal: Goal,
  ) {
    super({ instructions: 'You call banks for your user.' });
  }

  override async onEnter(): Promise<void> {
    this.answered = await callOut(this.session, { dialer: this.dialer, to: '+15550100' });
    if (this.answered.status !== 'ivr') return;
    this.route = await navigateIvr(this.session, {
      ...this.goal,
      greeting: this.answered.greeting,
    });
  }
}

let linked: LinkedCall | undefined;
afterEach(async () => {
  await linked?.close();
  linked = undefined;
});

async function callBank(goal: Goal, model = new ScriptedLLM()) {
  let finder: BalanceFinder | undefined;
  const bank = createBankCall();
  linked = await LinkedCall.start({
    caller: (dialer) => {
      finder = new BalanceFinder(dialer, goal);
      return { agent: finder, llm: model };
    },
    callee: () => ({ agent: bank.agent, llm: bankScriptedModel() }),
  });
  await linked.runUntil();
  return { finder: finder!, model, bank, linked };
}

describe('navigator → ivr-bank (text)', () => {
  it('reaches the balance: menu key 1, the PIN keyed when asked, no model call', async () => {
    const { finder, model, bank, linked } = await callBank({
      reach: 'balance',
      answers: [{ when: 'PIN', keys: '4321', secret: true }],
      reachedWhen: /your balance is/i,
    });
    expect(finder.answered).toMatchObject({ status: 'ivr', participantIdentity: 'callee' });
    expect(finder.route).toMatchObject({
      status: 'reached',
      heard: 'Your balance is $1,234.56. Thank you for calling. Goodbye.',
      path: [
        { did: 'keys', value: '1', why: 'menu', option: 'your balance' },
        { did: 'keys', value: '****', why: 'answer', heard: 'Please enter your 4-digit PIN.' },
      ],
    });
    expect(model.requests).toEqual([]);
    expect(bank.result()).toMatchObject({ outcome: 'balance_read' });
    expect(linked.lines).toEqual([
      'callee: Welcome to Taskline Bank. For your balance, press 1. For a lost or stolen card, press 2. For an agent, press 3. To hear these options again, press star.',
      'caller: [keys 1]',
      'callee: Please enter your 4-digit PIN.',
      'caller: [keys ****]',
      'callee: Your balance is $1,234.56. Thank you for calling. Goodbye.',
      'callee: (hangs up)',
    ]);
  });

  it('without reachedWhen, the first line after the goal that is no menu or question is the goal', async () => {
    const { finder } = await callBank({
      reach: 'your balance',
      answers: [{ when: /pin/i, keys: '4321', secret: true }],
    });
    expect(finder.route).toMatchObject({ status: 'reached', heard: /^Your balance is/ });
  });

  it('a refused PIN is not sent again: stuck, rejected', async () => {
    const { finder, bank } = await callBank({
      reach: 'balance',
      answers: [{ when: 'PIN', keys: '9999', secret: true }],
    });
    expect(finder.route).toMatchObject({
      status: 'stuck',
      reason: 'rejected',
      heard: "That PIN doesn't match our records. Please enter your 4-digit PIN.",
    });
    expect(finder.route?.path.map((s) => s.value)).toEqual(['1', '****']);
    expect(bank.result().outcome).not.toBe('balance_read');
  });

  it('with nothing to answer the PIN and no model to ask, it says so: stuck, no answer', async () => {
    const { finder } = await callBank({ reach: 'balance', answers: [], useModel: false });
    expect(finder.route).toMatchObject({
      status: 'stuck',
      reason: 'no_answer',
      detail: 'nothing to answer "4-digit pin"',
    });
  });

  it('a menu with no choice for the goal asks the model, which picks one with press_keys', async () => {
    const model = new ScriptedLLM().for('ivr_navigator', [
      { toolCalls: [{ name: 'press_keys', args: { keys: '1' } }] },
    ]);
    const { finder } = await callBank(
      {
        reach: 'how much money I have',
        answers: [{ when: 'PIN', keys: '4321', secret: true }],
        reachedWhen: /balance is/,
      },
      model,
    );
    expect(model.requests.map((r) => r.agentId)).toEqual(['ivr_navigator']);
    expect(model.requests[0]?.tools).toEqual(
      expect.arrayContaining(['press_keys', 'enter_answer', 'give_up', 'report_human']),
    );
    // The model never sees a secret's value, only its name.
    expect(JSON.stringify(model.requests[0]?.messages)).not.toContain('4321');
    expect(finder.route).toMatchObject({
      status: 'reached',
      path: [{ did: 'keys', value: '1', why: 'model' }, { why: 'answer' }],
    });
  });

  it('a model that chooses nothing leaves it stuck, saying why', async () => {
    const { finder } = await callBank({ reach: 'balance', answers: [] });
    expect(finder.route).toMatchObject({
      status: 'stuck',
      reason: 'no_answer',
      detail: 'nothing to answer "4-digit pin" (the model chose no action)',
    });
  });
});
