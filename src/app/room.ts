import { fileURLToPath } from 'node:url';
import {
  defineAgent,
  type JobContext,
  type JobProcess,
  loggerOptions,
  ServerOptions,
  voice,
} from '@livekit/agents';
import type { TTSVoices } from '@livekit/agents-plugin-openai';
import { ParticipantKind, type RemoteParticipant, type Room, RoomEvent } from '@livekit/rtc-node';
import { attachCall, type CallContext } from '../core/call.js';
import { type Clock, systemClock, type TimerHandle } from '../core/clock.js';
import { TasklineError } from '../core/errors.js';
import { type LogLevel, logLine, maskStartedLogger } from '../core/log.js';
import { isInstalled, loadOptional, OPTIONAL_PACKAGES } from '../core/optional.js';
import { checkRange } from '../core/options.js';
import {
  type TaskAwareTurnOptions,
  TURN_VAD_OPTIONS,
  useTaskAwareTurns,
} from '../tasks/turn-detector.js';
import { callerNumber } from '../telephony/caller-id.js';
import { MAX_CALL_DURATION } from '../telephony/outbound/dialer.js';
import { farEndOf } from '../telephony/outbound/far-end.js';
import { roomKeySender } from '../telephony/outbound/key-sender.js';
import { bindRoom, CALLER_WAIT, isCallerKind, waitForCaller } from '../telephony/room.js';
import { lastTransfer, sessionTransferer } from '../telephony/transfer.js';
import {
  callIdentityOf,
  DEFAULT_UNRESUMABLE_LINE,
  openJobLifeline,
  UnresumableCall,
} from './continuity.js';
import { CallLimiter } from './limits.js';
import type { CallModule, CallSetup } from './module.js';
import { RoomDialer, type RoomDialOptions } from './room-dialer.js';
import { RoomTransferer, type RoomTransferOptions, transferDefaults } from './room-transferer.js';

export { RoomDialer, type RoomDialOptions } from './room-dialer.js';
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
   * model and text-to-speech, task-aware end of turn (docs/latency.md), and what a phone
   * line needs for a SIP caller (see {@link phoneLineOptions}; spread it into your own).
   */
  createSession?: (
    ctx: JobContext,
    /** The caller (for an outbound call: the callee, who has not joined yet). */
    caller: Pick<RemoteParticipant, 'identity' | 'kind'>,
  ) => voice.AgentSession | Promise<voice.AgentSession>;
  /** How callers are handed to a person (SIP; environment defaults). */
  transfer?: RoomTransferOptions;
  /**
   * When the bot ends the call, delete the room, which hangs up a phone (SIP) caller.
   * Default true. Never done after a successful transfer: the caller stays with the human.
   */
  endRoomOnClose?: boolean;
  /**
   * How long to wait for a caller to join before the job gives up: 1,000 to 900,000 ms (1 s
   * to 15 minutes; default 30 s). Checked by `roomAgent`.
   */
  waitForCallerMs?: number;
  /** RoomIO input options; `participantIdentity` is always the caller the call is bound to. */
  inputOptions?: Partial<voice.RoomInputOptions>;
  /** RoomIO output options. */
  outputOptions?: Partial<voice.RoomOutputOptions>;
  /** Runs after the session started in the room. */
  onSessionStarted?: (session: voice.AgentSession, room: Room) => void | Promise<void>;
  /**
   * Runs in each job process before it takes a job (upstream's prewarm), after the default
   * VAD load: load models, open stores and connections here, so a call — and a call resumed
   * after a crash — starts without waiting for them.
   */
  prewarm?: (proc: JobProcess) => void | Promise<void>;
  /** The clock of the call's timers and the entry's own (tests pass a virtual one). */
  clock?: Clock;
  /**
   * The guardian each call's job keeps a lifeline to, so a call whose worker dies is
   * dispatched again at once (see `taskline guardian`). Default: `TASKLINE_GUARDIAN_URL`
   * when set; false: none.
   */
  guardian?: { url: string } | false;
  /**
   * What a job the guardian re-dispatched says before it ends a call its module cannot
   * continue (no `canResume`, or it said no). Default {@link DEFAULT_UNRESUMABLE_LINE}.
   */
  unresumableLine?: string;
  /**
   * Outbound calls: the job does not wait for a caller; the module dials (`setup.dialer`,
   * LiveKit SIP) and the far end joins as `calleeIdentity`, which the call and RoomIO are bound
   * to from the start. The job's metadata (who to call) is `setup.metadata`.
   */
  outbound?: RoomDialOptions;
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

/** The plugins the default session (no `createSession`) is built from. */
const ROOM_PLUGINS = ['@livekit/agents-plugin-openai', '@livekit/agents-plugin-silero'] as const;

/** Agents defined in this process whose sessions are built from {@link ROOM_PLUGINS}. */
let pluginSessionAgents = 0;

/**
 * The plugins a room worker of this process needs but cannot find (none when every
 * `roomAgent` brings its own sessions with `createSession`). `isThere` is for tests.
 */
export function missingRoomPlugins(
  isThere: (pkg: string) => boolean = (pkg) => isInstalled(pkg),
): string[] {
  if (pluginSessionAgents === 0) return [];
  return ROOM_PLUGINS.filter((pkg) => !isThere(pkg));
}

/** The `missing_dependency` error naming every package missing and how to install them. */
function missingPlugins(missing: readonly string[]): TasklineError {
  const specs = missing.map(
    (p) => `${p}@"${OPTIONAL_PACKAGES[p as keyof typeof OPTIONAL_PACKAGES]}"`,
  );
  const names = missing.map((p) => `"${p}"`).join(' and ');
  return new TasklineError(
    'missing_dependency',
    `${missing.length > 1 ? 'The packages' : 'The package'} ${names} ${missing.length > 1 ? 'are' : 'is'} needed for speech and voice activity detection in a room (roomAgent without createSession) but not installed. Install ${missing.length > 1 ? 'them' : 'it'} in your app: npm install ${specs.join(' ')}`,
    { packages: [...missing] },
  );
}

/** Says `error` at error level: through the process logger, or on stderr before there is one. */
function sayError(error: TasklineError): void {
  if (loggerOptions()) {
    logLine('taskline.room', 'error', error.message, { code: error.code });
  } else {
    process.stderr.write(`taskline: error: ${error.message}\n`);
  }
}

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
  // Waits and limits used only once a call came are refused now, when the worker starts.
  checkRange('waitForCallerMs', options.waitForCallerMs, CALLER_WAIT, { owner: 'roomAgent' });
  checkRange('outbound.maxCallDurationMs', options.outbound?.maxCallDurationMs, MAX_CALL_DURATION, {
    owner: 'roomAgent',
  });
  if (!options.createSession) pluginSessionAgents += 1;
  return defineAgent({
    prewarm: async (proc: JobProcess) => {
      // Upstream's CLI started this process's logger: mask what it writes (PINs, card numbers).
      maskStartedLogger();
      if (!options.createSession) {
        try {
          const silero = await loadOptional(
            () => import('@livekit/agents-plugin-silero'),
            '@livekit/agents-plugin-silero',
            'voice activity detection in a room (roomAgent)',
          );
          proc.userData.vad = await silero.VAD.load(
            options.turns === false ? {} : TURN_VAD_OPTIONS,
          );
        } catch (error) {
          // Upstream logs a failed prewarm at debug level only (and starts another process).
          if (error instanceof TasklineError) sayError(error);
          throw error;
        }
      }
      await options.prewarm?.(proc);
    },
    entry: async (ctx: JobContext) => {
      maskStartedLogger();
      const mod = typeof module === 'function' ? await module(ctx) : module;
      await ctx.connect();
      const identity = callIdentityOf(ctx);
      // From here until the job leaves the call on purpose, the guardian hears of its death.
      const lifeline =
        options.guardian === false ? undefined : openJobLifeline(ctx, options.guardian?.url);
      const leave = (reason: string) => lifeline?.done(reason) ?? Promise.resolve();
      ctx.addShutdownCallback(() => leave('the job ended'));
      if (identity.resumed) {
        logRoom(undefined, 'info', 'job re-dispatched by the guardian: continuing the call', {
          attempt: identity.resumed.attempt,
          reason: identity.resumed.reason,
          previousJob: identity.resumed.previousJob,
        });
      }
      const dialer = options.outbound ? new RoomDialer(ctx, options.outbound) : undefined;
      let caller: Pick<RemoteParticipant, 'identity' | 'kind'>;
      if (dialer) {
        // Outbound: the far end is not here yet; the module dials it into this room.
        caller = { identity: dialer.calleeIdentity, kind: ParticipantKind.SIP };
      } else {
        try {
          caller = await waitForCaller(ctx.room, {
            timeoutMs: options.waitForCallerMs,
            clock: options.clock,
          });
        } catch (error) {
          logRoom(undefined, 'warn', 'no caller: the job ends', { reason: messageOf(error) });
          await leave('no caller');
          ctx.shutdown('no caller');
          return;
        }
      }
      const endRoom = options.endRoomOnClose !== false;
      let call: CallContext | undefined;
      let session: voice.AgentSession;
      try {
        session = options.createSession
          ? await options.createSession(ctx, caller)
          : await defaultSession(ctx, options, caller);
        call = attachCall(session, {
          callId: identity.callKey,
          callerIdentity: caller.identity,
          clock: options.clock,
        });
        // Bound before start, so a hang-up reaches the running task before the session closes.
        bindRoom(session, ctx.room, { callerIdentity: caller.identity });
        const transferer = new RoomTransferer(ctx, caller, options.transfer, options.clock);
        const number = dialer ? undefined : callerNumber(caller as RemoteParticipant);
        if (dialer) farEndOf(session).keys = roomKeySender(ctx.room, { clock: options.clock });
        const setup: CallSetup = {
          session,
          room: ctx.room,
          callerIdentity: caller.identity,
          ...(number ? { callerNumber: number } : {}),
          transferer: sessionTransferer(session, transferer),
          transferTo: defaults.to,
          transferMode: defaults.mode,
          callKey: identity.callKey,
          dispatchMetadata: identity.dispatchMetadata,
          ...(identity.resumed ? { resumed: identity.resumed } : {}),
          ...(dialer ? { dialer, metadata: ctx.job.metadata } : {}),
        };
        const agent = (await canContinue(mod, setup, call))
          ? mod.createCall(setup).agent
          : new UnresumableCall(options.unresumableLine ?? DEFAULT_UNRESUMABLE_LINE);
        const ended = call;
        session.on(voice.AgentSessionEventTypes.Close, () => {
          afterCall(ctx, session, ended, endRoom, options.clock ?? systemClock, leave).catch(
            (error) =>
              logRoom(ended, 'warn', 'ending the call failed', { reason: messageOf(error) }),
          );
        });
        await session.start({
          agent,
          room: ctx.room,
          inputOptions: {
            ...options.inputOptions,
            participantIdentity: caller.identity,
            // Outbound: a callee who rejects leaves while the dial is still pending; the call
            // (bindRoom) hangs up once the dial has answered, RoomIO must not close first.
            ...(dialer ? { closeOnDisconnect: false } : {}),
          },
          outputOptions: options.outputOptions,
        });
      } catch (error) {
        // Nothing will speak to the caller: hang up rather than leave them in silence.
        logRoom(call, 'error', 'the session failed to start: ending the call', {
          reason: messageOf(error),
        });
        await leave('the session failed to start');
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
  leave: (reason: string) => Promise<void>,
): Promise<void> {
  const transfer = await lastTransfer(session);
  // Before the bot leaves: the guardian must not dispatch it back into a call it ended.
  await leave(transfer?.ok ? `call transferred (${transfer.mode})` : 'call ended');
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
 * Whether this job starts the module: always for a first dispatch; for a re-dispatch only
 * when the module says it can continue the call (a module that cannot would start afresh
 * and ask again what was answered).
 */
async function canContinue(mod: CallModule, setup: CallSetup, call: CallContext): Promise<boolean> {
  if (!setup.resumed) return true;
  let can = false;
  let why = 'the module cannot resume calls (no canResume)';
  if (mod.canResume) {
    try {
      can = await mod.canResume(setup);
      why = can ? 'resuming' : 'the module has nothing to resume';
    } catch (error) {
      why = `canResume failed: ${messageOf(error)}`;
    }
  }
  logRoom(
    call,
    can ? 'info' : 'warn',
    can ? 'resuming the call' : 'cannot resume: ending the call',
    {
      reason: why,
    },
  );
  return can;
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

/**
 * Session options a caller's line needs. A phone (SIP) caller: no acoustic echo warm-up.
 * Upstream ignores the caller for the first `aecWarmupDuration` (3 s) of the agent's first
 * speech, so a browser's echo canceller can settle; it keeps that for inbound SIP calls,
 * where a phone caller who answers the greeting at once (a key word, "agent") would not be
 * heard. A phone line has no loudspeaker echo at the agent's end (handsets and carriers
 * cancel their own), so the warm-up is off. Other callers: upstream's defaults.
 */
export function phoneLineOptions(
  caller: Pick<RemoteParticipant, 'kind'>,
): Partial<voice.AgentSessionOptions> {
  return caller.kind === ParticipantKind.SIP ? { aecWarmupDuration: null } : {};
}

async function defaultSession(
  ctx: JobContext,
  options: RoomAgentOptions,
  caller: Pick<RemoteParticipant, 'identity' | 'kind'>,
): Promise<voice.AgentSession> {
  const openai = await loadOptional(
    () => import('@livekit/agents-plugin-openai'),
    '@livekit/agents-plugin-openai',
    'speech and the model in a room (roomAgent)',
  );
  // The key is read per call: the plugin's defaults read it once, when it is imported.
  const apiKey = process.env.OPENAI_API_KEY;
  const session = new voice.AgentSession({
    ...phoneLineOptions(caller),
    vad: ctx.proc.userData.vad as voice.AgentSessionOptions['vad'],
    stt: new openai.STT({ model: 'gpt-4o-transcribe', useRealtime: false, apiKey }),
    llm: new openai.LLM({
      model: options.model ?? process.env.OPENAI_MODEL ?? 'gpt-4o-mini',
      apiKey,
    }),
    tts: new openai.TTS({ voice: options.voice ?? 'alloy', apiKey }),
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
  /**
   * Most calls this worker process serves at once: a hard limit. The worker reports its
   * load as calls over this limit (full at the limit) and refuses job requests past it,
   * which the server then offers to another worker. Default: upstream's CPU-based load.
   */
  maxCalls?: number;
}

/**
 * Upstream `ServerOptions` for a worker file whose default export is a {@link roomAgent}:
 * `cli.runApp(roomServerOptions(import.meta.url, { agentName: 'bank-line', maxCalls: 20 }))`.
 * Checks first, before the worker registers, that the plugins a `roomAgent` without
 * `createSession` needs are installed: if not, it says so at error level and throws
 * `missing_dependency` (the process exits non-zero) instead of a worker whose job processes
 * fail one after another.
 */
export function roomServerOptions(fileUrl: string, options: RoomServerOptions): ServerOptions {
  const missing = missingRoomPlugins();
  if (missing.length > 0) {
    const error = missingPlugins(missing);
    sayError(error);
    process.exitCode = 1;
    throw error;
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(options.agentName)) {
    throw new TasklineError(
      'invalid_argument',
      `agentName ${JSON.stringify(options.agentName)} is not usable for dispatch: use 1-64 letters, digits, ".", "_" or "-".`,
    );
  }
  const limit =
    options.maxCalls === undefined ? undefined : new CallLimiter(options.maxCalls).options();
  return new ServerOptions({
    agent: fileURLToPath(fileUrl),
    agentName: options.agentName,
    ...limit,
  });
}

/** True when the file at `fileUrl` is the script node was started with. */
export function isMainModule(fileUrl: string): boolean {
  return process.argv[1] === fileURLToPath(fileUrl);
}
