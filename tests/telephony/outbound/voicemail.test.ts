// Calling out in text mode: who answered (a person, a voicemail, a full mailbox, an IVR,
// nobody) and leaving a voicemail after the beep, after silence, never on a full mailbox,
// and what happens when the line drops. The simulated caller plays the far end: its words
// are the far end's transcripts, its `tone` the beep the audio tap would report.
import type { voice } from '@livekit/agents';
import type { CreateSipParticipantOptions } from 'livekit-server-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { callOut } from '../../../src/telephony/outbound/call-out.js';
import { RecordingDialer, SipDialer } from '../../../src/telephony/outbound/dialer.js';
import { farEndOf } from '../../../src/telephony/outbound/far-end.js';
import { leaveVoicemail } from '../../../src/telephony/outbound/voicemail-drop.js';
import type { SimulatedCaller } from '../../../src/testing/simulated-caller.js';
import { MESSAGE, Reminder, startReminder } from './helpers.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

const GREETING = "Hi, you've reached Sam. Please leave a message after the tone.";

describe('callOut: who answered', () => {
  it('a person saying "hello?" is a person, never a voicemail, and nothing is left', async () => {
    const agent = new Reminder();
    caller = await startReminder(agent);
    expect(agent.dialer.requests).toEqual([{ to: '+15550123' }]);
    await caller.say('Hello?');
    expect(agent.answered).toMatchObject({
      status: 'human',
      greeting: 'Hello?',
      participantIdentity: 'callee',
    });
    expect(agent.voicemail).toBeUndefined();
    expect(caller.agentLines).toEqual([]);
  });

  it('an IVR menu is an IVR', async () => {
    const agent = new Reminder();
    caller = await startReminder(agent);
    await caller.say('Thank you for calling Maple Court. For reception, press 1.');
    expect(agent.answered).toMatchObject({ status: 'ivr', reason: 'heard "press 1"' });
  });

  it('a greeting that says nothing decisive settles as answered once the line is quiet', async () => {
    const agent = new Reminder({ call: { decideAfterMs: 3000 } });
    caller = await startReminder(agent);
    await caller.say('Maple Court.');
    await caller.silence(2999);
    expect(agent.answered).toBeUndefined();
    await caller.silence(1);
    expect(agent.answered).toMatchObject({
      status: 'answered',
      reason: 'the greeting did not say who answered',
    });
  });

  it('silence after the answer settles as answered after noSpeechMs', async () => {
    const agent = new Reminder({ call: { noSpeechMs: 5000 } });
    caller = await startReminder(agent);
    await caller.silence(5000);
    expect(agent.answered).toMatchObject({
      status: 'answered',
      reason: 'no words within 5000 ms of the answer',
    });
  });

  it('sound on the line not yet placed as speech defers "no words"; the words then decide', async () => {
    const agent = new Reminder({ call: { noSpeechMs: 5000 } });
    caller = await startReminder(agent);
    await caller.silence(4000);
    // The audio tap heard sound that speech detection has not reported (it runs behind).
    farEndOf(caller.session).heardSound(500);
    await caller.silence(4000);
    expect(agent.answered).toBeUndefined();
    await caller.say('Hello?');
    expect(agent.answered).toMatchObject({ status: 'human', greeting: 'Hello?' });
  });

  it.each([
    [486, 'Busy Here', 'busy'],
    [603, 'Decline', 'busy'],
    [480, 'Temporarily Unavailable', 'no_answer'],
    [404, 'Not Found', 'failed'],
  ] as const)('a %i reads as %s, with the SIP status', async (code, phrase, status) => {
    const agent = new Reminder({
      answer: (to) => ({
        status: code === 486 || code === 603 ? 'busy' : code === 480 ? 'no_answer' : 'failed',
        to,
        sipStatusCode: code,
        sipStatus: phrase,
        reason: 'x',
      }),
    });
    caller = await startReminder(agent);
    expect(agent.answered).toMatchObject({ status, sipStatusCode: code, sipStatus: phrase });
  });
});

describe('callOut and SipDialer options', () => {
  it('callOut refuses a bad wait or ringing timeout before dialling, naming option and range', async () => {
    const session = {} as voice.AgentSession; // never reached: the options are checked first
    const dialer = new RecordingDialer();
    for (const [options, message] of [
      [{ noSpeechMs: -1 }, 'noSpeechMs must be between 1000 and 60000 ms (got -1)'],
      [{ noSpeechMs: 60_001 }, 'noSpeechMs must be between 1000 and 60000 ms (got 60001)'],
      [{ decideAfterMs: Number.NaN }, 'decideAfterMs must be between 500 and 30000 ms (got NaN)'],
      [{ decideAfterMs: '3000' }, 'decideAfterMs must be between 500 and 30000 ms (got "3000")'],
      [
        { maxDetectMs: 30 * 86_400_000 },
        'maxDetectMs must be between 1000 and 120000 ms (got 2592000000)',
      ],
      [
        { ringingTimeoutMs: 1_500 },
        'ringingTimeoutMs must be a whole number of seconds from 1000 to 600000 ms (got 1500)',
      ],
      [
        { ringingTimeoutMs: 601_000 },
        'ringingTimeoutMs must be a whole number of seconds from 1000 to 600000 ms (got 601000)',
      ],
    ] as const) {
      await expect(
        callOut(session, { dialer, to: '+15550123', ...(options as object) }),
      ).rejects.toMatchObject({ code: 'invalid_argument', message: `callOut: ${message}.` });
    }
    expect(dialer.requests).toEqual([]);
  });

  it('callOut waits the shortest and the longest accepted values in full', async () => {
    const shortest = new Reminder({
      call: {
        noSpeechMs: 1_000,
        decideAfterMs: 500,
        maxDetectMs: 120_000,
        ringingTimeoutMs: 1_000,
      },
    });
    caller = await startReminder(shortest);
    expect(shortest.dialer.requests).toEqual([{ to: '+15550123', ringingTimeoutMs: 1_000 }]);
    await caller.silence(999);
    expect(shortest.answered).toBeUndefined();
    await caller.silence(1);
    expect(shortest.answered).toMatchObject({
      status: 'answered',
      reason: 'no words within 1000 ms of the answer',
    });
    await caller.close();
    const longest = new Reminder({
      call: {
        noSpeechMs: 60_000,
        decideAfterMs: 30_000,
        maxDetectMs: 1_000,
        ringingTimeoutMs: 600_000,
      },
    });
    caller = await startReminder(longest);
    await caller.silence(999);
    expect(longest.answered).toBeUndefined();
    await caller.silence(1);
    expect(longest.answered).toMatchObject({
      status: 'answered',
      reason: 'no clear verdict within 1000 ms of the answer',
    });
  });

  it('SipDialer refuses a bad maxCallDurationMs when built, and sends LiveKit whole seconds', async () => {
    const sent: CreateSipParticipantOptions[] = [];
    const dialer = (maxCallDurationMs: unknown) =>
      new SipDialer({
        roomName: 'r',
        trunkId: 'ST_out',
        maxCallDurationMs: maxCallDurationMs as number,
        createClient: () => ({
          createSipParticipant: async (_trunk, _number, _room, opts) => {
            sent.push(opts!);
            return { participantIdentity: 'callee' } as never;
          },
        }),
      });
    for (const [bad, got] of [
      [0, '0'],
      [-1_000, '-1000'],
      [Number.NaN, 'NaN'],
      [1_500, '1500'],
      ['60000', '"60000"'],
      [86_401_000, '86401000'],
    ] as const) {
      expect(() => dialer(bad)).toThrow(
        expect.objectContaining({
          code: 'invalid_argument',
          message: `SipDialer: maxCallDurationMs must be a whole number of seconds from 1000 to 86400000 ms (got ${got}): LiveKit SIP counts call length in whole seconds.`,
        }),
      );
    }
    expect(await dialer(1_000).dial({ to: '+15550123', ringingTimeoutMs: 1_000 })).toMatchObject({
      status: 'answered',
    });
    expect(
      await dialer(86_400_000).dial({ to: '+15550123', ringingTimeoutMs: 600_000 }),
    ).toMatchObject({ status: 'answered' });
    expect(sent).toMatchObject([
      { maxCallDuration: 1, ringingTimeout: 1 },
      { maxCallDuration: 86_400, ringingTimeout: 600 },
    ]);
    // A dial keeps its contract (a typed result, never a throw) and says what is wrong.
    expect(await dialer(undefined).dial({ to: '+15550123', ringingTimeoutMs: 2_500 })).toEqual({
      status: 'failed',
      to: '+15550123',
      reason:
        'SipDialer: ringingTimeoutMs must be a whole number of seconds from 1000 to 600000 ms (got 2500): LiveKit SIP counts ringing in whole seconds.',
    });
    expect(sent).toHaveLength(2);
  });
});

describe('leaveVoicemail', () => {
  it('refuses a bad wait or beep option before the call waits on it, naming option and range', async () => {
    const session = {} as voice.AgentSession; // never reached: the options are checked first
    await expect(leaveVoicemail(session, MESSAGE, {}, { quietMs: -1 })).rejects.toMatchObject({
      code: 'invalid_argument',
      message: 'leaveVoicemail: quietMs must be between 100 and 60000 ms (got -1).',
    });
    await expect(
      leaveVoicemail(session, MESSAGE, {}, { maxWaitMs: 3_000_000_000 }),
    ).rejects.toMatchObject({ code: 'invalid_argument', details: { option: 'maxWaitMs' } });
    await expect(
      leaveVoicemail(session, MESSAGE, {}, { beep: { minHz: Number.NaN } }),
    ).rejects.toMatchObject({
      message: 'leaveVoicemail: beep.minHz must be between 50 and 8000 (got NaN).',
    });
    await expect(
      leaveVoicemail(session, MESSAGE, {}, { beep: { minHz: 2_000, maxHz: 1_000 } }),
    ).rejects.toMatchObject({
      message:
        'leaveVoicemail: beep.minHz (2000) is above beep.maxHz (1000), so no tone would count as the beep.',
    });
  });

  it('speaks the message once, right after the beep, and hangs up', async () => {
    const agent = new Reminder();
    caller = await startReminder(agent);
    await caller.say(GREETING);
    expect(agent.answered).toMatchObject({ status: 'voicemail', canLeaveMessage: true });
    await caller.silence(600);
    expect(caller.agentLines).toEqual([]);
    await caller.tone(1000, 400);
    expect(caller.agentLines).toEqual([MESSAGE]);
    expect(agent.voicemail).toMatchObject({ status: 'left', message: MESSAGE, beep: { hz: 1000 } });
    expect(caller.endedBy).toBe('bot');
  });

  it('with no beep, speaks once the greeting has ended and the line stayed quiet', async () => {
    const agent = new Reminder({ voicemail: { quietMs: 2500 } });
    caller = await startReminder(agent);
    await caller.say("Hi, you've reached Sam. I can't take your call right now.");
    await caller.say('Leave your name and number.');
    await caller.silence(2499);
    expect(caller.agentLines).toEqual([]);
    await caller.silence(1);
    expect(caller.agentLines).toEqual([MESSAGE]);
    expect(agent.voicemail).toMatchObject({
      status: 'no_beep',
      reason: 'no beep; the line was quiet for 2500 ms',
    });
  });

  it('a tone that is no beep (too high, too short) is not taken for one', async () => {
    const agent = new Reminder({ voicemail: { quietMs: 2500 } });
    caller = await startReminder(agent);
    await caller.say(GREETING);
    await caller.tone(3000, 400);
    await caller.tone(1000, 100);
    expect(caller.agentLines).toEqual([]);
    await caller.tone(850, 250);
    expect(agent.voicemail).toMatchObject({ status: 'left', beep: { hz: 850, durationMs: 250 } });
  });

  it('a full mailbox gets no message, and the call ends', async () => {
    const agent = new Reminder();
    caller = await startReminder(agent);
    await caller.say(
      'The mailbox of the person you are calling is full and cannot accept new messages. Goodbye.',
    );
    expect(agent.answered).toMatchObject({ status: 'voicemail', canLeaveMessage: false });
    expect(agent.voicemail).toMatchObject({ status: 'mailbox_full' });
    expect(caller.agentLines).toEqual([]);
    expect(caller.endedBy).toBe('bot');
  });

  it('a mailbox that says it is full after the greeting gets no message either', async () => {
    const agent = new Reminder();
    caller = await startReminder(agent);
    await caller.say("You've reached the voicemail of Sam.");
    await caller.say('Sorry, this mailbox is full.');
    expect(agent.voicemail).toMatchObject({
      status: 'mailbox_full',
      heard: "You've reached the voicemail of Sam. Sorry, this mailbox is full.",
    });
    expect(caller.agentLines).toEqual([]);
  });

  it('hangs up without speaking when the far end hangs up before the beep', async () => {
    const agent = new Reminder();
    caller = await startReminder(agent);
    await caller.say(GREETING);
    await caller.hangup();
    expect(agent.voicemail).toEqual({ status: 'hangup', reason: 'caller hung up', spoken: false });
    expect(caller.agentLines).toEqual([]);
  });

  it('speaks after maxWaitMs when the greeting never ends', async () => {
    const agent = new Reminder({ voicemail: { maxWaitMs: 20_000, quietMs: 2500 } });
    caller = await startReminder(agent);
    await caller.say(GREETING);
    // The far end keeps talking: every utterance re-arms the quiet wait, until the bot has
    // left its message and hung up.
    for (let i = 0; i < 10 && !caller.isClosed; i++) {
      await caller.silence(2000);
      if (!caller.isClosed) await caller.say('Your call is important to us.');
    }
    expect(caller.agentLines).toEqual([MESSAGE]);
    expect(caller.endedBy).toBe('bot');
    expect(agent.voicemail).toMatchObject({
      status: 'no_beep',
      reason: 'the greeting had not ended after 20000 ms',
    });
  });
});
