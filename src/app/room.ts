import { fileURLToPath } from 'node:url';
import {
  defineAgent,
  type JobContext,
  type JobProcess,
  ServerOptions,
  voice,
} from '@livekit/agents';
import type { TTSVoices } from '@livekit/agents-plugin-openai';
import { type RemoteParticipant, type Room, RoomEvent } from '@livekit/rtc-node';
import { attachCall, type CallContext } from '../core/call.js';
import { type Clock, systemClock, type TimerHandle } from '../core/clock.js';
import { TasklineError } from '../core/errors.js';
import { type LogLevel, logLine, maskStartedLogger } from '../core/log.js';
import { loadOptional } from '../core/optional.js';
import {
  type TaskAwareTurnOptions,
  TURN_VAD_OPTIONS,
  useTaskAwareTurns,
} from '../tasks/turn-detector.js';
import { callerNumber } from '../telephony/caller-id.js';
import { bindRoom, isCallerKind, waitForCaller } from '../telephony/room.js';
import { lastTransfer, sessionTransferer } from '../telephony/transfer.js';
import type { CallModule, CallSetup } from './module.js';
import { RoomTransferer, type RoomTransferOptions, transferDefaults } from './room-transferer.js';

export { RoomTransferer, type RoomTransferOptions, transferDefaults } from './room-transferer.js';

/** Options for {@link roomAgent}. */
export interface RoomAgentOptions {
  /** OpenAI chat model (default `OPENAI_MODEL` or gpt-4o-mini). */
  model?: string;
  /** OpenAI TTS voice (default "alloy"). */
  voice?: TTSVoices;
  /**
   * Builds each call's session. Default: Silero VAD (loaded once per worker process in
   * prewarm, with taskline's short end-of-speech silence) with OpenAI speech-to-text, chat
   * model and text-to-speech, and task-aware end of turn (docs/latency.md).
   */
  createSession?: (ctx: JobContext) => voice.AgentSession | Promise<voice.AgentSession>;
  /** How callers are handed to a person (SIP; environment defaults). */
  transfer?: RoomTransferOptions;
  /**
   * When the bot ends the call, delete the room, which hangs up a phone (SIP) caller.
   * Default true. Never done after a successful transfer: the caller stays with the human.
   */
  endRoomOnClose?: boolean;
  /** How long to wait for a caller to join before the job gives up (default 30 s). */
  waitForCallerMs?: number;
  /** RoomIO input options; `participantIdentity` is always the caller the call is bound to. */
  inputOptions?: Partial<voice.RoomInputOptions>;
  /** RoomIO output options. */
  outputOptions?: Partial<voice.RoomOutputOptions>;
  /** Runs after the session started in the room. */
  onSessionStarted?: (session: voice.AgentSession, room: Room) => void | Promise<void>;
  /** The clock of the call's timers and the entry's own (tests pass a virtual one). */
  clock?: Clock;
  /**
   * End of turn for the default session: task-aware (default; options such as the app's
   * own turn-detector model as `fallback`, or the acknowledgement line), or `false` for
   * upstream's own settings. Sessions from `createSession` keep what they were built with
   * (call `useTaskAwareTurns(session)` there to opt in).
   */
  turns?: TaskAwareTurnOptions | false;
}

/** A module, or a function that builds one per job (to open stores, read configuration). */
export type RoomModule = CallModule | ((ctx: JobContext) => CallModule | Promise<CallModule>);

/** After a warm transfer, how long the job waits for the room to close once a party left. */
const WARM_LINGER_MS = 10_000;

function logRoom(
  call: CallContext | undefined,
  level: LogLevel,
  message: string,
  fields: Record<string, unknown> = {},
): void {
  logLine('taskline.room', level, message, { ...fields, callId: call?.callId });
}

/**
 * A LiveKit agent that answers each room with a fresh call of `module`. Per job it:
 * connects, waits for the caller (a SIP, standard or connector participant), binds their
 * key presses and hang-up (`bindRoom`) and starts the session linked to that same caller
 * (RoomIO `participantIdentity`), handing the module a {@link CallSetup} with the room,
 * the caller, a verified caller number and a real SIP transferer. When the call ends it
 * deletes the room (hanging up the caller) — except after a transfer, when the bot only
 * leaves and the caller stays with the human. A session that fails to start ends the call
 * the same way and is logged. Export it as the worker file's default and start the worker
 * with {@link roomServerOptions}.
 */
export function roomAgent(module: RoomModule, options: RoomAgentOptions = {}) {
  const defaults = transferDefaults(options.transfer);
  return defineAgent({
    prewarm: async (proc: JobProcess) => {
      // Upstream's CLI started this process's logger: mask what it writes (PINs, card numbers).
      maskStartedLogger();
      if (options.createSession) return;
      const silero = await loadOptional(
        () => import('@livekit/agents-plugin-silero'),
        '@livekit/agents-plugin-silero',
        'voice activity detection in a room (roomAgent)',
      );
      proc.userData.vad = await silero.VAD.load(options.turns === false ? {} : TURN_VAD_OPTIONS);
    },
    entry: async (ctx: JobContext) => {
      maskStartedLogger();
      const mod = typeof module === 'function' ? await module(ctx) : module;
      await ctx.connect();
      let caller: RemoteParticipant;
      try {
        caller = await waitForCaller(ctx.room, {
          timeoutMs: options.waitForCallerMs,
          clock: options.clock,
        });
      } catch (error) {
        logRoom(undefined, 'warn', 'no caller: the job ends', { reason: messageOf(error) });
        ctx.shutdown('no caller');
        return;
      }
      const endRoom = options.endRoomOnClose !== false;
      let call: CallContext | undefined;
      let session: voice.AgentSession;
      try {
        session = options.createSession
          ? await options.createSession(ctx)
          : await defaultSession(ctx, options);
        call = attachCall(session, {
          callId: ctx.job.id || undefined,
          callerIdentity: caller.identity,
          clock: options.clock,
        });
        // Bound before start, so a hang-up reaches the running task before the session closes.
        bindRoom(session, ctx.room, { callerIdentity: caller.identity });
        const transferer = new RoomTransferer(ctx, caller, options.transfer);
        const instance = mod.createCall({
          session,
          room: ctx.room,
          callerIdentity: caller.identity,
          callerNumber: callerNumber(caller),
          transferer: sessionTransferer(session, transferer),
          transferTo: defaults.to,
          transferMode: defaults.mode,
        });
        const ended = call;
        session.on(voice.AgentSessionEventTypes.Close, () => {
          afterCall(ctx, session, ended, endRoom, options.clock ?? systemClock).catch((error) =>
            logRoom(ended, 'warn', 'ending the call failed', { reason: messageOf(error) }),
          );
        });
        await session.start({
          agent: instance.agent,
          room: ctx.room,
          inputOptions: { ...options.inputOptions, participantIdentity: caller.identity },
          outputOptions: options.outputOptions,
        });
      } catch (error) {
        // Nothing will speak to the caller: hang up rather than leave them in silence.
        logRoom(call, 'error', 'the session failed to start: ending the call', {
          reason: messageOf(error),
        });
        if (endRoom) await ctx.deleteRoom();
        ctx.shutdown('session failed to start');
        throw error;
      }
      await options.onSessionStarted?.(session, ctx.room);
    },
  });
}

/**
 * What happens to the room once the session closed. After a successful transfer the room
 * is never deleted: a cold-transferred caller has left LiveKit through a SIP REFER, so the
 * bot leaves; after a warm transfer the caller and the human are in this room, and the
 * job stays (silent) so upstream's WarmTransferTask can close the room when one of them
 * hangs up. Otherwise the bot hung up: the room is deleted (the SIP caller is hung up)
 * unless `endRoom` is false, and the job ends.
 */
async function afterCall(
  ctx: JobContext,
  session: voice.AgentSession,
  call: CallContext,
  endRoom: boolean,
  clock: Clock,
): Promise<void> {
  const transfer = await lastTransfer(session);
  if (transfer?.ok && transfer.mode === 'warm') {
    logRoom(call, 'info', 'call transferred (warm): the caller stays with the human', {
      to: transfer.to,
    });
    lingerUntilTheCallEnds(ctx, clock);
    return;
  }
  if (transfer?.ok) {
    logRoom(call, 'info', 'call transferred (cold): the bot leaves the room', { to: transfer.to });
    ctx.shutdown('call transferred');
    return;
  }
  if (endRoom && ctx.room.isConnected) {
    logRoom(call, 'info', 'call ended: deleting the room', { reason: call.hungUp?.reason });
    await ctx.deleteRoom();
  }
  ctx.shutdown('call ended');
}

/**
 * After a warm transfer: stay until the room closes; once the caller or the human has
 * left, give upstream's clean-up (it deletes the room) a bounded time, then leave anyway.
 */
function lingerUntilTheCallEnds(ctx: JobContext, clock: Clock): void {
  const room = ctx.room;
  let timer: TimerHandle | undefined;
  const leaveSoon = () => {
    timer ??= clock.setTimer(WARM_LINGER_MS, () => {
      stop();
      ctx.shutdown('transferred call ended');
    });
  };
  const onLeft = (participant: RemoteParticipant) => {
    if (isCallerKind(participant)) leaveSoon();
  };
  const stop = () => {
    timer?.cancel();
    room.off(RoomEvent.ParticipantDisconnected, onLeft);
    room.off(RoomEvent.Disconnected, stop);
  };
  room.on(RoomEvent.ParticipantDisconnected, onLeft);
  room.on(RoomEvent.Disconnected, stop);
  // One of the two may have hung up already, while the session was closing.
  if ([...room.remoteParticipants.values()].filter(isCallerKind).length < 2) leaveSoon();
}

async function defaultSession(
  ctx: JobContext,
  options: RoomAgentOptions,
): Promise<voice.AgentSession> {
  const openai = await loadOptional(
    () => import('@livekit/agents-plugin-openai'),
    '@livekit/agents-plugin-openai',
    'speech and the model in a room (roomAgent)',
  );
  const session = new voice.AgentSession({
    vad: ctx.proc.userData.vad as voice.AgentSessionOptions['vad'],
    stt: new openai.STT({ model: 'gpt-4o-transcribe', useRealtime: false }),
    llm: new openai.LLM({ model: options.model ?? process.env.OPENAI_MODEL ?? 'gpt-4o-mini' }),
    tts: new openai.TTS({ voice: options.voice ?? 'alloy' }),
  });
  if (options.turns !== false) useTaskAwareTurns(session, options.turns);
  return session;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Options for {@link roomServerOptions}. */
export interface RoomServerOptions {
  /**
   * The worker's agent name: explicit dispatch only (a SIP dispatch rule's
   * `roomConfig.agents`, a token, or the AgentDispatch API), so the worker never joins
   * rooms it was not asked to — such as the consultation room of a warm transfer.
   */
  agentName: string;
}

/**
 * Upstream `ServerOptions` for a worker file whose default export is a {@link roomAgent}:
 * `cli.runApp(roomServerOptions(import.meta.url, { agentName: 'bank-line' }))`.
 */
export function roomServerOptions(fileUrl: string, options: RoomServerOptions): ServerOptions {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(options.agentName)) {
    throw new TasklineError(
      'invalid_argument',
      `agentName ${JSON.stringify(options.agentName)} is not usable for dispatch: use 1-64 letters, digits, ".", "_" or "-".`,
    );
  }
  return new ServerOptions({ agent: fileURLToPath(fileUrl), agentName: options.agentName });
}

/** True when the file at `fileUrl` is the script node was started with. */
export function isMainModule(fileUrl: string): boolean {
  return process.argv[1] === fileURLToPath(fileUrl);
}
