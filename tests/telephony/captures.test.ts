// Issue 24, item 10: every capture records what it accepted in the call's capture log — typed
// tasks too, not only menus and digit collection — so a transfer summary says what the caller
// already gave. Masked values stay masked.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTask } from '../../src/tasks/define.js';
import { date, yesNo } from '../../src/tasks/prebuilt.js';
import { capturesOf } from '../../src/telephony/captures.js';
import { collectDigits } from '../../src/telephony/digits.js';
import { menu } from '../../src/telephony/menu.js';
import { RecordingTransferer, transferOnExhausted } from '../../src/telephony/transfer.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

const mainMenu = menu({
  name: 'main_menu',
  prompt: 'Pharmacy.',
  options: {
    '1': { label: 'a prescription refill', value: 'refill' },
    '2': { label: 'store hours', value: 'hours' },
  },
});
const birthDate = date({ name: 'date_of_birth', question: 'What is your date of birth?' });

describe('the transfer summary after typed captures', () => {
  it('includes the date of birth a typed task captured', async () => {
    const transferer = new RecordingTransferer();
    class Pharmacy extends voice.Agent {
      override async onEnter(): Promise<void> {
        const escalate = {
          onExhausted: transferOnExhausted(transferer, {
            to: '+15550100',
            summary: 'Refill caller needs a pharmacist',
            session: this.session,
          }),
        };
        await mainMenu.run();
        await birthDate.run();
        await collectDigits({
          name: 'rx_number',
          prompt: 'Key in your 7-digit prescription number.',
          minDigits: 7,
          maxDigits: 7,
          retry: { maxInvalid: 1, ...escalate },
        }).run();
      }
    }
    caller = await SimulatedCaller.start({
      agent: new Pharmacy({ instructions: 'pharmacy' }),
      llm: new ScriptedLLM(),
    });
    await caller.dtmf('1');
    await caller.say('March fifteenth nineteen eighty');
    await caller.dtmf('123#');
    expect(transferer.requests.map((r) => r.summary)).toEqual([
      'Refill caller needs a pharmacist. Captured so far: main menu: a prescription refill; date of birth: Saturday, March 15, 1980. The automated step ended: invalid answer 1 times.',
    ]);
  });

  it('records typed values in their spoken form, and masked ones only masked', async () => {
    const memberId = defineTask({
      name: 'member_id',
      instructions: 'Get the member id.',
      prompt: 'What is your member id?',
      schema: z.string(),
      mask: true,
      modelFallback: false,
      parse: (text) =>
        /^[a-z]\d{5}$/i.test(text.trim())
          ? { kind: 'match', value: text.trim().toUpperCase() }
          : { kind: 'nomatch' },
    });
    class Line extends voice.Agent {
      override async onEnter(): Promise<void> {
        await yesNo({ name: 'consent', question: 'May we text you?' }).run();
        await memberId.run();
      }
    }
    caller = await SimulatedCaller.start({
      agent: new Line({ instructions: 'line' }),
      llm: new ScriptedLLM(),
    });
    await caller.say('yes please');
    await caller.say('a12345');
    const log = capturesOf(caller.session);
    expect(log.entries.map((e) => [e.name, e.display, e.masked])).toEqual([
      ['consent', 'yes', false],
      ['member_id', '******', true],
    ]);
    expect(log.describe()).toBe('consent: yes; member id: ******');
  });
});
