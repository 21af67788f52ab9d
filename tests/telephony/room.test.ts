/**
 * bindRoom and waitForCaller on a real rtc-node `Room`, connected to a simulated LiveKit
 * server: every key press, join, leave, attribute change and disconnect below reaches the
 * binding through rtc-node's own FFI event dispatch (tests/app/livekit), so argument order
 * and types are rtc-node's.
 */
import { voice } from '@livekit/agents';
import { DisconnectReason, ParticipantKind, type Room, RoomEvent } from '@livekit/rtc-node';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { attachCall, type DtmfEvent } from '../../src/core/call.js';
import { collectDigits } from '../../src/telephony/digits.js';
import {
  type BindRoomOptions,
  bindRoom,
  type RoomLike,
  waitForCaller,
} from '../../src/telephony/room.js';
import { dtmfStream } from '../../src/telephony/stream.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { connectRoom, SimulatedLiveKit } from '../app/livekit/index.js';
import { Runner } from './helpers.js';

const pin = collectDigits({ name: 'pin', prompt: 'Enter your PIN.', minDigits: 4, maxDigits: 4 });

let sim: SimulatedLiveKit;
let caller: SimulatedCaller | undefined;
let rooms: Room[] = [];
let count = 0;

beforeAll(async () => {
  sim = await new SimulatedLiveKit().start();
});
afterAll(async () => {
  await sim.close();
});
afterEach(async () => {
  await caller?.close();
  caller = undefined;
  for (const room of rooms) await room.disconnect();
  rooms = [];
});

/** A fresh room on the simulated server, with the agent's real Room connected to it. */
async function freshRoom(
  participants: Array<{ identity: string; kind?: ParticipantKind }> = [],
): Promise<{ name: string; room: Room }> {
  count += 1;
  const name = `room-${count}`;
  for (const p of participants) sim.rooms.join(name, p);
  const room = await connectRoom(sim, name);
  rooms.push(room);
  return { name, room };
}

/** A call in a room: Alice (SIP) dialled in, Bob (a transfer leg) joined after. */
async function startInRoom(options: BindRoomOptions = {}) {
  const { name, room } = await freshRoom([
    { identity: 'sip_alice', kind: ParticipantKind.SIP },
    { identity: 'sip_bob', kind: ParticipantKind.SIP },
  ]);
  const session = new voice.AgentSession({ llm: new ScriptedLLM() });
  const clock = new VirtualClock();
  const call = attachCall(session, { clock });
  caller = new SimulatedCaller(session, { clock });
  const unbind = bindRoom(session, room, options);
  const runner = new Runner(() => pin.create());
  await session.start({ agent: runner });
  await caller.settle();
  /** Delivers what the server sent, then lets the call react. */
  const settle = async () => {
    await sim.drained();
    await caller?.settle();
  };
  return { name, room, session, call, caller, runner, unbind, settle };
}

describe('bindRoom', () => {
  it("accepts rtc-node's real Room (a type check)", () => {
    expectTypeOf<Room>().toExtend<RoomLike>();
  });

  it('takes DTMF from the caller only: the other participant is ignored', async () => {
    const { name, call, runner, settle } = await startInRoom();
    expect(call.callerIdentity).toBe('sip_alice');
    sim.rooms.press(name, 'sip_bob', '9999');
    await settle();
    expect(runner.outcomes).toEqual([]);
    sim.rooms.press(name, 'sip_alice', '24');
    sim.rooms.press(name, 'sip_bob', '1');
    sim.rooms.press(name, 'sip_alice', '68');
    await settle();
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '2468', attempts: 1, modality: 'dtmf' },
    ]);
  });

  it('honours callerIdentity', async () => {
    const { name, call, runner, settle } = await startInRoom({ callerIdentity: 'sip_bob' });
    expect(call.callerIdentity).toBe('sip_bob');
    sim.rooms.press(name, 'sip_alice', '1111');
    sim.rooms.press(name, 'sip_bob', '2222');
    await settle();
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '2222', attempts: 1, modality: 'dtmf' },
    ]);
  });

  it('reads the key from the RFC 4733 code when the digit text is empty', async () => {
    const { name, runner, settle } = await startInRoom();
    for (const code of [1, 0, 9, 8]) sim.rooms.dtmf(name, 'sip_alice', code, '');
    await settle();
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '1098', attempts: 1, modality: 'dtmf' },
    ]);
  });

  it('ignores DTMF from a sender rtc-node does not know (it passes undefined) and keeps going', async () => {
    const { name, room, runner, call, settle } = await startInRoom();
    const seen: unknown[] = [];
    room.on(RoomEvent.DtmfReceived, (_code, _digit, participant) => seen.push(participant));
    sim.rooms.press(name, 'server-sdk', '12');
    await settle();
    expect(seen).toEqual([undefined, undefined]);
    expect(runner.outcomes).toEqual([]);
    expect(call.hungUp).toBeUndefined();
    sim.rooms.press(name, 'sip_alice', '4321');
    await settle();
    expect(runner.outcomes).toEqual([
      { status: 'ok', value: '4321', attempts: 1, modality: 'dtmf' },
    ]);
  });

  it('hangs up when the caller leaves, not when someone else does', async () => {
    const { name, runner, call, settle } = await startInRoom();
    sim.rooms.press(name, 'sip_alice', '12');
    sim.rooms.leave(name, 'sip_bob');
    await settle();
    expect(call.hungUp).toBeUndefined();
    sim.rooms.leave(name, 'sip_alice');
    await sim.drained();
    await caller?.close();
    expect(runner.outcomes).toEqual([{ status: 'hangup', attempts: 0, reason: 'caller hung up' }]);
    expect(caller?.isClosed).toBe(true);
  });

  it('does not take a callee leaving while the bot still dials them for a hang-up', async () => {
    const { name, call, settle } = await startInRoom({ callerIdentity: 'sip_alice' });
    const dialed = call.beginDial();
    sim.rooms.leave(name, 'sip_alice');
    await settle();
    expect(call.hungUp).toBeUndefined();
    dialed();
    expect(call.isDialing).toBe(false);
  });

  it('takes sip.callStatus = hangup on the caller as the hang-up, before they leave', async () => {
    const { name, runner, call, settle } = await startInRoom();
    sim.rooms.press(name, 'sip_alice', '1');
    sim.rooms.setAttributes(name, 'sip_bob', { 'sip.callStatus': 'hangup' });
    await settle();
    expect(call.hungUp).toBeUndefined();
    sim.rooms.setAttributes(name, 'sip_alice', { 'sip.callStatus': 'active' });
    await settle();
    expect(call.hungUp).toBeUndefined();
    sim.rooms.setAttributes(name, 'sip_alice', { 'sip.callStatus': 'hangup' });
    await sim.drained();
    await caller?.close();
    expect(runner.outcomes).toEqual([{ status: 'hangup', attempts: 0, reason: 'caller hung up' }]);
  });

  it.each([
    ['the room is deleted', DisconnectReason.ROOM_DELETED, 'ROOM_DELETED'],
    ['the connection is lost', DisconnectReason.SIGNAL_CLOSE, 'SIGNAL_CLOSE'],
  ])('ends the running task with hangup (not cancelled) when %s', async (_what, reason, name_) => {
    const { name, runner, call, settle } = await startInRoom();
    sim.rooms.press(name, 'sip_alice', '12');
    await settle();
    sim.rooms.disconnectAgents(sim.rooms.room(name), reason);
    await sim.drained();
    await caller?.close();
    const why = `the room disconnected (${name_})`;
    expect(call.hungUp?.reason).toBe(why);
    expect(runner.outcomes).toEqual([{ status: 'hangup', attempts: 0, reason: why }]);
  });

  it('notes speech input from final transcripts', async () => {
    const { name, session, call, settle } = await startInRoom();
    sim.rooms.press(name, 'sip_alice', '1');
    await settle();
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

  it('adopts the first caller-kind participant who presses a key when none was there, and unbinds', async () => {
    const { name, room } = await freshRoom();
    const session = new voice.AgentSession({ llm: new ScriptedLLM() });
    const call = attachCall(session);
    const unbind = bindRoom(session, room);
    expect(call.callerIdentity).toBeUndefined();
    const keys: string[] = [];
    call.on('dtmf', (ev) => keys.push(`${ev.participant}:${ev.digit}`));
    sim.rooms.join(name, { identity: 'agent_helper', kind: ParticipantKind.AGENT });
    sim.rooms.press(name, 'agent_helper', '5');
    sim.rooms.join(name, { identity: 'ingress_feed', kind: ParticipantKind.INGRESS });
    sim.rooms.press(name, 'ingress_feed', '6');
    sim.rooms.join(name, { identity: 'web_carol', kind: ParticipantKind.STANDARD });
    sim.rooms.press(name, 'web_carol', '7');
    sim.rooms.join(name, { identity: 'sip_dave', kind: ParticipantKind.SIP });
    sim.rooms.press(name, 'sip_dave', '8');
    await sim.drained();
    expect(call.callerIdentity).toBe('web_carol');
    expect(keys).toEqual(['web_carol:7']);
    unbind();
    sim.rooms.press(name, 'web_carol', '1');
    await sim.drained();
    expect(keys).toEqual(['web_carol:7']);
    for (const event of [
      RoomEvent.DtmfReceived,
      RoomEvent.ParticipantDisconnected,
      RoomEvent.ParticipantAttributesChanged,
      RoomEvent.Disconnected,
    ]) {
      expect(room.listenerCount(event)).toBe(0);
    }
  });
});

describe('waitForCaller', () => {
  it('picks a caller kind RoomIO links to, never an ingress or agent participant', async () => {
    const { room } = await freshRoom([
      { identity: 'ingress_feed', kind: ParticipantKind.INGRESS },
      { identity: 'agent_other', kind: ParticipantKind.AGENT },
      { identity: 'sip_alice', kind: ParticipantKind.SIP },
    ]);
    expect((await waitForCaller(room)).identity).toBe('sip_alice');
  });

  it('waits for the first caller to join', async () => {
    const { name, room } = await freshRoom([
      { identity: 'egress_rec', kind: ParticipantKind.EGRESS },
    ]);
    const found = waitForCaller(room);
    sim.rooms.join(name, { identity: 'ingress_feed', kind: ParticipantKind.INGRESS });
    sim.rooms.join(name, { identity: 'sip_alice', kind: ParticipantKind.SIP });
    expect((await found).identity).toBe('sip_alice');
  });

  it('gives up after its timeout, and when the room disconnects', async () => {
    const clock = new VirtualClock();
    const { name, room } = await freshRoom();
    const timedOut = waitForCaller(room, { timeoutMs: 5000, clock });
    await clock.advance(4999);
    const late = expect(timedOut).rejects.toMatchObject({
      code: 'timeout',
      message: 'No caller joined the room within 5000 ms.',
    });
    await clock.advance(1);
    await late;
    const gone = waitForCaller(room, { clock });
    sim.rooms.delete(name);
    await expect(gone).rejects.toMatchObject({
      code: 'cancelled',
      message: 'No caller joined: the room disconnected (ROOM_DELETED).',
    });
    expect(room.listenerCount(RoomEvent.ParticipantConnected)).toBe(0);
  });

  it('refuses a bad timeoutMs at once, even with a caller already there, naming its range', async () => {
    const clock = new VirtualClock();
    const { room } = await freshRoom([{ identity: 'sip_alice', kind: ParticipantKind.SIP }]);
    for (const [bad, got] of [
      [0, '0'],
      [-5, '-5'],
      [Number.NaN, 'NaN'],
      ['30s', '"30s"'],
      [900_001, '900001'],
      [30 * 86_400_000, '2592000000'],
    ] as const) {
      await expect(waitForCaller(room, { timeoutMs: bad as number, clock })).rejects.toMatchObject({
        code: 'invalid_argument',
        message: `waitForCaller: timeoutMs must be between 1000 and 900000 ms (got ${got}).`,
      });
    }
    expect(room.listenerCount(RoomEvent.ParticipantConnected)).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    for (const timeoutMs of [1_000, 900_000]) {
      expect((await waitForCaller(room, { timeoutMs, clock })).identity).toBe('sip_alice');
    }
    // The longest wait is waited in full.
    const { room: empty } = await freshRoom();
    const waiting = waitForCaller(empty, { timeoutMs: 900_000, clock });
    const late = expect(waiting).rejects.toMatchObject({ code: 'timeout' });
    await clock.advance(899_999);
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(1);
    await late;
  });
});

describe('dtmfStream', () => {
  it('yields the caller keys in order and ends on hang-up', async () => {
    const { name, room } = await freshRoom([
      { identity: 'sip_alice', kind: ParticipantKind.SIP },
      { identity: 'sip_bob', kind: ParticipantKind.SIP },
    ]);
    const session = new voice.AgentSession({ llm: new ScriptedLLM() });
    bindRoom(session, room);
    const stream = dtmfStream(session);
    sim.rooms.press(name, 'sip_alice', '12');
    sim.rooms.press(name, 'sip_bob', '3');
    sim.rooms.press(name, 'sip_alice', '#');
    await sim.drained();
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

  it('refuses a maxBuffered that would leave it uncapped or empty; the boundaries keep that many', async () => {
    const session = new voice.AgentSession({ llm: new ScriptedLLM() });
    const call = attachCall(session, { callerIdentity: 'me' });
    for (const [bad, got] of [
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      [0, '0'],
      [2.5, '2.5'],
      ['64', '"64"'],
      [10_001, '10001'],
    ] as const) {
      expect(() => dtmfStream(session, { maxBuffered: bad as number })).toThrow(
        expect.objectContaining({
          code: 'invalid_argument',
          message: `dtmfStream: maxBuffered must be a whole number from 1 to 10000 (got ${got}).`,
        }),
      );
    }
    for (const [maxBuffered, keys] of [
      [1, ['4']],
      [10_000, ['1', '2', '3', '4']],
    ] as const) {
      const controller = new AbortController();
      const stream = dtmfStream(session, { signal: controller.signal, maxBuffered });
      for (const k of '1234') call.pushDtmf(k, 'me');
      controller.abort();
      const got: string[] = [];
      for await (const ev of stream) got.push(ev.digit);
      expect(got).toEqual(keys);
    }
  });
});
