// The navigator against scripted IVRs (the simulated caller plays the far end, keys are
// recorded): menus split over utterances, speech menus, an extension with a finish key,
// loops, hold (announced, or sound that is no speech), a person answering (handed over or
// bridged), and its bounds on turns and time.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { farEndOf } from '../../../src/telephony/outbound/far-end.js';
import {
  type DtmfRoom,
  RecordingKeySender,
  roomKeySender,
} from '../../../src/telephony/outbound/key-sender.js';
import {
  type IvrOutcome,
  type NavigateIvrOptions,
  navigateIvr,
} from '../../../src/telephony/outbound/navigator.js';
import { RecordingTransferer } from '../../../src/telephony/transfer.js';
import { ScriptedLLM } from '../../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../../src/testing/simulated-caller.js';
import { VirtualClock } from '../../../src/testing/virtual-clock.js';

class Navigator extends voice.Agent {
  route: IvrOutcome | undefined;
  readonly keys = new RecordingKeySender();
  constructor(private readonly options: Omit<NavigateIvrOptions, 'keys'>) {
    super({ instructions: 'Navigates a phone menu.' });
  }
  override async onEnter(): Promise<void> {
    this.route = await navigateIvr(this.session, { ...this.options, keys: this.keys });
  }
}

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function navigate(options: Omit<NavigateIvrOptions, 'keys'>, model = new ScriptedLLM()) {
  const agent = new Navigator({ useModel: false, ...options });
  caller = await SimulatedCaller.start({ agent, llm: model });
  return { agent, caller, model };
}

describe('navigateIvr', () => {
  it('keys an extension when asked, with the finish key the IVR names, and reaches a person', async () => {
    const { agent, caller } = await navigate({
      reach: 'Jordan Lee',
      answers: [{ when: "party's extension", keys: '204' }],
    });
    await caller.say(
      "Thank you for calling Maple Court. If you know your party's extension, you may dial it at any time, followed by the pound key. For reception, press 1.",
    );
    expect(agent.keys.sent).toEqual(['204#']);
    await caller.say('Please hold while I connect you.');
    await caller.say('Hello, this is Jordan speaking.');
    expect(agent.route).toMatchObject({
      status: 'human',
      heard: 'Hello, this is Jordan speaking.',
      path: [
        { did: 'keys', value: '204#', why: 'answer' },
        { did: 'waited', why: 'hold', heard: 'Please hold while I connect you.' },
      ],
    });
  });

  it('waits for a menu split over utterances before giving up on it', async () => {
    const { agent, caller } = await navigate({ reach: 'billing', decideAfterMs: 4000 });
    await caller.say('For appointments, press 1. For prescription refills, press 2.');
    await caller.silence(3000);
    expect(agent.route).toBeUndefined();
    await caller.say('For billing questions, press 3.');
    expect(agent.keys.sent).toEqual(['3']);
    await caller.say('Billing. For payments, press 1. For refunds, press 2.');
    await caller.silence(4000);
    // Past the goal's choice, a menu with nothing more for it is where the goal is.
    expect(agent.route).toMatchObject({
      status: 'reached',
      heard: 'Billing. For payments, press 1. For refunds, press 2.',
      path: [{ value: '3', option: 'billing questions' }],
    });
  });

  it('says the option when the menu takes speech', async () => {
    const { agent, caller } = await navigate({ reach: 'support', reachedWhen: 'support team' });
    await caller.say('Please say billing, support, or sales.');
    expect(caller.agentLines).toEqual(['support']);
    await caller.say('Connecting you to the support team.');
    expect(agent.route).toMatchObject({
      status: 'reached',
      path: [{ did: 'said', value: 'support', why: 'menu' }],
    });
  });

  it('a menu with nothing for the goal and no model is stuck, naming what was offered', async () => {
    const { agent, caller } = await navigate({ reach: 'the pharmacy', decideAfterMs: 4000 });
    await caller.say('For appointments, press 1. For billing, press 2.');
    await caller.silence(4000);
    expect(agent.route).toMatchObject({
      status: 'stuck',
      reason: 'no_option',
      detail: 'no choice for "the pharmacy" in: appointments; billing',
    });
    expect(agent.keys.sent).toEqual([]);
  });

  it('a prompt that keeps coming back is a loop: acted on once more, then stuck', async () => {
    const { agent, caller } = await navigate({ reach: 'billing', maxRepeats: 1 });
    const menu = 'Main menu. For billing, press 1. For support, press 2.';
    await caller.say(menu);
    await caller.say(`Sorry, that is not a valid option. ${menu}`);
    expect(agent.keys.sent).toEqual(['1', '1']);
    expect(agent.route).toBeUndefined();
    await caller.say(menu);
    expect(agent.route).toMatchObject({
      status: 'stuck',
      reason: 'loop',
      detail: 'the same prompt came back 3 times',
      path: [{ why: 'menu' }, { why: 'repeat' }],
    });
  });

  it('hold music (sound that is not speech, for long) is a wait, bounded by maxHoldMs', async () => {
    const { agent, caller } = await navigate({
      reach: 'billing',
      holdAfterMs: 15_000,
      maxHoldMs: 60_000,
      timeoutMs: 30_000,
    });
    await caller.say('For billing, press 1.');
    farEndOf(caller.session).heardSound(14_000);
    farEndOf(caller.session).heardSound(15_000);
    await caller.settle();
    expect(agent.route).toBeUndefined();
    // The overall timeout does not cut a hold short; the hold has its own bound.
    await caller.silence(59_999);
    expect(agent.route).toBeUndefined();
    await caller.silence(1);
    expect(agent.route).toMatchObject({
      status: 'timeout',
      reason: 'on hold for more than 60000 ms',
      path: [
        { did: 'keys', value: '1' },
        { did: 'waited', why: 'hold', heard: '(hold music)' },
      ],
    });
  });

  it('a person answering is bridged when asked to: a cold transfer to the user', async () => {
    const transferer = new RecordingTransferer();
    const { agent, caller } = await navigate({
      reach: 'billing',
      bridge: { transferer, to: '+15550199', summary: 'Your bank, billing desk' },
    });
    await caller.say('For billing, press 1.');
    await caller.say('Billing, this is Sam, how can I help?');
    expect(agent.route).toMatchObject({
      status: 'human',
      bridged: { ok: true, to: '+15550199', mode: 'cold' },
    });
    expect(transferer.requests).toMatchObject([{ to: '+15550199', mode: 'cold' }]);
  });

  it('is bounded by turns and by time, and ends hangup when the line drops', async () => {
    const turns = await navigate({ reach: 'billing', maxTurns: 2 });
    await turns.caller.say('Welcome.');
    await turns.caller.say('Our hours are 9 to 5.');
    await turns.caller.say('Goodbye for now.');
    expect(turns.agent.route).toMatchObject({
      status: 'timeout',
      reason: 'not done within 2 prompts',
    });
    await turns.caller.close();

    const time = await navigate({ reach: 'billing', timeoutMs: 10_000 });
    await time.caller.silence(10_000);
    expect(time.agent.route).toMatchObject({
      status: 'timeout',
      reason: 'not done within 10000 ms',
    });
    await time.caller.close();

    const dropped = await navigate({ reach: 'billing' });
    await dropped.caller.say('For billing, press 1.');
    await dropped.caller.hangup();
    expect(dropped.agent.route).toMatchObject({
      status: 'hangup',
      path: [{ value: '1' }],
    });
  });

  it('refuses a bad bound before it waits on it, naming option and range; the boundaries pass', async () => {
    const session = {} as voice.AgentSession; // never reached: the options are checked first
    for (const [options, message] of [
      [{ maxTurns: 0 }, 'maxTurns must be a whole number from 1 to 200 (got 0)'],
      [{ maxTurns: 2.5 }, 'maxTurns must be a whole number from 1 to 200 (got 2.5)'],
      [{ timeoutMs: 4_999 }, 'timeoutMs must be between 5000 and 3600000 ms (got 4999)'],
      [
        { timeoutMs: 30 * 86_400_000 },
        'timeoutMs must be between 5000 and 3600000 ms (got 2592000000)',
      ],
      [{ maxRepeats: -1 }, 'maxRepeats must be a whole number from 0 to 10 (got -1)'],
      [{ decideAfterMs: Number.NaN }, 'decideAfterMs must be between 500 and 60000 ms (got NaN)'],
      [{ holdAfterMs: '15000' }, 'holdAfterMs must be between 1000 and 120000 ms (got "15000")'],
      [{ maxHoldMs: 14_400_001 }, 'maxHoldMs must be between 10000 and 14400000 ms (got 14400001)'],
      [{ maxModelCalls: 21 }, 'maxModelCalls must be a whole number from 0 to 20 (got 21)'],
    ] as const) {
      await expect(
        navigateIvr(session, {
          reach: 'billing',
          keys: new RecordingKeySender(),
          ...(options as object),
        }),
      ).rejects.toMatchObject({ code: 'invalid_argument', message: `navigateIvr: ${message}.` });
    }

    const shortest = await navigate({
      reach: 'billing',
      timeoutMs: 5_000,
      maxTurns: 1,
      maxRepeats: 0,
      decideAfterMs: 500,
      holdAfterMs: 1_000,
      maxHoldMs: 10_000,
      maxModelCalls: 0,
    });
    await shortest.caller.silence(4_999);
    expect(shortest.agent.route).toBeUndefined();
    await shortest.caller.silence(1);
    expect(shortest.agent.route).toMatchObject({
      status: 'timeout',
      reason: 'not done within 5000 ms',
    });
    await shortest.caller.close();

    const longest = await navigate({
      reach: 'billing',
      timeoutMs: 3_600_000,
      maxTurns: 200,
      maxRepeats: 10,
      decideAfterMs: 60_000,
      holdAfterMs: 120_000,
      maxHoldMs: 14_400_000,
      maxModelCalls: 20,
    });
    await longest.caller.say('For sales, press 1. For billing, press 2.');
    expect(longest.agent.keys.sent).toEqual(['2']);
    await longest.caller.silence(3_599_999);
    expect(longest.agent.route).toBeUndefined();
    await longest.caller.silence(1);
    expect(longest.agent.route).toMatchObject({ status: 'timeout' });
  });

  it('refuses answer keys that are not phone keys before anything is sent', async () => {
    let error: unknown;
    class Catch extends voice.Agent {
      override async onEnter() {
        try {
          await navigateIvr(this.session, { reach: 'x', answers: [{ when: 'PIN', keys: '12x4' }] });
        } catch (e) {
          error = e;
        }
      }
    }
    caller = await SimulatedCaller.start({
      agent: new Catch({ instructions: 'x' }),
      llm: new ScriptedLLM(),
    });
    expect(error).toMatchObject({ code: 'invalid_argument', message: /12x4/ });
  });
});

describe('roomKeySender', () => {
  it('refuses a bad gapMs when made; keys go out 0 to 10,000 ms apart', async () => {
    const clock = new VirtualClock();
    const start = clock.now();
    const pressed: Array<[string, number]> = [];
    const room: DtmfRoom = {
      localParticipant: {
        publishDtmf: async (_code, digit) => {
          pressed.push([digit, clock.now() - start]);
        },
      },
    };
    for (const [bad, got] of [
      [-1, '-1'],
      [Number.NaN, 'NaN'],
      ['300', '"300"'],
      [10_001, '10001'],
      [30 * 86_400_000, '2592000000'],
    ] as const) {
      expect(() => roomKeySender(room, { gapMs: bad as number, clock })).toThrow(
        expect.objectContaining({
          code: 'invalid_argument',
          message: `roomKeySender: gapMs must be between 0 and 10000 ms (got ${got}).`,
        }),
      );
    }
    await roomKeySender(room, { gapMs: 0, clock }).send('12');
    expect(pressed).toEqual([
      ['1', 0],
      ['2', 0],
    ]);
    const slow = roomKeySender(room, { gapMs: 10_000, clock }).send('34');
    await clock.advance(10_000);
    await slow;
    expect(pressed.slice(2)).toEqual([
      ['3', 0],
      ['4', 10_000],
    ]);
  });
});
