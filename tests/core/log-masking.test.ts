/**
 * The logger taskline starts masks what it writes: upstream's own debug line for a tool call
 * ("Tool call execution finished", with the arguments in `lk.pii.arguments`) never carries a
 * card number or a registered PIN in clear, nor a PIN the caller is still saying.
 */
import { initializeLogger, llm, log, voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod/v4';
import { maskStartedLogger, startLogger } from '../../src/core/log.js';
import {
  beginSecretCapture,
  clearSecrets,
  maskLogLine,
  maskPII,
  registerSecret,
} from '../../src/core/pii.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { stdoutDuring } from '../stdout.js';

const CARD = '4111 1111 1111 1111';

/** What upstream's logger wrote while `body` ran under startLogger at `level`. */
async function logsOf(level: string, body: () => Promise<void>): Promise<string> {
  const lines = await stdoutDuring(async () => {
    startLogger({ level });
    try {
      await body();
    } finally {
      initializeLogger({ pretty: false, level: 'silent' });
    }
  });
  return lines.join('');
}

afterEach(() => clearSecrets());

describe('the logger taskline starts', () => {
  it("masks the card number in upstream's tool-call debug line (lk.pii.arguments)", async () => {
    const paid: string[] = [];
    const pay = llm.tool({
      description: 'Pay with a card.',
      parameters: z.object({ card: z.string(), amount: z.number() }),
      execute: async ({ card, amount }) => {
        paid.push(card);
        return `Paid ${amount} dollars with card ${card}.`;
      },
    });
    const agent = new voice.Agent({ instructions: 'You take payments.', tools: { pay } });
    const model = new ScriptedLLM().for('*', [
      { toolCalls: [{ name: 'pay', args: { card: CARD, amount: 20 } }] },
      { say: 'Done.' },
    ]);
    const text = await logsOf('debug', async () => {
      const caller = await SimulatedCaller.start({ agent, llm: model });
      await caller.say(`pay 20 dollars with my card ${CARD}`);
      await caller.close();
    });
    expect(paid).toEqual([CARD]);
    // The line is there, with its arguments, masked.
    expect(text).toContain('Tool call execution finished');
    expect(text).toContain('"lk.pii.arguments"');
    expect(text).toContain('**** **** **** 1111');
    expect(text).not.toContain(CARD);
    expect(text).not.toContain('4111111111111111');
  });

  it('masks a registered PIN in any field, written as digits or as words', async () => {
    registerSecret('8642');
    const text = await logsOf('debug', async () => {
      log().child({ component: 'x' }).debug({ 'lk.pii.user_input': 'eight six four two' }, 'heard');
      log().info({ pin: '8642', spaced: '8 6 4 2' }, 'the pin is 8642');
    });
    expect(text).toContain('heard');
    expect(text).not.toMatch(/8642|8 6 4 2|eight six four two/);
  });

  it("masks the caller's words while a secret is being collected, before it is known", async () => {
    const text = await logsOf('debug', async () => {
      const end = beginSecretCapture();
      log().debug({ 'lk.pii.user_input': 'nine three one seven', speech_id: 's1' }, 'user turn');
      end();
      log().debug({ 'lk.pii.user_input': 'my account is the blue one' }, 'user turn');
    });
    expect(text).not.toContain('nine three one seven');
    expect(text).toContain('"speech_id":"s1"');
    expect(text).toContain('my account is the blue one');
  });
});

describe("a room worker's job process (its logger started by upstream's CLI)", () => {
  it('masks what that logger writes once the room entry runs', async () => {
    const lines = await stdoutDuring(() => {
      try {
        // What upstream's job process does before it calls prewarm/entry.
        initializeLogger({ pretty: false, level: 'debug' });
        maskStartedLogger();
        log().debug({ 'lk.pii.arguments': { card: CARD } }, 'Tool call execution finished');
      } finally {
        initializeLogger({ pretty: false, level: 'silent' });
      }
    });
    const text = lines.join('');
    expect(text).toContain('Tool call execution finished');
    expect(text).not.toContain(CARD);
    expect(text).toContain('1111');
  });
});

describe('maskLogLine and maskPII', () => {
  it('mask digits a transcript spelled out, with "oh" for zero', () => {
    registerSecret('9031');
    expect(maskPII('nine oh three one, or 9-0-3-1')).not.toMatch(/nine|three|9-0-3-1/);
    expect(maskPII('I have nine dogs')).toBe('I have nine dogs');
  });

  it('leave a line that is not JSON masked as text', () => {
    const end = beginSecretCapture();
    try {
      expect(maskLogLine(`card ${CARD} "lk.pii. broken`)).toBe(
        'card **** **** **** 1111 "lk.pii. broken',
      );
    } finally {
      end();
    }
  });
});

describe('a JSON log line is masked value by value', () => {
  it("keeps the logger's own fields: a Luhn-valid millisecond time is not a card", () => {
    // 1795696709611 passes the Luhn check, as one time in ten does; the line a worker wrote.
    const time = 1795696709611;
    const line = `${JSON.stringify({ level: 30, time, pid: 5736, to: '+15550100', msg: 'call out: busy' })}\n`;
    expect(maskLogLine(line)).toBe(line);
    expect(JSON.parse(maskLogLine(line))).toMatchObject({ time, msg: 'call out: busy' });
  });

  it('masks a card or a secret in any string or number field, and the line stays JSON', () => {
    registerSecret('8642');
    const line = `${JSON.stringify({
      level: 30,
      time: 1795696709613,
      msg: `paid with ${CARD}`,
      pin: 8642,
      nested: { said: 'eight six four two' },
    })}\n`;
    const masked = maskLogLine(line);
    expect(masked.endsWith('\n')).toBe(true);
    const record = JSON.parse(masked);
    expect(record).toMatchObject({
      time: 1795696709613,
      msg: 'paid with **** **** **** 1111',
      pin: '****',
    });
    expect(masked).not.toMatch(/8642|eight six/);
  });
});

describe('numbers and keys in a JSON log line', () => {
  it('masks a 19-digit card logged as a number, which JSON parsing would have rounded', () => {
    const line = '{"level":30,"time":1795696709611,"paid":6011000990139424017,"msg":"ok"}\n';
    const masked = maskLogLine(line);
    expect(masked).not.toMatch(/601100099013942/);
    expect(JSON.parse(masked)).toMatchObject({ time: 1795696709611, paid: '***************4017' });
  });

  it('leaves a long number inside a string as it is, so the line stays JSON and caller input stays masked', () => {
    const end = beginSecretCapture();
    try {
      // A tool call's arguments, logged as one JSON string holding a 16-digit number and a PIN.
      const line = `${JSON.stringify({
        level: 20,
        time: 1795696709611,
        'lk.pii.arguments': '{"account": 1234567890123456, "pin": 4821}',
        msg: 'executing tool',
      })}\n`;
      const record = JSON.parse(maskLogLine(line));
      expect(record).toMatchObject({ time: 1795696709611, 'lk.pii.arguments': '****' });
    } finally {
      end();
    }
  });

  it('masks 13- and 14-digit cards logged as numbers; a 13-digit millisecond time stays', () => {
    // 4222222222222 (a 13-digit Visa test number) and 30569309025904 (14-digit Diners) pass Luhn.
    const line = '{"level":30,"at":1795696709611,"visa":4222222222222,"diners":30569309025904}\n';
    const record = JSON.parse(maskLogLine(line));
    expect(record.at).toBe(1795696709611);
    expect(String(record.visa)).not.toContain('422222222');
    expect(String(record.diners)).not.toContain('3056930902');
  });

  it('keeps a nested millisecond time a number (not a card), and masks a card used as a key', () => {
    const line = `${JSON.stringify({ level: 30, job: { at: 1795696709611 }, [CARD]: 'x', msg: CARD })}\n`;
    const record = JSON.parse(maskLogLine(line));
    expect(record.job).toEqual({ at: 1795696709611 });
    expect(JSON.stringify(record)).not.toContain(CARD);
  });
});
