// ivr-bank's PIN entry: star takes back the last digit (the menu's repeat key belongs to
// another prompt), and a stray key never completes a 4-digit entry.
import { afterEach, describe, expect, it } from 'vitest';
import { bankScriptedModel } from '../../examples/ivr-bank/demo.js';
import { createBankCall } from '../../examples/ivr-bank/index.js';
import { RecordingTransferer } from '../../src/telephony/transfer.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

const BALANCE = 'Your balance is $1,234.56. Thank you for calling. Goodbye.';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function atPin() {
  const call = createBankCall({ transferer: new RecordingTransferer() });
  const model = bankScriptedModel();
  caller = await SimulatedCaller.start({ agent: call.agent, llm: model });
  await caller.dtmf('1');
  expect(caller.agentLines.at(-1)).toBe('Please enter your 4-digit PIN.');
  return { call, model, caller };
}

describe('ivr-bank PIN entry', () => {
  it('star deletes the last digit: 4, 3, 9, star, 2, 1 is PIN 4321', async () => {
    const { call, caller, model } = await atPin();
    await caller.dtmf('439*21', { mask: true });
    expect(caller.agentLines.at(-1)).toBe(BALANCE);
    expect(call.result().outcome).toBe('balance_read');
    expect(model.requests).toEqual([]);
  });

  it('439 then star is not submitted: the entry waits for the fourth digit', async () => {
    const { call, caller } = await atPin();
    await caller.dtmf('439*', { mask: true });
    expect(caller.agentLines.at(-1)).toBe('Please enter your 4-digit PIN.');
    expect(call.result().outcome).toBeUndefined();
    await caller.dtmf('21', { mask: true });
    expect(caller.agentLines.at(-1)).toBe(BALANCE);
  });
});
