/**
 * A simulated LiveKit server for room entries, at the two boundaries where a real one
 * would be: rtc-node's FFI (see ffi.ts) and the server's HTTP API (api.ts). Everything on
 * this side of them runs for real: rtc-node's `Room` and participants, @livekit/agents'
 * JobContext, RoomIO, AgentSession and WarmTransferTask, livekit-server-sdk's
 * RoomServiceClient and SipClient, and taskline.
 *
 * What a job process would do around the entry is reproduced in `runJob`, reduced to
 * what these tests need: the entry runs inside the job context, and a shutdown (or the
 * room disconnecting) ends the job by disconnecting the agent's room.
 */
import {
  type AgentDefinition,
  type ipc,
  JobContext,
  JobProcess,
  type RunningJobInfo,
  runWithJobContextAsync,
} from '@livekit/agents';
import { Job, Room as ProtoRoom } from '@livekit/protocol';
import { Room, RoomEvent } from '@livekit/rtc-node';
import { AccessToken } from 'livekit-server-sdk';
import { SimApi } from './api.js';
import { FfiBoundary } from './ffi.js';
import { SimRooms } from './rooms.js';

export { codeOf, type SimParticipant, SimRoom } from './rooms.js';

/** API credentials of the simulated server (also put in the environment by `start`). */
export const API_KEY = 'APIsimulated';
export const API_SECRET = 'simulated-secret-simulated-secret-0123';

/** A simulated LiveKit server: rooms reached through rtc-node's FFI, and its HTTP API. */
export class SimulatedLiveKit {
  readonly ffi = FfiBoundary.get();
  readonly rooms = new SimRooms(this.ffi, API_KEY, API_SECRET);
  readonly api = new SimApi(this.rooms, API_KEY, API_SECRET);
  private unroute: (() => void) | undefined;
  private readonly saved: Record<string, string | undefined> = {};

  /**
   * Starts the HTTP API and routes FFI requests here. Sets LIVEKIT_URL / LIVEKIT_API_KEY /
   * LIVEKIT_API_SECRET, as a worker's environment would have them (upstream's warm
   * transfer signs its tokens from them).
   */
  async start(): Promise<this> {
    await this.api.start();
    this.unroute = this.ffi.route(this.rooms.handle);
    for (const [k, v] of Object.entries({
      LIVEKIT_URL: this.url,
      LIVEKIT_API_KEY: API_KEY,
      LIVEKIT_API_SECRET: API_SECRET,
    })) {
      this.saved[k] = process.env[k];
      process.env[k] = v;
    }
    return this;
  }

  async close(): Promise<void> {
    this.unroute?.();
    for (const [k, v] of Object.entries(this.saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await this.api.close();
  }

  get url(): string {
    return this.api.url;
  }

  /** Waits until every event sent to agents has been dispatched by their rtc-node Rooms. */
  drained(): Promise<void> {
    return this.ffi.drained();
  }

  /** A token for `identity` to join `room`, signed like the server's. */
  token(room: string, identity: string): Promise<string> {
    const at = new AccessToken(API_KEY, API_SECRET, { identity });
    at.addGrant({ roomJoin: true, room, canPublish: true, canSubscribe: true });
    return at.toJwt();
  }
}

/** A job as the worker runs it: the entry's context, its room, and how it ended. */
export interface JobRun {
  ctx: JobContext;
  room: Room;
  /** The entry's promise (rejects when the entry throws). */
  entry: Promise<void>;
  /** Resolves with the reason once the job ends (shutdown, or its room disconnected). */
  ended: Promise<string>;
  /** The reason the entry gave `ctx.shutdown()`, if it did. */
  readonly shutdownReason: string | undefined;
}

let jobs = 0;

/**
 * Runs `agent`'s entry for a job in `roomName`, the way upstream's job process does:
 * inside the job context, with a real Room to connect through the simulated server. When
 * the job ends (the entry calls `ctx.shutdown`, the room disconnects, the entry throws),
 * the primary session is closed and the room disconnected, as upstream's job process
 * does (`finalizeSession`, then `room.disconnect()`).
 */
export async function runJob(
  sim: SimulatedLiveKit,
  agent: AgentDefinition,
  roomName: string,
  options: { jobId?: string; prewarm?: boolean; metadata?: string } = {},
): Promise<JobRun> {
  const proc = new JobProcess();
  if (options.prewarm) await agent.prewarm?.(proc);
  jobs += 1;
  const jobId = options.jobId ?? `AJ_sim${jobs}`;
  const identity = `agent-${jobId}`;
  const info: RunningJobInfo = {
    acceptArguments: { name: 'taskline', identity, metadata: '' },
    job: new Job({
      id: jobId,
      metadata: options.metadata ?? '',
      room: new ProtoRoom({ name: roomName, sid: sim.rooms.room(roomName).sid }),
    }),
    url: sim.url,
    token: await sim.token(roomName, identity),
    workerId: 'AW_sim',
    apiKey: API_KEY,
    apiSecret: API_SECRET,
  };
  const room = new Room();
  let reason: string | undefined;
  let ending: string | undefined;
  let end: (why: string) => void = () => undefined;
  const ended = new Promise<string>((resolve) => {
    end = (why) => {
      if (ending !== undefined) return;
      ending = why;
      const session = ctx._primaryAgentSession;
      (session ? session.close() : Promise.resolve())
        .catch(() => undefined)
        .then(() => room.disconnect())
        .catch(() => undefined)
        .then(() => resolve(why));
    };
  });
  room.on(RoomEvent.Disconnected, () => end('room disconnected'));
  const inference: ipc.InferenceExecutor = {
    doInference: async () => {
      throw new Error('no inference executor in tests');
    },
  };
  const ctx = new JobContext(
    proc,
    info,
    room,
    () => undefined,
    (why) => {
      reason ??= why;
      end(why);
    },
    inference,
  );
  const entry = runWithJobContextAsync(ctx, () => agent.entry(ctx));
  entry.catch(() => end('job crashed'));
  return {
    ctx,
    room,
    entry,
    ended,
    get shutdownReason() {
      return reason;
    },
  };
}

/** A real rtc-node Room, connected to `name` on the simulated server as an agent. */
export async function connectRoom(
  sim: SimulatedLiveKit,
  name: string,
  identity = 'agent-test',
): Promise<Room> {
  const room = new Room();
  await room.connect(sim.url, await sim.token(name, identity), {
    autoSubscribe: true,
    dynacast: false,
  });
  return room;
}
