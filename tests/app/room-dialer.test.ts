/**
 * Calling out from a LiveKit room, against the simulated server (tests/app/livekit): the
 * reminder example's room entry dials the patient through the server's SIP API (real
 * livekit-server-sdk, real HTTP, a JWT checked), reads who answered, and the keys a
 * switchboard asks for are published by the agent's own participant in the room where the
 * patient's SIP leg is. A dial the SIP service refuses comes back typed, with its SIP status.
 */
import { describe, expect, it } from 'vitest';
import { type ReminderCall, reminder } from '../../examples/reminder/index.js';
import reminderRoom from '../../examples/reminder/room.js';
import type { CallModule } from '../../src/app/module.js';
import { roomAgent } from '../../src/app/room.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { simulatedLiveKit, textCalls } from './helpers.js';
import { runJob } from './livekit/index.js';

const { sim, cleanups } = simulatedLiveKit();
let count = 0;

const APPOINTMENT = {
  patient: 'Sam Taylor',
  phone: '+15550123',
  extension: '204',
  when: 'Friday at 10:30',
};

/** Runs the reminder's room entry (outbound) in a fresh room, with a text session. */
async function dialOut(metadata = JSON.stringify(APPOINTMENT)) {
  count += 1;
  const name = `reminder-${count}`;
  sim.rooms.room(name);
  const agents: ReminderCall[] = [];
  const module: CallModule = {
    ...reminder,
    createCall: (setup) => {
      const call = reminder.createCall(setup);
      agents.push(call.agent as ReminderCall);
      return call;
    },
  };
  const text = textCalls(new ScriptedLLM(), 'callee');
  cleanups.push(() => text.closeAll());
  const saved = process.env.LIVEKIT_SIP_OUTBOUND_TRUNK;
  process.env.LIVEKIT_SIP_OUTBOUND_TRUNK = 'ST_outbound';
  cleanups.push(async () => {
    if (saved === undefined) delete process.env.LIVEKIT_SIP_OUTBOUND_TRUNK;
    else process.env.LIVEKIT_SIP_OUTBOUND_TRUNK = saved;
  });
  const job = await runJob(sim, roomAgent(module, { ...text.options, outbound: {} }), name, {
    metadata,
  });
  await job.entry;
  return { name, job, text, agent: () => agents[0]! };
}

describe('calling out from a room', () => {
  it('dials the patient through LiveKit SIP, waits for the answer, and reads who answered', async () => {
    const { name, job, text, agent } = await dialOut();
    const dial = await sim.api.next('SIP/CreateSIPParticipant', name);
    expect(dial.body).toMatchObject({
      sipTrunkId: 'ST_outbound',
      sipCallTo: '+15550123',
      roomName: name,
      participantIdentity: 'callee',
      waitUntilAnswered: true,
    });
    await sim.drained();
    await text.caller.settle();
    expect(sim.rooms.room(name).identities).toEqual(['callee']);
    await text.caller.say('Hello?');
    expect(agent().result.answeredBy).toBe('human');
    expect(text.caller.agentLines.at(-1)).toMatch(/reminder for Sam Taylor/);
    await text.caller.say('Yes.');
    expect(agent().result.outcome).toBe('confirmed');
    expect(await job.ended).toBe('room disconnected');
    expect(sim.rooms.room(name).deleted).toBe(true);
  });

  it('a busy line comes back typed with its SIP status, and the job ends without speaking', async () => {
    sim.api.onDial = () => ({ ok: false, status: 486, reason: 'Busy Here' });
    cleanups.push(async () => {
      sim.api.onDial = () => ({ ok: true });
    });
    const { job, text, agent } = await dialOut();
    expect(await job.ended).toBe('room disconnected');
    expect(agent().result).toMatchObject({
      outcome: 'not_reached',
      answeredBy: 'busy',
      reason: 'the line is busy (SIP 486 Busy Here)',
    });
    expect(text.caller.agentLines).toEqual([]);
  });

  it("keys the switchboard's extension on the agent's own participant in the patient's room", async () => {
    const { name, text, agent } = await dialOut();
    await sim.drained();
    await text.caller.settle();
    await text.caller.say(
      "Thank you for calling Maple Court. If you know your party's extension, you may dial it at any time.",
    );
    // The keys go out 300 ms apart on the call's clock.
    await text.clock.advance(1000, () => text.caller.settle());
    await sim.drained();
    const keys = sim.rooms
      .room(name)
      .published.filter((p) => p.kind === 'publishSipDtmf')
      .map((p) => ({ by: p.identity, ...(p.detail as { code: number; digit: string }) }));
    expect(keys.map((k) => [k.digit, k.code])).toEqual([
      ['2', 2],
      ['0', 0],
      ['4', 4],
    ]);
    expect(new Set(keys.map((k) => k.by))).toEqual(new Set(sim.rooms.room(name).agents));
    expect(agent().result.answeredBy).toBe('ivr');
  });

  it('a job dispatched without an appointment calls nobody', async () => {
    count += 1;
    const name = `reminder-${count}`;
    sim.rooms.room(name);
    const text = textCalls(new ScriptedLLM(), 'callee');
    cleanups.push(() => text.closeAll());
    const job = await runJob(sim, roomAgent(reminder, { ...text.options, outbound: {} }), name);
    await expect(job.entry).rejects.toThrow(/dispatched without an appointment/);
    expect(
      sim.api.callsTo('SIP/CreateSIPParticipant').filter((c) => c.body.roomName === name),
    ).toEqual([]);
  });

  it('the example worker is an outbound room entry', () => {
    expect(typeof reminderRoom.entry).toBe('function');
  });
});
