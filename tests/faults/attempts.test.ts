// Fault class: a model that answers "unclear" (or an invalid pick) again on the tool reply.
// One caller utterance is one attempt: it costs one model call and one no-match, and the
// caller hears one re-prompt — on typed tasks (ivr-bank's lost-card question) and menus.
import { afterEach, describe, expect, it } from 'vitest';
import { bankScriptedModel } from '../../examples/ivr-bank/demo.js';
import { createBankCall } from '../../examples/ivr-bank/index.js';
import { RecordingTransferer } from '../../src/telephony/transfer.js';
import type { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

const BLOCK = 'Shall I block your card now?';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function startBank(model: ScriptedLLM = bankScriptedModel()) {
  const transferer = new RecordingTransferer();
  const call = createBankCall({ transferer });
  caller = await SimulatedCaller.start({ agent: call.agent, llm: model });
  return { call, model, transferer, caller };
}

describe('one utterance is one attempt', () => {
  it('typed task: one unclear reply at the lost-card question', async () => {
    const { caller, model } = await startBank();
    await caller.dtmf('2');
    expect(caller.agentLines.at(-1)).toBe(BLOCK);
    await caller.say('hmm, what about my dog');
    // The stand-in model reports "unclear" on its tool reply too: not counted, not asked again.
    expect(model.requestsFor('block_card')).toHaveLength(2);
    expect(caller.agentLines.at(-1)).toBe(`Sorry, I didn't understand. ${BLOCK}`);
    expect(caller.agentLines.filter((l) => l.includes(BLOCK))).toHaveLength(2);
    // Still asking: two more unclear replies are needed to reach the cap of three.
    await caller.say('the weather is nice');
    expect(model.requestsFor('block_card')).toHaveLength(4);
    expect(caller.agentLines.at(-1)).toBe(`Sorry, I didn't understand. ${BLOCK}`);
    await caller.say('yes');
    expect(caller.agentLines.at(-1)).toBe(
      'Your card is blocked and a new one is on its way. Goodbye.',
    );
  });

  it('menu: one unclear reply at the main menu', async () => {
    const { caller, model } = await startBank();
    const menu = caller.agentLines[0]!;
    await caller.say('I would like a pizza');
    expect(model.requestsFor('main_menu')).toHaveLength(1);
    expect(caller.agentLines.filter((l) => l.endsWith(menu))).toHaveLength(2);
    await caller.dtmf('1');
    expect(caller.agentLines.at(-1)).toBe('Please enter your 4-digit PIN.');
  });

  it('menu: an invalid pick by the model counts once and is re-prompted without it', async () => {
    const model = bankScriptedModel();
    model.for('main_menu', [
      { toolCalls: [{ name: 'submit', args: { key: '9' } }] },
      { toolCalls: [{ name: 'submit', args: { key: '9' } }] },
      { toolCalls: [{ name: 'submit', args: { key: '9' } }] },
    ]);
    const { caller } = await startBank(model);
    await caller.say('the ninth thing please');
    expect(model.requestsFor('main_menu')).toHaveLength(1);
    expect(caller.agentLines).toHaveLength(2);
    expect(caller.agentLines.at(-1)).toMatch(/^Sorry, that is not an option\. /);
    await caller.dtmf('2');
    expect(caller.agentLines.at(-1)).toBe(BLOCK);
  });
});
