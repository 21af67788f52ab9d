// A task that masks its input (collectDigits({ mask: true })) declares it on the call, so the
// simulated caller's transcript (and `taskline run`, which prints it) shows "****" for keys
// or words given while it listens, and the clear text once it is over.
import { describe, expect, it } from 'vitest';
import { bankScriptedModel } from '../../examples/ivr-bank/demo.js';
import { createBankCall } from '../../examples/ivr-bank/index.js';
import { formatLine } from '../../src/testing/expect.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

describe('secret input', () => {
  it('masks keys and speech while a masked task listens, and nothing else', async () => {
    const call = createBankCall();
    const caller = await SimulatedCaller.start({ agent: call.agent, llm: bankScriptedModel() });
    try {
      expect(caller.call.expectsSecret).toBe(false);
      await caller.dtmf('1'); // the menu: not a secret
      expect(caller.call.expectsSecret).toBe(true); // the PIN prompt is listening
      await caller.say('four three two one');
      await caller.dtmf('4321');
      expect(caller.transcript.filter((l) => l.role === 'caller').map(formatLine)).toEqual([
        'caller: [keys 1]',
        'caller: ****',
        'caller: [keys ****]',
      ]);
      expect(caller.call.expectsSecret).toBe(false);
      expect(JSON.stringify(caller.transcript)).not.toContain('4321');
      expect(call.result().outcome).toBe('balance_read');
    } finally {
      await caller.close();
    }
  });

  it('masks any keys the script marks mask: true', async () => {
    const call = createBankCall();
    const caller = await SimulatedCaller.start({ agent: call.agent, llm: bankScriptedModel() });
    try {
      await caller.dtmf('1', { mask: true });
      expect(caller.transcript.filter((l) => l.via === 'dtmf').map((l) => l.text)).toEqual(['*']);
    } finally {
      await caller.close();
    }
  });
});
