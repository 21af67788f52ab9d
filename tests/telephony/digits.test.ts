import { llm, voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { ESCALATE_TOOL } from '../../src/tasks/typed-task.js';
import { capturesOf } from '../../src/telephony/captures.js';
import { type CollectDigitsOptions, collectDigits } from '../../src/telephony/digits.js';
import { RecordingTransferer, transferOnExhausted } from '../../src/telephony/transfer.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { Runner, runTask } from './helpers.js';

const PROMPT = 'Enter your PIN, then press pound.';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function start(options: Partial<CollectDigitsOptions> = {}) {
  const def = collectDigits({
    name: 'pin',
    prompt: PROMPT,
    minDigits: 4,
    maxDigits: 6,
    ...options,
  });
  const run = await runTask(() => def.create());
  caller = run.caller;
  expect(caller.agentLines).toEqual([options.prompt ?? PROMPT]);
  expect(caller.call.isWaitingForCaller).toBe(true);
  return { ...run, def };
}

describe('collectDigits on the keypad', () => {
  it('ends at the finish key, without the key, and makes no model call', async () => {
    const { caller, runner, model } = await start();
    await caller.dtmf('4321#');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '4321', attempts: 1, modality: 'dtmf' },
    ]);
    expect(model.requests).toEqual([]);
    expect(model.requestsFor('pin')).toEqual([]);
    expect(caller.call.isWaitingForCaller).toBe(false);
    const lines = runner.chatCtx.items.flatMap((i) =>
      i.type === 'message' ? [i.textContent] : [],
    );
    expect(lines).toContain('(keypad) 4321');
    expect(capturesOf(caller.session).get('pin')?.display).toBe('4321');
  });

  it('ends as soon as maxDigits keys are in (no finish key needed)', async () => {
    const { caller, runner } = await start({ minDigits: 4, maxDigits: 4, finishOnKey: '' });
    await caller.dtmf('9876');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '9876', attempts: 1, modality: 'dtmf' },
    ]);
  });

  it("treats '#' as a digit-free key when finishOnKey is '' (and rejects it when not valid)", async () => {
    const { caller, runner } = await start({ finishOnKey: '', interDigitTimeoutMs: 2000 });
    await caller.dtmf('1234#');
    await caller.silence(2000);
    expect(caller.agentLines.at(-1)).toBe(`Sorry, pound can't be used here. ${PROMPT}`);
    expect(runner.outcomes).toEqual([]);
  });

  it('re-prompts after the first-digit timeout, then ends noinput at the cap', async () => {
    const { caller, runner } = await start({ firstDigitTimeoutMs: 4000 });
    await caller.silence(3999);
    expect(caller.agentLines).toHaveLength(1);
    await caller.silence(1);
    expect(caller.agentLines.at(-1)).toBe(`Sorry, I didn't hear anything. ${PROMPT}`);
    await caller.silence(4000);
    expect(caller.agentLines.at(-1)).toBe(`Are you still there? ${PROMPT}`);
    await caller.silence(4000);
    expect(runner.outcomes).toEqual([
      { status: 'noinput', attempts: 3, reason: 'no answer after 3 prompts' },
    ]);
  });

  it('submits what was entered after the inter-digit timeout', async () => {
    const { caller, runner } = await start({ interDigitTimeoutMs: 3000 });
    await caller.dtmf('12345');
    await caller.silence(2999);
    expect(runner.outcomes).toEqual([]);
    await caller.silence(1);
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '12345', attempts: 1, modality: 'dtmf' },
    ]);
  });

  it('counts an inter-digit timeout with too few digits as invalid', async () => {
    const { caller, runner } = await start({ interDigitTimeoutMs: 3000 });
    await caller.dtmf('12');
    await caller.silence(3000);
    expect(caller.agentLines.at(-1)).toBe(`I got 2 digits, but I need at least 4. ${PROMPT}`);
    await caller.dtmf('1234#');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '1234', attempts: 2, modality: 'dtmf' },
    ]);
  });

  it('removes the last digit with the delete key', async () => {
    const { caller, runner } = await start({ deleteKey: '*' });
    await caller.dtmf('12*34**56#');
    expect(runner.outcomes).toEqual([]);
    expect(caller.agentLines.at(-1)).toBe(`I got 3 digits, but I need at least 4. ${PROMPT}`);
    await caller.dtmf('1*2345#');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '2345', attempts: 2, modality: 'dtmf' },
    ]);
  });

  it('counts a finish key with nothing entered (all deleted) as no input', async () => {
    const { caller, runner } = await start({ deleteKey: '*' });
    await caller.dtmf('1*#');
    expect(caller.agentLines.at(-1)).toBe(`Sorry, I didn't hear anything. ${PROMPT}`);
    expect(runner.outcomes).toEqual([]);
  });

  it('rejects too few digits, then ends invalid at the cap with the reason', async () => {
    const { caller, runner } = await start({ minDigits: 4, maxDigits: 4 });
    await caller.dtmf('12#');
    expect(caller.agentLines.at(-1)).toBe(`I got 2 digits, but I need exactly 4. ${PROMPT}`);
    await caller.dtmf('1#');
    expect(caller.agentLines.at(-1)).toBe(`I got 1 digit, but I need exactly 4. ${PROMPT}`);
    await caller.dtmf('123#');
    expect(runner.outcomes).toEqual([
      { status: 'invalid', attempts: 3, reason: 'invalid answer 3 times' },
    ]);
  });

  it('stops at maxDigits: extra keys are not part of the value (too many cannot be keyed)', async () => {
    const { caller, runner } = await start({ minDigits: 4, maxDigits: 4, finishOnKey: '#' });
    await caller.dtmf('1234');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '1234', attempts: 1, modality: 'dtmf' },
    ]);
  });

  it('rejects keys outside validDigits', async () => {
    const { caller, runner } = await start({ validDigits: '0123456789' });
    await caller.dtmf('12*4#');
    expect(caller.agentLines.at(-1)).toBe(`Sorry, star can't be used here. ${PROMPT}`);
    await caller.dtmf('1A34#');
    expect(caller.agentLines.at(-1)).toBe(`Sorry, A can't be used here. ${PROMPT}`);
    expect(runner.outcomes).toEqual([]);
  });

  it('never counts a key outside validDigits toward maxDigits', async () => {
    const { caller, runner } = await start({
      minDigits: 4,
      maxDigits: 4,
      interDigitTimeoutMs: 3000,
    });
    await caller.dtmf('439*');
    // Three digits in: the entry waits for the fourth instead of submitting "439*".
    expect(runner.outcomes).toEqual([]);
    expect(caller.agentLines).toEqual([PROMPT]);
    await caller.dtmf('1');
    // Four digits, but a stray key was part of the entry: rejected, never submitted as a PIN.
    expect(caller.agentLines.at(-1)).toBe(`Sorry, star can't be used here. ${PROMPT}`);
    expect(runner.outcomes).toEqual([]);
    await caller.dtmf('4391');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '4391', attempts: 2, modality: 'dtmf' },
    ]);
  });

  it('runs the validator and speaks its problem', async () => {
    const { caller, runner } = await start({
      validator: (d) => (new Set(d).size === 1 ? 'That PIN is too easy to guess.' : undefined),
    });
    await caller.dtmf('0000#');
    expect(caller.agentLines.at(-1)).toBe(`That PIN is too easy to guess. ${PROMPT}`);
    await caller.dtmf('0420#');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '0420', attempts: 2, modality: 'dtmf' },
    ]);
  });

  it('tapers re-prompts with retry.prompts and a shorter reprompt', async () => {
    const { caller } = await start({
      reprompt: 'Enter your PIN.',
      firstDigitTimeoutMs: 1000,
      retry: { prompts: { noInput: ['Please enter your PIN now.', 'Last try.'] } },
    });
    await caller.silence(1000);
    expect(caller.agentLines.at(-1)).toBe('Please enter your PIN now.');
    await caller.silence(1000);
    expect(caller.agentLines.at(-1)).toBe('Last try.');
    await caller.dtmf('12#');
    expect(caller.agentLines.at(-1)).toBe('I got 2 digits, but I need at least 4. Enter your PIN.');
  });

  it('ends maxRetries when mixed failures reach maxAttempts', async () => {
    const { caller, runner } = await start({
      firstDigitTimeoutMs: 1000,
      retry: { maxAttempts: 2 },
    });
    await caller.silence(1000);
    await caller.dtmf('1#');
    expect(runner.outcomes).toEqual([
      { status: 'maxRetries', attempts: 2, reason: '2 failed attempts' },
    ]);
  });

  it('the first key interrupts the prompt and still counts', async () => {
    const def = collectDigits({ name: 'pin', prompt: PROMPT, minDigits: 4, maxDigits: 4 });
    const runner = new Runner(() => def.create());
    const session = new voice.AgentSession({ llm: new ScriptedLLM() });
    caller = new SimulatedCaller(session);
    const c = caller;
    let prompt: voice.SpeechHandle | undefined;
    session.on(voice.AgentSessionEventTypes.SpeechCreated, (ev) => {
      if (prompt) return;
      prompt = ev.speechHandle;
      queueMicrotask(() => c.call.pushDtmf('5', c.identity));
    });
    await session.start({ agent: runner });
    await caller.settle();
    expect(prompt?.interrupted).toBe(true);
    await caller.dtmf('678');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '5678', attempts: 1, modality: 'dtmf' },
    ]);
  });

  it('resolves hangup when the caller hangs up mid-entry, and the session closes', async () => {
    const { caller, runner } = await start();
    await caller.dtmf('12');
    await caller.hangup();
    expect(runner.outcomes).toEqual([{ status: 'hangup', attempts: 0, reason: 'caller hung up' }]);
    expect(caller.isClosed).toBe(true);
  });

  it('runs onExhausted inside a tool and resolves transferred', async () => {
    const transferer = new RecordingTransferer();
    const { caller, runner, model } = await start({
      firstDigitTimeoutMs: 1000,
      retry: {
        maxNoInput: 1,
        onExhausted: transferOnExhausted(transferer, {
          to: '+15550100',
          summary: 'PIN entry failed',
        }),
      },
    });
    await caller.silence(1000);
    expect(runner.outcomes).toEqual([
      { status: 'transferred', attempts: 1, reason: 'transferred to +15550100 (cold)' },
    ]);
    expect(transferer.requests).toEqual([
      {
        to: '+15550100',
        mode: 'cold',
        summary: 'PIN entry failed. The automated step ended: no answer after 1 prompts.',
      },
    ]);
    expect(model.requests).toEqual([]);
    const calls = caller.session.history.items.filter((i) => i.type === 'function_call');
    expect(calls.map((c) => (c.type === 'function_call' ? c.name : ''))).toEqual([ESCALATE_TOOL]);
  });
});

describe('collectDigits inside a function tool', () => {
  it("runs inline from an LLM agent's tool; only the agent's model is asked", async () => {
    const pin = collectDigits({ name: 'pin', prompt: PROMPT, minDigits: 4, maxDigits: 4 });
    class Desk extends voice.Agent {
      outcome: unknown;
      constructor() {
        super({
          instructions: 'Front desk.',
          tools: {
            verify_pin: llm.tool({
              description: 'Ask the caller for their PIN.',
              execute: async () => {
                const o = await pin.run();
                this.outcome = o;
                return o.status === 'ok' ? 'PIN entered' : `no PIN (${o.status})`;
              },
            }),
          },
        });
      }
    }
    const model = new ScriptedLLM().for(Desk, [
      { toolCalls: [{ name: 'verify_pin' }] },
      (req) => ({ say: `Thanks. (${req.lastToolOutput?.value})` }),
    ]);
    const desk = new Desk();
    caller = await SimulatedCaller.start({ agent: desk, llm: model });
    await caller.say('I want my balance');
    expect(caller.agentLines).toEqual([PROMPT]);
    await caller.dtmf('4321');
    expect(desk.outcome).toEqual({ status: 'ok', value: '4321', attempts: 1, modality: 'dtmf' });
    expect(caller.agentLines.at(-1)).toBe('Thanks. (PIN entered)');
    expect(model.requestsFor('pin')).toEqual([]);
    expect(model.requestsFor(Desk)).toHaveLength(2);
    model.assertComplete();
  });
});

describe('collectDigits by speech (no model)', () => {
  it('accepts spoken digits, modality speech', async () => {
    const { caller, runner, model } = await start();
    await caller.say('four three two one');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '4321', attempts: 1, modality: 'speech' },
    ]);
    expect(model.requests).toEqual([]);
  });

  it('rejects too many spoken digits and asks again', async () => {
    const { caller, runner } = await start({ minDigits: 4, maxDigits: 4 });
    await caller.say('one two three four five');
    expect(caller.agentLines.at(-1)).toBe(`I got 5 digits, but I need exactly 4. ${PROMPT}`);
    await caller.say('double five one two');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '5512', attempts: 2, modality: 'speech' },
    ]);
  });

  it('counts words that are not digits as not understood', async () => {
    const { caller, runner } = await start({ retry: { maxNoMatch: 2 } });
    await caller.say('I forgot it');
    expect(caller.agentLines.at(-1)).toBe(`Sorry, I didn't understand. ${PROMPT}`);
    await caller.say('no idea');
    expect(runner.outcomes).toEqual([
      { status: 'nomatch', attempts: 2, reason: 'not understood 2 times' },
    ]);
  });

  it('asks for the keypad when speech is not allowed', async () => {
    const { caller, runner } = await start({ allowSpeech: false });
    await caller.say('four three two one');
    expect(caller.agentLines.at(-1)).toBe(`Please use the keypad on your phone. ${PROMPT}`);
    expect(runner.outcomes).toEqual([]);
  });
});

describe('collectDigits definition checks', () => {
  const bad: Array<[string, Partial<CollectDigitsOptions>, RegExp]> = [
    ['min > max', { minDigits: 5, maxDigits: 4 }, /minDigits \(5\) cannot be larger/],
    ['finish key not a key', { finishOnKey: 'x' }, /finishOnKey must be one phone key/],
    ['same delete and finish key', { deleteKey: '#' }, /deleteKey and finishOnKey are both "#"/],
    [
      'finish key also valid',
      { validDigits: '0123456789#' },
      /finishOnKey "#" is also in validDigits/,
    ],
    ['timeout too short', { interDigitTimeoutMs: 10 }, /interDigitTimeoutMs must be between/],
    ['unbounded retries', { retry: { maxNoInput: 0 } }, /retry.maxNoInput must be a whole number/],
  ];
  it.each(bad)('%s throws a TasklineError now, not mid-call', (_name, options, message) => {
    let error: unknown;
    try {
      collectDigits({ prompt: PROMPT, ...options });
    } catch (e) {
      error = e;
    }
    expect(isTasklineError(error, 'invalid_argument')).toBe(true);
    expect((error as Error).message).toMatch(message);
  });
});
