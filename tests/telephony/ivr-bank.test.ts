import { afterEach, describe, expect, it } from 'vitest';
import * as bankDemo from '../../examples/ivr-bank/demo.js';
import { createBankCall, ivrBank } from '../../examples/ivr-bank/index.js';
import { RecordingTransferer } from '../../src/telephony/transfer.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { captureLogs } from './logs.js';

const MENU =
  'Welcome to Taskline Bank. For your balance, press 1. For a lost or stolen card, press 2. ' +
  'For an agent, press 3. To hear these options again, press star.';
const PIN_PROMPT = 'Please enter your 4-digit PIN.';
const HOLD = 'Please hold while I transfer you to a colleague.';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function startBank() {
  const transferer = new RecordingTransferer();
  const call = createBankCall({ transferer });
  const model = bankDemo.bankScriptedModel();
  caller = await SimulatedCaller.start({ agent: call.agent, llm: model });
  expect(caller.agentLines).toEqual([MENU]);
  return { call, model, transferer, caller };
}

/** Waits for the bot to end the call by itself, then returns the transcript. */
async function ended(c: SimulatedCaller): Promise<string[]> {
  expect(c.session._closing || c.isClosed).toBe(true);
  await c.close();
  return c.agentLines;
}

describe('ivr-bank, end to end', () => {
  it('runs the module demo: free speech goes to the model once, the PIN is keyed and masked', async () => {
    const call = ivrBank.createCall();
    const model = bankDemo.createScriptedModel();
    caller = await SimulatedCaller.start({ agent: call.agent, llm: model });
    await caller.play(bankDemo.demoScript);
    expect(await ended(caller)).toEqual([
      MENU,
      PIN_PROMPT,
      'Your balance is $1,234.56. Thank you for calling. Goodbye.',
    ]);
    expect(model.requestsFor('main_menu')).toHaveLength(1);
    expect(model.requestsFor('pin')).toEqual([]);
    expect(model.requests).toHaveLength(1);
    expect(call.result()).toMatchObject({
      outcome: 'balance_read',
      captured: [
        { name: 'main_menu', display: 'your balance', masked: false },
        { name: 'pin', display: '****', masked: true },
      ],
    });
    expect(caller.transcript.find((l) => l.via === 'dtmf')?.text).toBe('****');
  });

  it('balance on the keypad alone makes no model call', async () => {
    const { caller, model, call } = await startBank();
    await caller.dtmf('1');
    expect(caller.agentLines.at(-1)).toBe(PIN_PROMPT);
    await caller.dtmf('4321');
    expect((await ended(caller)).at(-1)).toBe(
      'Your balance is $1,234.56. Thank you for calling. Goodbye.',
    );
    expect(model.requests).toEqual([]);
    expect(call.result().outcome).toBe('balance_read');
  });

  it('lost card: confirm with yes, the card is blocked', async () => {
    const { caller, call, model } = await startBank();
    await caller.say('I lost my card');
    expect(caller.agentLines.at(-1)).toBe('Shall I block your card now?');
    await caller.say('yes please');
    expect((await ended(caller)).at(-1)).toBe(
      'Your card is blocked and a new one is on its way. Goodbye.',
    );
    expect(call.result().outcome).toBe('card_blocked');
    expect(model.requests).toEqual([]);
  });

  it('lost card: "no" keeps the card active', async () => {
    const { caller, call } = await startBank();
    await caller.dtmf('2');
    await caller.say('no');
    expect((await ended(caller)).at(-1)).toBe('Okay, your card stays active. Goodbye.');
    expect(call.result().outcome).toBe('card_kept');
  });

  it('"agent" transfers with a summary of what was captured', async () => {
    const { caller, call, transferer } = await startBank();
    await caller.say('I want to talk to a person');
    expect((await ended(caller)).at(-1)).toBe(HOLD);
    expect(transferer.requests).toEqual([
      {
        to: '+15550100',
        mode: 'cold',
        summary: 'Caller asked to talk to someone. Captured so far: main menu: an agent.',
      },
    ]);
    expect(call.result().outcome).toBe('transferred');
  });

  it('three wrong PINs exhaust the retries and transfer (the PINs stay out of the summary)', async () => {
    const { caller, call, transferer } = await startBank();
    await caller.dtmf('1');
    await caller.dtmf('1111');
    expect(caller.agentLines.at(-1)).toBe(`That PIN doesn't match our records. ${PIN_PROMPT}`);
    await caller.dtmf('2222');
    await caller.dtmf('3333');
    expect((await ended(caller)).at(-1)).toBe(HOLD);
    expect(transferer.requests.map((r) => r.summary)).toEqual([
      'Caller could not verify their PIN. Captured so far: main menu: your balance. The automated step ended: invalid answer 3 times.',
    ]);
    expect(call.result().outcome).toBe('transferred');
  });

  it('silence at the main menu ends in a transfer after the no-input cap', async () => {
    const { caller, transferer } = await startBank();
    await caller.silence(8000);
    expect(caller.agentLines.at(-1)).toBe(`Sorry, I didn't hear anything. ${MENU}`);
    await caller.silence(8000);
    await caller.silence(8000);
    expect((await ended(caller)).at(-1)).toBe(HOLD);
    expect(transferer.requests[0]?.summary).toBe(
      'Caller could not use the main menu. The automated step ended: no answer after 3 prompts.',
    );
  });

  it('hang-up mid-PIN: the PIN entry resolves hangup, the call closes, the menu choice is kept', async () => {
    const { caller, call, transferer } = await startBank();
    await caller.dtmf('1');
    await caller.dtmf('43');
    await caller.hangup();
    expect(caller.isClosed).toBe(true);
    expect(call.result()).toMatchObject({
      outcome: 'hangup',
      captured: [{ name: 'main_menu', display: 'your balance' }],
    });
    expect(transferer.requests).toEqual([]);
  });

  it('keeps the PIN out of the chat context, history and log messages', async () => {
    const logs = captureLogs();
    try {
      const { caller, call } = await startBank();
      await caller.dtmf('1');
      await caller.dtmf('4321');
      await caller.close();
      const chat = [...caller.session.history.items, ...call.agent.chatCtx.items]
        .flatMap((i) => (i.type === 'message' ? [i.textContent ?? ''] : []))
        .join('\n');
      expect(chat).toContain('(keypad) ****');
      expect(chat).not.toContain('4321');
      const records = logs.lines.flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
      const ours = records.filter((r) => r.component === 'taskline.telephony');
      expect(ours.map((r) => r.msg)).toContain('pin ended: ok');
      expect(JSON.stringify(ours)).not.toContain('4321');
      expect(records.map((r) => String(r.msg)).join('\n')).not.toContain('4321');
    } finally {
      logs.stop();
    }
  });
});
