/**
 * `roomAgent` as a LiveKit job against the simulated server (tests/app/livekit): what it
 * hands a module, which participant it binds, how it ends, and the callback and assistant
 * examples' room entries start to finish. (ivr-bank and survey: their own files.)
 */
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { voice } from '@livekit/agents';
import { ParticipantKind } from '@livekit/rtc-node';
import { describe, expect, it, vi } from 'vitest';
import { GREETING } from '../../examples/assistant/index.js';
import assistantRoom, * as assistantEntry from '../../examples/assistant/room.js';
import callback from '../../examples/callback/index.js';
import callbackRoom, * as callbackEntry from '../../examples/callback/room.js';
import * as bankEntry from '../../examples/ivr-bank/room.js';
import * as surveyEntry from '../../examples/survey/room.js';
import type { CallModule, CallSetup } from '../../src/app/module.js';
import {
  phoneLineOptions,
  type RoomAgentOptions,
  roomAgent,
  roomServerOptions,
} from '../../src/app/room.js';
import { callOf } from '../../src/core/call.js';
import { RecordingTransferer } from '../../src/telephony/transfer.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { captureLogs, logText } from '../telephony/logs.js';
import { ALICE, simulatedLiveKit, textCalls } from './helpers.js';
import { type JobRun, runJob } from './livekit/index.js';

const CALLBACK_GREETING = 'Thanks for calling Acme Insurance. How can I help?';

const { sim, cleanups } = simulatedLiveKit();
let count = 0;

function freshRoom(): string {
  count += 1;
  return `room-${count}`;
}

/** Runs `module` in a fresh room holding `participants`, with a text session on `model`. */
async function start(
  module: CallModule,
  participants: Array<Parameters<typeof sim.rooms.join>[1]> = [ALICE],
  model = new ScriptedLLM({ respond: () => ({ say: 'Noted.' }) }),
  extra: RoomAgentOptions = {},
) {
  const name = freshRoom();
  for (const p of participants) sim.rooms.join(name, p);
  const text = textCalls(model);
  cleanups.push(() => text.closeAll());
  const job = await runJob(sim, roomAgent(module, { ...text.options, ...extra }), name);
  return { name, job, text };
}

/** Waits for the job to end because the bot deleted its room (which hangs up the caller). */
async function endedByDeletingRoom(job: JobRun, name: string) {
  expect(await job.ended).toBe('room disconnected');
  expect(sim.api.about(name).map((c) => c.method)).toEqual(['RoomService/DeleteRoom']);
  expect(sim.rooms.room(name).deleted).toBe(true);
}

describe('roomAgent: the call a module is handed', () => {
  it('gets the room, the caller, a verified number and a real SIP transferer (never a test double)', async () => {
    const setups: CallSetup[] = [];
    const module: CallModule = {
      ...callback,
      createCall: (setup) => {
        if (setup) setups.push(setup);
        return callback.createCall(setup);
      },
    };
    const { job, text } = await start(module, [ALICE], undefined, {
      transfer: { to: 'sip:desk@pbx.example', mode: 'warm' },
    });
    await job.entry;
    const setup = setups[0]!;
    expect(setup.session).toBe(text.caller.session);
    expect(setup.room).toBe(job.room);
    expect(setup.callerIdentity).toBe('sip_alice');
    expect(setup.callerNumber).toBe('+14155550123');
    expect(setup.transferTo).toBe('sip:desk@pbx.example');
    expect(setup.transferMode).toBe('warm');
    expect(setup.transferer).toBeDefined();
    expect(setup.transferer).not.toBeInstanceOf(RecordingTransferer);
  });

  it('refuses a bad wait, call length or transfer ringing when the worker starts, not mid-call', () => {
    const createSession = async (): Promise<voice.AgentSession> => {
      throw new Error('never started here');
    };
    for (const [options, message] of [
      [
        { waitForCallerMs: 0 },
        'roomAgent: waitForCallerMs must be between 1000 and 900000 ms (got 0).',
      ],
      [
        { waitForCallerMs: 30 * 86_400_000 },
        'roomAgent: waitForCallerMs must be between 1000 and 900000 ms (got 2592000000).',
      ],
      [
        { outbound: { maxCallDurationMs: 90.5 } },
        'roomAgent: outbound.maxCallDurationMs must be a whole number of seconds from 1000 to 86400000 ms (got 90.5).',
      ],
      [
        { transfer: { cold: { ringingTimeoutMs: 2_500 } } },
        'ColdSipTransferer: ringingTimeoutMs must be a whole number of seconds from 1000 to 600000 ms (got 2500): LiveKit SIP counts ringing in whole seconds.',
      ],
      [
        { transfer: { warm: { ringingTimeoutMs: 601_000 } } },
        'WarmTransferer: ringingTimeoutMs must be a whole number of seconds from 1000 to 600000 ms (got 601000): LiveKit SIP counts ringing in whole seconds.',
      ],
      [
        { transfer: { warm: { consultTimeoutMs: Number.NaN } } },
        'WarmTransferer: consultTimeoutMs must be between 1 and 3600000 ms (got NaN).',
      ],
    ] as const) {
      expect(() =>
        roomAgent(callback, { createSession, ...(options as RoomAgentOptions) }),
      ).toThrow(expect.objectContaining({ code: 'invalid_argument', message }));
    }
    // The boundaries pass.
    for (const [waitForCallerMs, maxCallDurationMs, ringingTimeoutMs] of [
      [1_000, 1_000, 1_000],
      [900_000, 86_400_000, 600_000],
    ]) {
      expect(() =>
        roomAgent(callback, {
          createSession,
          waitForCallerMs,
          outbound: { maxCallDurationMs },
          transfer: { cold: { ringingTimeoutMs }, warm: { ringingTimeoutMs } },
        }),
      ).not.toThrow();
    }
  });

  it('takes its transfer defaults from TASKLINE_TRANSFER_TO / TASKLINE_TRANSFER_MODE, checked up front', () => {
    const saved = {
      to: process.env.TASKLINE_TRANSFER_TO,
      mode: process.env.TASKLINE_TRANSFER_MODE,
    };
    try {
      process.env.TASKLINE_TRANSFER_MODE = 'blind';
      expect(() => roomAgent(callback)).toThrow(
        'TASKLINE_TRANSFER_MODE must be "cold" or "warm", got "blind".',
      );
      process.env.TASKLINE_TRANSFER_MODE = 'warm';
      process.env.TASKLINE_TRANSFER_TO = 'not a number';
      expect(() => roomAgent(callback)).toThrow(/Cannot dial "not a number"/);
    } finally {
      for (const [k, v] of [
        ['TASKLINE_TRANSFER_TO', saved.to],
        ['TASKLINE_TRANSFER_MODE', saved.mode],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('binds the same caller as RoomIO: a SIP caller, not the ingress participant that joined first', async () => {
    const model = new ScriptedLLM({ respond: (req) => ({ say: `You said: ${req.lastUserText}` }) });
    const { name, job, text } = await start(
      callback,
      [{ identity: 'ingress_music', kind: ParticipantKind.INGRESS }, ALICE],
      model,
    );
    await job.entry;
    await text.caller.settle();
    const session = text.caller.session;
    expect(callOf(session).callerIdentity).toBe('sip_alice');
    expect(session._roomIO?.linkedParticipant?.identity).toBe('sip_alice');
    // RoomIO takes typed text from the linked caller only.
    sim.rooms.sendText(name, 'ingress_music', 'now playing');
    sim.rooms.sendText(name, 'sip_alice', 'hello there');
    await sim.drained();
    await text.caller.settle();
    expect(model.requests.map((r) => r.lastUserText)).toEqual(['hello there']);
    expect(text.caller.agentLines).toEqual([CALLBACK_GREETING, 'You said: hello there']);
  });
});

describe('roomAgent: a phone line', () => {
  it.each([
    ['a SIP (phone) caller: no echo warm-up, so an answer over the greeting is heard', ALICE, null],
    [
      "a browser caller: upstream's 3 s echo warm-up",
      { identity: 'web_bob', kind: ParticipantKind.STANDARD },
      3000,
    ],
  ])('the default session for %s', async (_who, participant, warmup) => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-not-used'; // the plugins are built, never called
    try {
      const seen: Array<number | null | undefined> = [];
      const module: CallModule = {
        ...callback,
        createCall: (setup) => {
          seen.push(setup?.session.sessionOptions.aecWarmupDuration);
          throw new Error('stop before the call starts');
        },
      };
      const name = freshRoom();
      sim.rooms.join(name, participant);
      const job = await runJob(sim, roomAgent(module), name, { prewarm: true });
      await expect(job.entry).rejects.toThrow('stop before the call starts');
      await job.ended;
      expect(seen).toEqual([warmup]);
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });

  it('phoneLineOptions gives a custom session the same', () => {
    expect(phoneLineOptions(ALICE)).toEqual({ aecWarmupDuration: null });
    expect(phoneLineOptions({ kind: ParticipantKind.STANDARD })).toEqual({});
  });
});

describe('roomAgent: how a call ends', () => {
  class BrokenSession extends voice.AgentSession {
    override async start(): Promise<void> {
      throw new Error('the speech plugin has no API key');
    }
  }
  const brokenModule: CallModule = {
    ...callback,
    createCall: () => {
      throw new Error('the speech plugin has no API key');
    },
  };

  it.each([
    ['the session fails to start', callback, () => new BrokenSession({ llm: new ScriptedLLM() })],
    ["the module's createCall throws", brokenModule, () => new voice.AgentSession({})],
  ])(
    'ends the call when %s: logged, the room deleted, the job ended',
    async (_what, module, createSession) => {
      const logs = captureLogs();
      try {
        const name = freshRoom();
        sim.rooms.join(name, ALICE);
        const job = await runJob(sim, roomAgent(module, { createSession }), name);
        await expect(job.entry).rejects.toThrow('the speech plugin has no API key');
        expect(await job.ended).toBe('room disconnected');
        expect(job.shutdownReason).toBe('session failed to start');
        expect(sim.api.about(name).map((c) => c.method)).toEqual(['RoomService/DeleteRoom']);
        const line = logs.lines.map(logText).find((l) => l.includes('failed to start'));
        expect(line).toContain('"msg":"the session failed to start: ending the call"');
        expect(line).toContain('"reason":"the speech plugin has no API key"');
        expect(line).toContain('"level":50');
      } finally {
        logs.stop();
      }
    },
  );

  it('ends the job when no caller joins in time (the agent never waits forever)', async () => {
    const name = freshRoom();
    sim.rooms.join(name, { identity: 'egress_rec', kind: ParticipantKind.EGRESS });
    const text = textCalls(new ScriptedLLM());
    const job = await runJob(
      sim,
      roomAgent(callback, { ...text.options, waitForCallerMs: 20_000 }),
      name,
    );
    await sim.drained();
    await text.clock.advance(19_999);
    expect(job.shutdownReason).toBeUndefined();
    await text.clock.advance(1);
    await job.entry;
    expect(await job.ended).toBe('no caller');
    expect(sim.api.about(name)).toEqual([]);
  });

  it('leaves without deleting the room when endRoomOnClose is false', async () => {
    const { name, job, text } = await start(callback, [ALICE], undefined, {
      endRoomOnClose: false,
    });
    await job.entry;
    await text.caller.settle();
    await text.caller.close();
    expect(await job.ended).toBe('call ended');
    expect(sim.api.about(name)).toEqual([]);
    expect(sim.rooms.room(name).identities).toEqual(['sip_alice']);
  });
});

describe('example room entries start and end cleanly', () => {
  it('callback: greets the caller, ends when they hang up', async () => {
    // examples/callback/room.ts is `roomAgent(callback)`: the same, with a text session.
    expect(callbackRoom.entry).toBeTypeOf('function');
    const { name, job, text } = await start(callback);
    expect(await runExample(name, job, text)).toEqual([CALLBACK_GREETING]);
  });

  it('assistant: greets the caller, ends when they hang up', async () => {
    const assistant = (await import('../../examples/assistant/index.js')).default;
    expect(assistantRoom.entry).toBeTypeOf('function');
    // In a room the researcher runs on OpenAI: the key must exist, though this call never
    // delegates, so the model is never reached.
    vi.stubEnv('OPENAI_API_KEY', 'unused-in-this-call');
    cleanups.push(async () => {
      vi.unstubAllEnvs();
    });
    const name = freshRoom();
    sim.rooms.join(name, ALICE);
    const text = textCalls(new ScriptedLLM());
    cleanups.push(() => text.closeAll());
    const job = await runJob(sim, roomAgent(assistant, text.options), name);
    expect(await runExample(name, job, text)).toEqual([GREETING]);
  });

  it.each([
    ['ivr-bank', bankEntry, 'taskline-ivr-bank', '../../examples/ivr-bank/room.ts'],
    ['survey', surveyEntry, 'taskline-survey', '../../examples/survey/room.ts'],
    ['callback', callbackEntry, 'taskline-callback', '../../examples/callback/room.ts'],
    ['assistant', assistantEntry, 'taskline-assistant', '../../examples/assistant/room.ts'],
  ])('%s: runs as a named worker (explicit dispatch only)', (_name, entry, agentName, file) => {
    const options = entry.serverOptions();
    expect(entry.AGENT_NAME).toBe(agentName);
    expect(options.agentName).toBe(agentName);
    expect(options.agent).toBe(fileURLToPath(new URL(file, import.meta.url)));
  });

  it('refuses an agent name dispatch cannot use', () => {
    expect(() => roomServerOptions(import.meta.url, { agentName: '' })).toThrow(
      /agentName "" is not usable for dispatch/,
    );
    expect(() => roomServerOptions(import.meta.url, { agentName: 'bank line' })).toThrow(
      /not usable for dispatch/,
    );
  });
});

/** Greets, then the caller hangs up: the session closes and the room goes. */
async function runExample(
  name: string,
  job: JobRun,
  text: ReturnType<typeof textCalls>,
): Promise<string[]> {
  await job.entry;
  await text.caller.settle();
  const lines = [...text.caller.agentLines];
  const closed = once(text.caller.session, voice.AgentSessionEventTypes.Close);
  sim.rooms.leave(name, 'sip_alice');
  await closed;
  await endedByDeletingRoom(job, name);
  return lines;
}
