/**
 * examples/ivr-bank's room entry, run as a LiveKit job against a simulated server: a real
 * rtc-node Room, upstream's JobContext / RoomIO / WarmTransferTask, livekit-server-sdk's
 * SIP and room clients. Only the server is simulated (tests/app/livekit), and speech is
 * text (a SimulatedCaller, no audio tracks).
 */
import { once } from 'node:events';
import { type VAD, voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import * as silero from '@livekit/agents-plugin-silero';
import { ParticipantKind } from '@livekit/rtc-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bankScriptedModel } from '../../examples/ivr-bank/demo.js';
import { type BankResult, ivrBank, SERVICE_DESK } from '../../examples/ivr-bank/index.js';
import type { CallInstance, CallModule } from '../../src/app/module.js';
import { type RoomAgentOptions, roomAgent } from '../../src/app/room.js';
import { lastTransfer } from '../../src/telephony/transfer.js';
import { type FakeOpenAIServer, startFakeOpenAI } from '../../src/testing/openai-server.js';
import {
  ScriptedLLM,
  type ScriptedRequest,
  type ScriptStep,
} from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { ALICE, simulatedLiveKit, textCalls } from './helpers.js';
import { runJob } from './livekit/index.js';

const MENU =
  'Welcome to Taskline Bank. For your balance, press 1. For a lost or stolen card, press 2. ' +
  'For an agent, press 3. To hear these options again, press star.';
const PIN_PROMPT = 'Please enter your 4-digit PIN.';
const HOLD = 'Please hold while I transfer you to a colleague.';
const SORRY = 'Sorry I could not help. Goodbye.';
const SUMMARY = 'Caller asked to talk to someone. Captured so far: main menu: an agent.';

const { sim, cleanups } = simulatedLiveKit();
let count = 0;

afterEach(() => {
  sim.api.moveImplemented = true;
  sim.api.onTransfer = () => ({ ok: true });
  sim.api.onDial = () => ({ ok: true });
  sim.api.refuse = () => false;
});

/** The API calls about room `name`, as "Method room". */
function apiLog(name: string): string[] {
  return sim.api.about(name).map((c) => `${c.method} ${String(c.body.room ?? c.body.roomName)}`);
}

/** Waits for the job to end because the bot deleted its room (which hangs up the caller). */
async function endedByDeletingRoom(job: { ended: Promise<string> }, name: string) {
  expect(await job.ended).toBe('room disconnected');
  expect(apiLog(name).at(-1)).toBe(`RoomService/DeleteRoom ${name}`);
  expect(sim.rooms.room(name).deleted).toBe(true);
}

/** ivrBank, keeping each call it creates (to read its typed result). */
function recorded(): { module: CallModule<BankResult>; calls: CallInstance<BankResult>[] } {
  const calls: CallInstance<BankResult>[] = [];
  return {
    calls,
    module: {
      ...ivrBank,
      createCall: (setup) => {
        const call = ivrBank.createCall(setup);
        calls.push(call);
        return call;
      },
    },
  };
}

/**
 * Starts the bank line in a fresh room with Alice on the line; `model` answers the bank's
 * menu and, in a warm transfer, the briefing of the human.
 */
async function startBank(
  options: Omit<RoomAgentOptions, 'createSession'> = {},
  model: ScriptedLLM = bankScriptedModel(),
  callerKind = ParticipantKind.SIP,
) {
  count += 1;
  const name = `bank-${count}`;
  sim.rooms.join(name, { ...ALICE, kind: callerKind });
  const text = textCalls(model);
  cleanups.push(() => text.closeAll());
  const { module, calls } = recorded();
  const job = await runJob(sim, roomAgent(module, { ...text.options, ...options }), name);
  await job.entry;
  await text.caller.settle();
  expect(text.caller.agentLines).toEqual([MENU]);
  return {
    name,
    job,
    caller: text.caller,
    clock: text.clock,
    result: () => calls[0]!.result(),
  };
}

describe('ivr-bank in a LiveKit room: transfers keep the caller', () => {
  it('cold: the caller is REFERred to the desk over SIP; the room is not deleted and the bot leaves', async () => {
    const { name, job, caller, result } = await startBank({
      transfer: { to: 'tel:+1-415-555-0100', cold: { ringingTimeoutMs: 20_000 } },
    });
    await caller.say('I need to talk to someone');
    expect(await job.ended).toBe('call transferred');
    expect(caller.agentLines).toEqual([MENU, HOLD]);
    expect(result().outcome).toBe('transferred');
    expect(sim.api.about(name).map((c) => c.body)).toEqual([
      {
        roomName: name,
        participantIdentity: 'sip_alice',
        transferTo: 'tel:+14155550100',
        playDialtone: true,
        headers: { 'X-Taskline-Summary': SUMMARY },
        ringingTimeout: '20s',
      },
    ]);
    expect(apiLog(name)).toEqual([`SIP/TransferSIPParticipant ${name}`]);
    expect(sim.rooms.room(name).deleted).toBe(false);
    expect(sim.rooms.room(name).agents.size).toBe(0);
    expect(job.shutdownReason).toBe('call transferred');
  });

  it('cold: the room stays even when the caller leg leaves before the transfer API answers', async () => {
    sim.api.onTransfer = () => ({ ok: true, leaveFirst: true });
    const { name, job, caller, result } = await startBank();
    await caller.say('can I talk to a person');
    expect(await job.ended).toBe('call transferred');
    expect(result().outcome).toBe('transferred');
    expect(sim.api.about(name).map((c) => [c.method, c.body.transferTo])).toEqual([
      ['SIP/TransferSIPParticipant', `tel:${SERVICE_DESK}`],
    ]);
    expect(sim.rooms.room(name).deleted).toBe(false);
  });

  /** A warm transfer up to the merge: the human briefed, then moved into the caller's room. */
  async function warmTransfer() {
    const briefings: ScriptedRequest[] = [];
    const model = bankModel((req) => {
      briefings.push(req);
      return /put (them|her) through/i.test(req.lastUserText ?? '')
        ? { toolCalls: [{ name: 'connect_to_caller' }] }
        : { toolCalls: [] };
    });
    const call = await startBank(
      {
        transfer: {
          mode: 'warm',
          to: 'tel:+1-415-555-0100',
          warm: { sipTrunkId: 'ST_desk', holdAudio: null, ringingTimeoutMs: 20_000 },
        },
      },
      model,
    );
    const { name, caller } = call;
    const closed = once(caller.session, voice.AgentSessionEventTypes.Close);
    const saying = caller.say('I need to talk to someone');
    const consult = `${name}-human-agent`;
    const dial = await sim.api.next('SIP/CreateSIPParticipant', consult);
    await sim.drained();
    // The briefing model is not asked before the human speaks (an answer may be voicemail).
    expect(briefings).toEqual([]);
    sim.rooms.sendText(consult, 'human-agent-sip', 'Hello, service desk.');
    await sim.drained();
    sim.rooms.sendText(consult, 'human-agent-sip', 'Got it, put them through.');
    await closed;
    await saying;
    // The consultation room goes (upstream deletes it once the human is moved).
    await sim.api.next('RoomService/DeleteRoom', consult);
    return { ...call, consult, dial, briefings };
  }

  it('warm: the human is briefed with the conversation, merged into the room, and stays with the caller', async () => {
    const { name, consult, dial, briefings, job, caller, result } = await warmTransfer();
    expect(dial.body).toEqual({
      sipTrunkId: 'ST_desk',
      sipCallTo: '+14155550100',
      roomName: consult,
      participantIdentity: 'human-agent-sip',
      waitUntilAnswered: true,
      ringingTimeout: '20s',
    });
    const briefing = briefings[0]!;
    expect(briefing.lastUserText).toBe('Hello, service desk.');
    const prompt = briefing.messages.find((m) => m.role === 'system')?.text ?? '';
    expect(prompt).toContain(`Assistant: ${MENU}\nCaller: I need to talk to someone\n`);
    expect(prompt).toContain(
      `Summary prepared by the automated line (values shown as * are private): ${SUMMARY}`,
    );
    expect(briefings.at(-1)?.lastUserText).toBe('Got it, put them through.');

    expect(result().outcome).toBe('transferred');
    expect(caller.agentLines).toEqual([MENU, HOLD]);
    expect(sim.api.about(name).map((c) => c.body)).toEqual([
      { room: consult, identity: 'human-agent-sip', destinationRoom: name },
    ]);
    // The caller's room stays, with Alice and the human in it, and the bot (silent) until
    // one of them hangs up.
    expect(sim.rooms.room(consult).deleted).toBe(true);
    expect(sim.rooms.room(name).identities).toEqual(['sip_alice', 'human-agent-sip']);
    expect(sim.rooms.room(name).deleted).toBe(false);
    expect([...sim.rooms.room(name).agents]).toEqual([job.ctx.info.acceptArguments.identity]);
    expect(job.shutdownReason).toBeUndefined();

    // When one of them hangs up, upstream's transfer task ends the room for the other.
    sim.rooms.leave(name, 'human-agent-sip');
    await endedByDeletingRoom(job, name);
  });

  it('warm: if the room cannot be ended after a party hangs up, the bot still leaves (bounded)', async () => {
    const { name, job, clock } = await warmTransfer();
    sim.api.refuse = (call) => call.method === 'RoomService/DeleteRoom' && call.body.room === name;
    sim.rooms.leave(name, 'sip_alice');
    await sim.api.next('RoomService/DeleteRoom', name);
    await sim.drained();
    await clock.advance(9_999);
    expect(job.shutdownReason).toBeUndefined();
    await clock.advance(1);
    expect(await job.ended).toBe('transferred call ended');
    expect(sim.rooms.room(name).deleted).toBe(false);
    expect(sim.rooms.room(name).agents.size).toBe(0);
  });

  /**
   * A warm transfer (60 s bound) up to the server's answer to the move: the caller asked for
   * someone, the desk was dialled and said yes, and the briefing model asked to connect.
   */
  async function warmMoveRefused() {
    const model = bankModel((req) => {
      if (req.lastToolOutput) return {}; // the move failed: nothing more to say
      return /put (them|her) through/i.test(req.lastUserText ?? '')
        ? { toolCalls: [{ name: 'connect_to_caller' }] }
        : { toolCalls: [] };
    });
    const call = await startBank(
      {
        transfer: {
          mode: 'warm',
          warm: { sipTrunkId: 'ST_desk', holdAudio: null, consultTimeoutMs: 60_000 },
        },
      },
      model,
    );
    const saying = call.caller.say('I need to talk to someone');
    const consult = `${call.name}-human-agent`;
    await sim.api.next('SIP/CreateSIPParticipant', consult);
    await sim.drained();
    sim.rooms.sendText(consult, 'human-agent-sip', 'Got it, put them through.');
    await sim.api.next('RoomService/MoveParticipant', consult);
    return { ...call, saying, consult };
  }

  it('warm: a server that cannot move the human (self-hosted: MoveParticipant not implemented) ends the transfer at the refusal: the caller is told, the human is hung up', async () => {
    sim.api.moveImplemented = false;
    const { name, job, caller, result, saying, consult } = await warmMoveRefused();
    // No clock advance: the refusal is final on this server, so the hold ends now, not at
    // consultTimeoutMs (the move cannot succeed on a retry).
    await saying;
    await endedByDeletingRoom(job, name);
    expect(caller.agentLines).toEqual([MENU, HOLD, SORRY]);
    expect(result().outcome).toBe('ended');
    const transfer = await lastTransfer(caller.session);
    expect(transfer).toMatchObject({ ok: false, mode: 'warm' });
    expect(transfer?.ok === false && transfer.reason).toMatch(
      /^the server cannot move the human into the caller's room \(a self-hosted livekit-server does not implement MoveParticipant/,
    );
    // The consultation room is deleted, which ends the human's call.
    await sim.api.next('RoomService/DeleteRoom', consult);
    expect(sim.rooms.room(consult).deleted).toBe(true);
  });

  it('warm: a move refused for a reason that may pass (an outage) keeps the caller on hold only until consultTimeoutMs', async () => {
    sim.api.refuse = (call) => call.method === 'RoomService/MoveParticipant';
    const { name, job, caller, clock, result, saying, consult } = await warmMoveRefused();
    await sim.drained();
    // Upstream hands the refusal back to the briefing model and waits: the hold is bounded.
    await clock.advance(59_999);
    expect(caller.agentLines).toEqual([MENU, HOLD]);
    expect(sim.rooms.room(consult).deleted).toBe(false);
    await clock.advance(1);
    await saying;
    await endedByDeletingRoom(job, name);
    expect(caller.agentLines).toEqual([MENU, HOLD, SORRY]);
    expect(result().outcome).toBe('ended');
    const transfer = await lastTransfer(caller.session);
    expect(transfer?.ok === false && transfer.reason).toMatch(
      /^the warm transfer did not complete within 60 s/,
    );
    await sim.api.next('RoomService/DeleteRoom', consult);
    expect(sim.rooms.room(consult).deleted).toBe(true);
  });

  it('warm: a busy desk is a failed transfer: the caller hears it and the call ends normally', async () => {
    sim.api.onDial = () => ({ ok: false, status: 486, reason: 'Busy Here' });
    const { name, job, caller, result } = await startBank(
      { transfer: { mode: 'warm', warm: { sipTrunkId: 'ST_desk', holdAudio: null } } },
      bankModel(() => ({ toolCalls: [] })),
    );
    await caller.say('I need to talk to someone');
    await endedByDeletingRoom(job, name);
    expect(caller.agentLines).toEqual([MENU, HOLD, SORRY]);
    expect(result().outcome).toBe('ended');
    // Upstream tears the consultation room down after the failed dial.
    const consult = `${name}-human-agent`;
    await sim.api.next('RoomService/DeleteRoom', consult);
    expect(apiLog(consult)).toEqual([
      `SIP/CreateSIPParticipant ${consult}`,
      `RoomService/DeleteRoom ${consult}`,
    ]);
  });
});

describe('ivr-bank in a LiveKit room: a call that cannot transfer says so', () => {
  it('warm with no outbound trunk configured: no pretend transfer, the caller is told', async () => {
    const trunk = process.env.LIVEKIT_SIP_OUTBOUND_TRUNK;
    delete process.env.LIVEKIT_SIP_OUTBOUND_TRUNK;
    try {
      const before = sim.api.calls.length;
      const { name, job, caller, result } = await startBank({ transfer: { mode: 'warm' } });
      await caller.say('I need to talk to someone');
      await endedByDeletingRoom(job, name);
      expect(caller.agentLines).toEqual([MENU, HOLD, SORRY]);
      expect(result().outcome).toBe('ended');
      expect(sim.api.calls.slice(before).map((c) => c.method)).toEqual(['RoomService/DeleteRoom']);
    } finally {
      if (trunk !== undefined) process.env.LIVEKIT_SIP_OUTBOUND_TRUNK = trunk;
    }
  });

  it('cold for a caller who is not on a phone line (a web participant)', async () => {
    const before = sim.api.calls.length;
    const { name, job, caller, result } = await startBank(
      {},
      bankScriptedModel(),
      ParticipantKind.STANDARD,
    );
    await caller.say('I need to talk to someone');
    await endedByDeletingRoom(job, name);
    expect(caller.agentLines).toEqual([MENU, HOLD, SORRY]);
    expect(result().outcome).toBe('ended');
    expect(sim.api.calls.slice(before).map((c) => c.method)).toEqual(['RoomService/DeleteRoom']);
  });
});

describe('ivr-bank in a LiveKit room: keys, hang-ups and the real OpenAI plugin', () => {
  let vad: VAD;
  let server: FakeOpenAIServer;

  beforeAll(async () => {
    vad = await silero.VAD.load();
    server = await startFakeOpenAI(() => ({ toolCalls: [{ name: 'submit', args: { key: '1' } }] }));
  });
  afterAll(async () => {
    await server.close();
  });

  /** The bank session of room.ts, its OpenAI plugins pointed at the local server. */
  async function startWithPlugins() {
    count += 1;
    const name = `bank-${count}`;
    sim.rooms.join(name, ALICE);
    sim.rooms.join(name, { identity: 'sip_bob', kind: ParticipantKind.SIP });
    const clock = new VirtualClock();
    let caller: SimulatedCaller | undefined;
    const { module, calls } = recorded();
    const endpoint = { baseURL: server.url, apiKey: 'test' };
    const job = await runJob(
      sim,
      roomAgent(module, {
        clock,
        createSession: () => {
          const session = new voice.AgentSession({
            vad,
            stt: new openai.STT({ model: 'gpt-4o-transcribe', useRealtime: false, ...endpoint }),
            llm: new openai.LLM({ model: 'gpt-4.1-mini', ...endpoint }),
            tts: new openai.TTS(endpoint),
          });
          caller = new SimulatedCaller(session, { clock, identity: 'sip_alice' });
          return session;
        },
        inputOptions: { audioEnabled: false },
        outputOptions: { audioEnabled: false, transcriptionEnabled: false },
      }),
      name,
    );
    await job.entry;
    cleanups.push(() => caller!.close());
    await caller!.settle();
    return { name, job, caller: caller!, result: () => calls[0]!.result() };
  }

  it('keys arrive as SIP DTMF packets from the caller only; the bot ends the call by deleting the room', async () => {
    const { name, job, caller, result } = await startWithPlugins();
    expect(caller.agentLines).toEqual([MENU]);
    const before = server.requests.length;
    await caller.say('how much do I have in there');
    expect(server.requests.length).toBe(before + 1);
    const request = server.requests.at(-1)!;
    expect(request.tools?.map((t) => t.function.name).sort()).toEqual(['report_unclear', 'submit']);
    expect(JSON.stringify(request.messages)).toContain('how much do I have in there');
    expect(caller.agentLines.at(-1)).toBe(PIN_PROMPT);
    sim.rooms.press(name, 'sip_bob', '9999');
    sim.rooms.press(name, 'sip_alice', '43');
    sim.rooms.press(name, 'sip_bob', '0');
    sim.rooms.press(name, 'sip_alice', '21');
    await endedByDeletingRoom(job, name);
    expect(caller.agentLines.at(-1)).toBe(
      'Your balance is $1,234.56. Thank you for calling. Goodbye.',
    );
    expect(result().outcome).toBe('balance_read');
    expect(server.requests.length).toBe(before + 1);
    expect(sim.rooms.room(name).identities).toEqual([]);
  });

  it('a caller who hangs up mid-PIN ends the call as hangup', async () => {
    const { name, job, caller, result } = await startWithPlugins();
    await caller.say('my balance please');
    sim.rooms.press(name, 'sip_alice', '14');
    await sim.drained();
    sim.rooms.leave(name, 'sip_alice');
    await endedByDeletingRoom(job, name);
    expect(result().outcome).toBe('hangup');
  });

  it('the room deleted under the call mid-PIN is a hang-up, not a cancelled call', async () => {
    const { name, job, caller, result } = await startWithPlugins();
    await caller.say('my balance please');
    sim.rooms.press(name, 'sip_alice', '14');
    await sim.drained();
    sim.rooms.delete(name);
    expect(await job.ended).toBe('room disconnected');
    expect(result().outcome).toBe('hangup');
    // Someone else deleted the room; the bot does not try again.
    expect(apiLog(name)).toEqual([]);
  });

  it('sip.callStatus = hangup arriving first ends the call as hangup', async () => {
    const { name, job, caller, result } = await startWithPlugins();
    await caller.say('my balance please');
    sim.rooms.setAttributes(name, 'sip_alice', { 'sip.callStatus': 'hangup' });
    await endedByDeletingRoom(job, name);
    expect(result().outcome).toBe('hangup');
  });
});

/**
 * The bank's keyword model (as bankScriptedModel) that also answers the briefing of the
 * human in a warm transfer (requests offering `connect_to_caller`).
 */
function bankModel(human: (request: ScriptedRequest) => ScriptStep): ScriptedLLM {
  return new ScriptedLLM({
    respond: (request) => {
      if (request.tools.includes('connect_to_caller')) return human(request);
      const talk = /talk|person|someone/i.test(request.lastUserText ?? '');
      return request.agentId === 'main_menu' && talk
        ? { toolCalls: [{ name: 'submit', args: { key: '3' } }] }
        : { toolCalls: [{ name: 'report_unclear', args: { reason: 'no match' } }] };
    },
  });
}
