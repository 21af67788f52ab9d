import { afterEach, describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { ESCALATE_TOOL } from '../../src/tasks/typed-task.js';
import { BACK, type MenuConfig, menu } from '../../src/telephony/menu.js';
import { RecordingTransferer, transferOnExhausted } from '../../src/telephony/transfer.js';
import type { ScriptEntry } from '../../src/testing/scripted-llm.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { runTask } from './helpers.js';

const options = {
  '1': { label: 'billing', synonyms: ['invoice', 'bill'], value: 'billing' },
  '2': { label: 'technical support', synonyms: ['broken', 'not working'], value: 'support' },
  '3': { label: 'sales', value: 'sales' },
} as const;

const PROMPT =
  'Main menu. For billing, press 1. For technical support, press 2. For sales, press 3. ' +
  'To hear these options again, press star. To go back, press 0.';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function start(extra: Partial<MenuConfig<string>> = {}, steps?: ScriptEntry[]) {
  const def = menu({
    name: 'main',
    prompt: 'Main menu.',
    options,
    repeatKey: '*',
    backKey: '0',
    ...extra,
  });
  const run = await runTask(() => def.create(), { key: 'main', steps });
  caller = run.caller;
  return run;
}

describe('menu', () => {
  it('reads the options auto-numbered and picks one by key without a model', async () => {
    const { caller, runner, model } = await start();
    expect(caller.agentLines).toEqual([PROMPT]);
    await caller.dtmf('2');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: 'support', attempts: 1, modality: 'dtmf' },
    ]);
    expect(model.requests).toEqual([]);
  });

  it('replays the menu on the repeat key without counting a failure', async () => {
    const { caller, runner } = await start();
    await caller.dtmf('*');
    expect(caller.agentLines).toEqual([PROMPT, PROMPT]);
    await caller.dtmf('3');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: 'sales', attempts: 1, modality: 'dtmf' },
    ]);
  });

  it('resolves ok with the BACK value on the back key', async () => {
    const { caller, runner } = await start();
    await caller.dtmf('0');
    expect(runner.outcomes).toEqual([{ status: 'ok', value: BACK, attempts: 1, modality: 'dtmf' }]);
  });

  it('resolves BACK when the caller says "go back"', async () => {
    const { caller, runner } = await start();
    await caller.say('go back please');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: BACK, attempts: 1, modality: 'speech' },
    ]);
  });

  it('rejects a key that is not an option, then ends invalid at the cap', async () => {
    const { caller, runner } = await start();
    await caller.dtmf('7');
    expect(caller.agentLines.at(-1)).toBe(`Sorry, 7 is not an option. ${PROMPT}`);
    await caller.dtmf('#');
    expect(caller.agentLines.at(-1)).toBe(`Sorry, pound is not an option. ${PROMPT}`);
    await caller.dtmf('9');
    expect(runner.outcomes).toEqual([
      { status: 'invalid', attempts: 3, reason: 'invalid answer 3 times' },
    ]);
  });

  it('re-prompts on silence and ends noinput at the cap', async () => {
    const { caller, runner } = await start({ firstKeyTimeoutMs: 5000, retry: { maxNoInput: 2 } });
    await caller.silence(4999);
    expect(caller.agentLines).toHaveLength(1);
    await caller.silence(1);
    expect(caller.agentLines.at(-1)).toBe(`Sorry, I didn't hear anything. ${PROMPT}`);
    await caller.silence(5000);
    expect(runner.outcomes).toEqual([
      { status: 'noinput', attempts: 2, reason: 'no answer after 2 prompts' },
    ]);
  });

  it.each([
    ['a label', 'billing please', 'billing'],
    ['a synonym', 'my internet is not working', 'support'],
    ['a spoken key', 'press three', 'sales'],
    ['a bare key', '1', 'billing'],
  ])('matches %s in speech without a model', async (_kind, said, value) => {
    const { caller, runner, model } = await start();
    await caller.say(said);
    expect(runner.outcomes).toEqual([{ status: 'ok', value, attempts: 1, modality: 'speech' }]);
    expect(model.requests).toEqual([]);
  });

  it('replays the menu when the caller asks to repeat', async () => {
    const { caller } = await start();
    await caller.say('can you repeat that');
    await caller.say('repeat');
    expect(caller.agentLines).toEqual([PROMPT, PROMPT]);
  });

  it('asks the model only for free speech, with submit and report_unclear', async () => {
    const { caller, runner, model } = await start({}, [
      { toolCalls: [{ name: 'submit', args: { key: '1' } }] },
    ]);
    await caller.say('I was charged twice last month');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: 'billing', attempts: 1, modality: 'speech' },
    ]);
    const asked = model.requestsFor('main');
    expect(asked).toHaveLength(1);
    expect(asked[0]!.tools.sort()).toEqual(['report_unclear', 'submit']);
    expect(asked[0]!.tools).not.toContain(ESCALATE_TOOL);
    expect(asked[0]!.lastUserText).toBe('I was charged twice last month');
    model.assertComplete();
  });

  it('counts report_unclear as not understood and re-prompts without another model call', async () => {
    const { caller, runner, model } = await start({}, [
      { toolCalls: [{ name: 'report_unclear', args: { reason: 'weather' } }] },
    ]);
    await caller.say('what is the weather like');
    expect(caller.agentLines.at(-1)).toBe(`Sorry, I didn't understand. ${PROMPT}`);
    await caller.dtmf('3');
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: 'sales', attempts: 2, modality: 'dtmf' },
    ]);
    expect(model.requestsFor('main')).toHaveLength(1);
  });

  it('counts a model pick of a missing key as invalid', async () => {
    const { caller, runner, model } = await start({ retry: { maxInvalid: 1 } }, [
      { toolCalls: [{ name: 'submit', args: { key: '8' } }] },
    ]);
    await caller.say('the eighth thing');
    expect(runner.outcomes).toEqual([
      { status: 'invalid', attempts: 1, reason: 'invalid answer 1 times' },
    ]);
    model.assertComplete();
  });

  it('counts unmatched speech as nomatch when the model fallback is off', async () => {
    const { caller, runner, model } = await start({
      modelFallback: false,
      retry: { maxNoMatch: 1 },
    });
    await caller.say('I was charged twice');
    expect(runner.outcomes).toEqual([
      { status: 'nomatch', attempts: 1, reason: 'not understood 1 times' },
    ]);
    expect(model.requests).toEqual([]);
  });

  it('resolves hangup when the caller hangs up in the menu', async () => {
    const { caller, runner } = await start();
    await caller.hangup();
    expect(runner.outcomes).toEqual([{ status: 'hangup', attempts: 0, reason: 'caller hung up' }]);
    expect(caller.isClosed).toBe(true);
  });

  it('transfers when retries run out', async () => {
    const transferer = new RecordingTransferer();
    const { caller, runner } = await start({
      retry: {
        maxInvalid: 1,
        onExhausted: transferOnExhausted(transferer, {
          to: 'sip:desk@bank.example',
          summary: 'Menu failed',
          mode: 'warm',
        }),
      },
    });
    await caller.dtmf('9');
    expect(runner.outcomes).toEqual([
      { status: 'transferred', attempts: 1, reason: 'transferred to sip:desk@bank.example (warm)' },
    ]);
    expect(transferer.requests[0]?.mode).toBe('warm');
  });
});

describe('menu definition checks', () => {
  const cases: Array<[string, Partial<MenuConfig<string>>, RegExp]> = [
    [
      'repeat key clashes with an option',
      { repeatKey: '1' },
      /repeatKey "1" is also the key of option "billing"/,
    ],
    [
      'back key clashes with an option',
      { backKey: '3' },
      /backKey "3" is also the key of option "sales"/,
    ],
    [
      'repeat and back share a key',
      { repeatKey: '*', backKey: '*' },
      /repeatKey and backKey are both "\*"/,
    ],
    [
      'an option key that is not a phone key',
      { options: { '12': { label: 'x', value: 'x' } } },
      /Menu option key "12" must be one phone key/,
    ],
    ['no options', { options: {} }, /at least one option/],
  ];
  it.each(cases)('%s throws a TasklineError at definition time', (_name, extra, message) => {
    let error: unknown;
    try {
      menu({ options, ...extra });
    } catch (e) {
      error = e;
    }
    expect(isTasklineError(error, 'invalid_argument')).toBe(true);
    expect((error as Error).message).toMatch(message);
  });

  it('refuses a bad firstKeyTimeoutMs by its own name when the menu is defined or derived', async () => {
    for (const [bad, got] of [
      [-1, '-1'],
      [Number.NaN, 'NaN'],
      ['8000', '"8000"'],
      [499, '499'],
      [120_001, '120001'],
      [30 * 86_400_000, '2592000000'],
    ] as const) {
      expect(() => menu({ name: 'main_menu', options, firstKeyTimeoutMs: bad as number })).toThrow(
        expect.objectContaining({
          code: 'invalid_argument',
          message: `menu "main_menu": firstKeyTimeoutMs must be between 500 and 120000 ms (got ${got}).`,
        }),
      );
    }
    const main = menu({ options, firstKeyTimeoutMs: 500 });
    expect(main.spec.retry).toMatchObject({ noInputTimeoutMs: 500 });
    expect(main.with({ firstKeyTimeoutMs: 120_000 }).spec.retry).toMatchObject({
      noInputTimeoutMs: 120_000,
    });
    expect(() => main.with({ firstKeyTimeoutMs: 0 })).toThrow(
      'menu "menu": firstKeyTimeoutMs must be between 500 and 120000 ms (got 0).',
    );
    expect(() => main.create({ firstKeyTimeoutMs: 0 })).toThrow(/firstKeyTimeoutMs/);
    // The shortest wait is waited in full, then the menu re-prompts.
    const run = await start({ firstKeyTimeoutMs: 500 });
    await run.caller.silence(499);
    expect(run.caller.agentLines).toEqual([PROMPT]);
    await run.caller.silence(1);
    expect(run.caller.agentLines.at(-1)).toBe(`Sorry, I didn't hear anything. ${PROMPT}`);
  });

  describe('speech matched like a person would', () => {
    const withAgent = {
      ...options,
      '4': { label: 'an agent', value: 'agent' },
    };

    it.each([
      ['agent please', 'agent'],
      ['operator', 'agent'],
      ['can I talk to a real person', 'agent'],
      ['um, technical support please', 'support'],
      ['I think my card is broken', 'support'],
      ['billing, no wait, sales', 'sales'],
    ])('%j → %s without a model', async (said, value) => {
      const { caller, runner, model } = await start({ options: withAgent });
      await caller.say(said);
      expect(runner.outcomes).toEqual([{ status: 'ok', value, attempts: 1, modality: 'speech' }]);
      expect(model.requests).toEqual([]);
    });

    it.each([['billing or sales'], ["I don't want an agent"], ['what is sales?']])(
      '%j is never a guess: it goes to the model',
      async (said) => {
        const { caller, runner, model } = await start({ options: withAgent }, [
          { toolCalls: [{ name: 'report_unclear', args: { reason: 'unclear' } }] },
        ]);
        await caller.say(said);
        expect(runner.outcomes).toEqual([]);
        expect(model.requestsFor('main')).toHaveLength(1);
      },
    );

    it('takes "the second one" only when positions are on', async () => {
      const on = await start({ positional: true });
      await on.caller.say('the second one');
      expect(on.runner.outcomes).toEqual([
        { status: 'ok', value: 'support', attempts: 1, modality: 'speech' },
      ]);
      await on.caller.close();
      const off = await start({ modelFallback: false, retry: { maxNoMatch: 1 } });
      await off.caller.say('the second one');
      expect(off.runner.outcomes).toEqual([
        { status: 'nomatch', attempts: 1, reason: 'not understood 1 times' },
      ]);
    });
  });
});
