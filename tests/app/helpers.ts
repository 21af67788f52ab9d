import { voice } from '@livekit/agents';
import { ParticipantKind } from '@livekit/rtc-node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { RoomAgentOptions } from '../../src/app/room.js';
import type { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { SimulatedLiveKit } from './livekit/index.js';

/** The phone caller of these tests, as LiveKit SIP presents them. */
export const ALICE = {
  identity: 'sip_alice',
  kind: ParticipantKind.SIP,
  attributes: { 'sip.phoneNumber': '+14155550123', 'sip.callStatus': 'active' },
};

/**
 * Room-entry options that give each job a text-only session on `model`, driven by a
 * SimulatedCaller (speech as text turns, on a virtual clock): no audio tracks, so no
 * speech models. Everything else about the room entry is its own.
 */
export function textCalls(model: ScriptedLLM, identity = ALICE.identity) {
  const clock = new VirtualClock();
  const callers: SimulatedCaller[] = [];
  const options: RoomAgentOptions = {
    clock,
    createSession: (ctx) => {
      const session = new voice.AgentSession({ llm: model });
      // The call id roomAgent gives a call (its room's sid), so ids and keys are the entry's own.
      callers.push(
        new SimulatedCaller(session, { clock, identity, callId: ctx.job.room?.sid || ctx.job.id }),
      );
      model.bind(session);
      return session;
    },
    inputOptions: { audioEnabled: false },
    outputOptions: { audioEnabled: false, transcriptionEnabled: false },
  };
  return {
    options,
    clock,
    /** The caller of the latest call. */
    get caller(): SimulatedCaller {
      const c = callers.at(-1);
      if (!c) throw new Error('no call has started');
      return c;
    },
    async closeAll() {
      for (const c of callers) await c.close();
    },
  };
}

/**
 * A simulated LiveKit server for one test file: started before its tests, closed after;
 * `cleanups` registered by a test run after it.
 */
export function simulatedLiveKit(): {
  sim: SimulatedLiveKit;
  cleanups: Array<() => Promise<void>>;
} {
  const sim = new SimulatedLiveKit();
  const cleanups: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    await sim.start();
  });
  afterAll(async () => {
    await sim.close();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });
  return { sim, cleanups };
}
