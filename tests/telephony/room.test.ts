import { voice } from '@livekit/agents';
import { ParticipantKind, type Room, RoomEvent } from '@livekit/rtc-node';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { attachCall, type DtmfEvent } from '../../src/core/call.js';
import { collectDigits } from '../../src/telephony/digits.js';
import { type BindRoomOptions, bindRoom, type RoomLike } from '../../src/telephony/room.js';
import { dtmfStream } from '../../src/telephony/stream.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { FakeRoom } from './fake-room.js';
import { Runner } from './helpers.js';

const pin = collectDigits({ name: 'pin', prompt: 'Enter your PIN.', minDigits: 4, maxDigits: 4 });

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

/** A call in a fake room: Alice (SIP) dialled in, Bob (a transfer leg) joined after. */
async function startInRoom(options: BindRoomOptions = {}) {
  const room = new FakeRoom();
  room.join('sip_alice', ParticipantKind.SIP);
  room.join('sip_bob', ParticipantKind.SIP);
  const session = new voice.AgentSession({ llm: new ScriptedLLM() });
  const clock = new VirtualClock();
  const call = attachCall(session, { clock });
  caller = new SimulatedCaller(session, { clock });
  const unbind = bindRoom(session, room, options);
  const runner = new Runner(() => pin.create());
  await session.start({ agent: runner });
  await caller.settle();
  return { room, session, call, caller, runner, unbind };
}

describe('bindRoom', () => {
  it("accepts rtc-node's real Room (a type check)", () => {
    expectTypeOf<Room>().toExtend<RoomLike>();
  });

  it('takes DTMF from the caller only: the other participant is ignored', async () => {
    const { room, call, caller, runner } = await startInRoom();
    expect(call.callerIdentity).toBe('sip_alice');
    room.press('sip_bob', '9999');
    await caller.settle();
    expect(runner.outcomes).toEqual([]);
    room.press('sip_alice', '24');
    room.press('sip_bob', '1');
    room.press('sip_alice', '68');
    await caller.settle();
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '2468', attempts: 1, modality: 'dtmf' },
    ]);
  });

  it('honours callerIdentity', async () => {
    const { room, call, caller, runner } = await startInRoom({ callerIdentity: 'sip_bob' });
    expect(call.callerIdentity).toBe('sip_bob');
    room.press('sip_alice', '1111');
    room.press('sip_bob', '2222');
    await caller.settle();
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '2222', attempts: 1, modality: 'dtmf' },
    ]);
  });

  it('reads the key from the RFC 4733 code when the digit string is empty', async () => {
    const { room, caller, runner } = await startInRoom();
    const alice = room.remoteParticipants.get('sip_alice');
    for (const code of [1, 0, 9, 8]) room.emit(RoomEvent.DtmfReceived, code, '', alice);
    await caller.settle();
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '1098', attempts: 1, modality: 'dtmf' },
    ]);
  });

  it('hangs up when the caller leaves, not when someone else does', async () => {
    const { room, caller, runner, call } = await startInRoom();
    room.press('sip_alice', '12');
    room.leave('sip_bob');
    await caller.settle();
    expect(call.hungUp).toBeUndefined();
    room.leave('sip_alice');
    await caller.close();
    expect(runner.outcomes).toEqual([{ status: 'hangup', attempts: 0, reason: 'caller hung up' }]);
    expect(caller.isClosed).toBe(true);
  });

  it('notes speech input from final transcripts', async () => {
    const { room, caller, session, call } = await startInRoom();
    room.press('sip_alice', '1');
    await caller.settle();
    expect(call.lastInputModality).toBe('dtmf');
    session.emit(
      voice.AgentSessionEventTypes.UserInputTranscribed,
      voice.createUserInputTranscribedEvent({ transcript: 'one', isFinal: false }),
    );
    expect(call.lastInputModality).toBe('dtmf');
    session.emit(
      voice.AgentSessionEventTypes.UserInputTranscribed,
      voice.createUserInputTranscribedEvent({ transcript: 'one two', isFinal: true }),
    );
    expect(call.lastInputModality).toBe('speech');
  });

  it('adopts the first SIP or standard participant who presses a key when none was there', async () => {
    const room = new FakeRoom();
    const session = new voice.AgentSession({ llm: new ScriptedLLM() });
    const call = attachCall(session);
    const unbind = bindRoom(session, room);
    expect(call.callerIdentity).toBeUndefined();
    const keys: string[] = [];
    call.on('dtmf', (ev) => keys.push(`${ev.participant}:${ev.digit}`));
    room.join('agent_helper', ParticipantKind.AGENT);
    room.press('agent_helper', '5');
    room.join('web_carol', ParticipantKind.STANDARD);
    room.press('web_carol', '7');
    room.join('sip_dave', ParticipantKind.SIP);
    room.press('sip_dave', '8');
    expect(call.callerIdentity).toBe('web_carol');
    expect(keys).toEqual(['web_carol:7']);
    unbind();
    room.press('web_carol', '1');
    expect(keys).toEqual(['web_carol:7']);
    expect(room.listenerCount(RoomEvent.DtmfReceived)).toBe(0);
    expect(room.listenerCount(RoomEvent.ParticipantDisconnected)).toBe(0);
  });
});

describe('dtmfStream', () => {
  it('yields the caller keys in order and ends on hang-up', async () => {
    const session = new voice.AgentSession({ llm: new ScriptedLLM() });
    const room = new FakeRoom();
    room.join('sip_alice');
    room.join('sip_bob');
    bindRoom(session, room);
    const stream = dtmfStream(session);
    room.press('sip_alice', '12');
    room.press('sip_bob', '3');
    room.press('sip_alice', '#');
    const got: DtmfEvent[] = [];
    const reading = (async () => {
      for await (const ev of stream) got.push(ev);
    })();
    attachCall(session).hangup('caller hung up');
    await reading;
    expect(got.map((e) => e.digit)).toEqual(['1', '2', '#']);
    expect(got.every((e) => e.participant === 'sip_alice')).toBe(true);
  });

  it('ends when its signal aborts and keeps at most maxBuffered keys', async () => {
    const session = new voice.AgentSession({ llm: new ScriptedLLM() });
    const call = attachCall(session, { callerIdentity: 'me' });
    const controller = new AbortController();
    const stream = dtmfStream(session, { signal: controller.signal, maxBuffered: 2 });
    for (const k of '1234') call.pushDtmf(k, 'me');
    controller.abort();
    const got: string[] = [];
    for await (const ev of stream) got.push(ev.digit);
    expect(got).toEqual(['3', '4']);
  });
});
