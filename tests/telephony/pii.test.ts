import { afterEach, describe, expect, it } from 'vitest';
import { clearSecrets, luhnValid, maskPII, registerSecret } from '../../src/core/pii.js';
import { collectDigits } from '../../src/telephony/digits.js';
import { logCall } from '../../src/telephony/log.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { runTask } from './helpers.js';
import { captureLogs, logText } from './logs.js';

describe('maskPII', () => {
  afterEach(() => clearSecrets());

  it('masks card numbers that pass Luhn, spaced or dashed, keeping the last four', () => {
    expect(maskPII('card 4111 1111 1111 1111 ok')).toBe('card **** **** **** 1111 ok');
    expect(maskPII('card 5500-0000-0000-0004.')).toBe('card ****-****-****-0004.');
    expect(maskPII('amex 378282246310005')).toBe('amex ***********0005');
  });

  it('leaves numbers that are not cards alone', () => {
    expect(maskPII('order 4111 1111 1111 1112')).toBe('order 4111 1111 1111 1112');
    expect(maskPII('call +1 415 555 1234 at 1767603600000')).toBe(
      'call +1 415 555 1234 at 1767603600000',
    );
    expect(luhnValid('79927398713')).toBe(true);
    expect(luhnValid('79927398710')).toBe(false);
  });

  it('masks registered secrets, also when spelled out with spaces, but not inside longer numbers', () => {
    registerSecret('8642');
    expect(maskPII('pin 8642, said as 8 6 4 2 or 8-6-4-2')).toBe(
      'pin ****, said as * * * * or *-*-*-*',
    );
    expect(maskPII('id 186420')).toBe('id 186420');
    registerSecret('12');
    expect(maskPII('12 apples')).toBe('12 apples');
  });
});

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

const PIN = '864297';

function chatTexts(
  ...items: Array<{ type: string; textContent?: string | undefined }[]>
): string[] {
  return items.flat().flatMap((i) => (i.type === 'message' ? [i.textContent ?? ''] : []));
}

describe('a PIN collected with mask', () => {
  it('never reaches the chat context, history, transcript or logs in clear', async () => {
    const logs = captureLogs();
    try {
      const def = collectDigits({
        name: 'pin',
        prompt: 'Enter your PIN.',
        minDigits: 6,
        maxDigits: 6,
        mask: true,
        validator: (pin) => (pin === PIN ? undefined : `PIN ${pin} is not right.`),
      });
      const run = await runTask(() => def.create());
      caller = run.caller;
      await caller.dtmf('111111', { mask: true });
      await caller.dtmf(PIN, { mask: true });
      expect(run.runner.outcomes).toEqual([
        { status: 'ok', value: PIN, attempts: 2, modality: 'dtmf' },
      ]);
      expect(caller.agentLines[1]).toBe('PIN ****** is not right. Enter your PIN.');
      logCall(caller.call, 'info', `the bot logged the pin ${PIN} by mistake`);
      await caller.close();

      const chat = chatTexts(caller.session.history.items, run.runner.chatCtx.items);
      expect(chat).toContain('(keypad) ******');
      expect(chat.join('\n')).not.toContain(PIN);
      expect(caller.transcript.map((l) => l.text).join('\n')).not.toContain(PIN);

      const text = logs.lines.map(logText).join('\n');
      expect(text).toContain('pin ended: ok');
      expect(text).toContain('the bot logged the pin ****** by mistake');
      expect(text).not.toMatch(/8[\s-]?6[\s-]?4[\s-]?2[\s-]?9[\s-]?7/);
    } finally {
      logs.stop();
    }
  });

  it('scrubs a spoken PIN from the chat context and history when speech is allowed', async () => {
    const def = collectDigits({
      name: 'pin',
      prompt: 'Say or key your PIN.',
      minDigits: 6,
      maxDigits: 6,
      mask: true,
      allowSpeech: true,
    });
    const run = await runTask(() => def.create());
    caller = run.caller;
    await caller.say('eight six four two nine seven');
    expect(run.runner.outcomes).toEqual([
      { status: 'ok', value: PIN, attempts: 1, modality: 'speech' },
    ]);
    const chat = chatTexts(caller.session.history.items, run.runner.chatCtx.items);
    expect(chat).toContain('(spoken) ******');
    expect(chat.join('\n')).not.toMatch(/eight six|864297/);
  });
});
