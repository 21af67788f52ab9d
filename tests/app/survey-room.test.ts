/**
 * examples/survey's room entry as a LiveKit job against the simulated server
 * (tests/app/livekit): it ends the call after the last step, and resumes a dropped call
 * only for a caller whose trunk presented a valid number — never for a withheld one.
 */
import { ParticipantKind } from '@livekit/rtc-node';
import { describe, expect, it } from 'vitest';
import { createSurveyModel } from '../../examples/survey/demo.js';
import { CONSENT_QUESTION, SCORE_QUESTION, THANKS_LINE } from '../../examples/survey/index.js';
import { resumeKey, surveyRoomAgent } from '../../examples/survey/room.js';
import {
  type CheckpointKey,
  type CheckpointStore,
  MemoryCheckpointStore,
} from '../../src/flows/checkpoints/index.js';
import { ALICE, simulatedLiveKit, textCalls } from './helpers.js';
import { runJob, type SimParticipant } from './livekit/index.js';

const WELCOME_BACK = "Welcome back. We'll pick up where we left off: your score from 0 to 10.";

const { sim, cleanups } = simulatedLiveKit();
let count = 0;

/** A memory store that remembers under which keys calls were checkpointed. */
class KeyedStore extends MemoryCheckpointStore {
  readonly keys = new Set<string>();
  override async save(key: CheckpointKey, ...rest: [never, number]): Promise<number> {
    this.keys.add(key.callId);
    return super.save(key, ...rest);
  }
}

/** One survey call in a fresh room, `who` on the line. */
async function surveyCall(
  who: Partial<SimParticipant> & Pick<SimParticipant, 'identity'>,
  store: CheckpointStore,
) {
  count += 1;
  const name = `survey-${count}`;
  sim.rooms.join(name, who);
  const text = textCalls(createSurveyModel(), who.identity);
  cleanups.push(() => text.closeAll());
  const job = await runJob(
    sim,
    surveyRoomAgent({ ...text.options, checkpoints: async () => store }),
    name,
  );
  await job.entry;
  await text.caller.settle();
  return { name, job, caller: text.caller };
}

/** Consent given, then the caller hangs up before the score. */
async function dropAfterConsent(
  who: Partial<SimParticipant> & Pick<SimParticipant, 'identity'>,
  store: CheckpointStore,
) {
  const call = await surveyCall(who, store);
  expect(call.caller.agentLines).toEqual([CONSENT_QUESTION]);
  await call.caller.say('yes, sure');
  expect(call.caller.agentLines).toEqual([CONSENT_QUESTION, SCORE_QUESTION]);
  sim.rooms.leave(call.name, who.identity);
  expect(await call.job.ended).toBe('room disconnected');
}

describe('survey in a LiveKit room', () => {
  it('ends the call after its last step: the room is deleted, hanging up the caller', async () => {
    const { name, job, caller } = await surveyCall(ALICE, new KeyedStore());
    await caller.say('yes, sure');
    sim.rooms.press(name, 'sip_alice', '8');
    expect(await job.ended).toBe('room disconnected');
    expect(caller.agentLines).toEqual([CONSENT_QUESTION, SCORE_QUESTION, THANKS_LINE]);
    expect(sim.api.about(name).map((c) => c.method)).toEqual(['RoomService/DeleteRoom']);
    expect(sim.rooms.room(name).deleted).toBe(true);
  });

  it('resumes a dropped call for the same verified number, and only for it', async () => {
    const store = new KeyedStore();
    await dropAfterConsent(ALICE, store);
    expect([...store.keys]).toEqual(['tel:+14155550123']);

    const other = await surveyCall(
      { ...ALICE, identity: 'sip_bob', attributes: { 'sip.phoneNumber': '+14155550199' } },
      store,
    );
    expect(other.caller.agentLines).toEqual([CONSENT_QUESTION]);

    const back = await surveyCall(ALICE, store);
    expect(back.caller.agentLines).toEqual([WELCOME_BACK, SCORE_QUESTION]);
    sim.rooms.press(back.name, 'sip_alice', '7');
    expect(await back.job.ended).toBe('room disconnected');
    expect(back.caller.agentLines.at(-1)).toBe(THANKS_LINE);
  });

  it.each([
    ['withheld ("anonymous")', ParticipantKind.SIP, { 'sip.phoneNumber': 'anonymous' }],
    ['empty', ParticipantKind.SIP, { 'sip.phoneNumber': '' }],
    ['absent', ParticipantKind.SIP, {}],
    ['"Restricted"', ParticipantKind.SIP, { 'sip.phoneNumber': 'Restricted' }],
    ['national, no country code', ParticipantKind.SIP, { 'sip.phoneNumber': '4155550123' }],
    ['not a valid number', ParticipantKind.SIP, { 'sip.phoneNumber': '+1415' }],
    ['set by a web participant', ParticipantKind.STANDARD, { 'sip.phoneNumber': '+14155550123' }],
  ])(
    'never checkpoints nor resumes a caller whose number is %s',
    async (_what, kind, attributes) => {
      const store = new KeyedStore();
      const caller = { identity: 'caller_x', kind, attributes };
      await dropAfterConsent(caller, store);
      const again = await surveyCall(caller, store);
      expect(again.caller.agentLines).toEqual([CONSENT_QUESTION]);
      await again.caller.say('yes');
      expect(again.caller.agentLines).toEqual([CONSENT_QUESTION, SCORE_QUESTION]);
      // Nothing anyone could resume is stored: no checkpoint keyed on what the line presented.
      expect([...store.keys]).toEqual([]);
    },
  );

  it('keys resume on the verified caller number only', () => {
    expect(resumeKey(undefined)).toBeUndefined();
    expect(resumeKey({ session: {} as never })).toBeUndefined();
    expect(resumeKey({ session: {} as never, callerNumber: '+14155550123' })).toBe(
      'tel:+14155550123',
    );
  });
});
