import type { llm, voice } from '@livekit/agents';
import type { Room } from '@livekit/rtc-node';
import type { CheckpointStore } from '../flows/checkpoints/types.js';
import type { Dialer } from '../telephony/outbound/dialer.js';
import type { Transferer, TransferMode } from '../telephony/transfer.js';
import type { Redispatch } from './guardian/protocol.js';

/**
 * One caller turn, written as in a scenario file's `turns` — the one format for callers:
 * `taskline test`, `taskline run --script`, a module's `demoScript` and
 * `SimulatedCaller.play`. Durations are milliseconds or "800ms", "8s", "1.5s". A `keys` turn
 * is one keypad entry: the caller presses the keys, then waits for the agent, so an entry
 * the agent still collects ends with its inter-digit timeout, as on a phone.
 */
export type CallerTurn =
  | 'hangup'
  | { say: string }
  | { keys: string; mask?: boolean; gap?: number | string; after?: number | string }
  | { silence: number | string }
  | { barge_in: string; after?: number | string }
  | { tone: { hz: number; ms: number } }
  | { hangup: true };

/**
 * The earlier JSON form of caller actions (`{"dtmf": "123", "gapMs": 250}`, `bargeIn`).
 * @deprecated Write {@link CallerTurn}s (`keys`, `gap`, `barge_in`), as in scenario files;
 * this form is still read (with a deprecation notice from `taskline run`).
 */
export type CallerAction =
  | { say: string }
  | { bargeIn: string }
  | { dtmf: string; gapMs?: number; mask?: boolean }
  | { silence: number }
  | { tone: { hz: number; ms: number } }
  | { hangup: true };

/** True for an entry in the earlier {@link CallerAction} form (it has `dtmf` or `bargeIn`). */
export function isCallerAction(entry: unknown): entry is CallerAction {
  return typeof entry === 'object' && entry !== null && ('dtmf' in entry || 'bargeIn' in entry);
}

/** A caller entry in the one turn format (an earlier {@link CallerAction} is converted). */
export function toCallerTurn(entry: CallerTurn | CallerAction): CallerTurn {
  if (typeof entry === 'object' && 'bargeIn' in entry) return { barge_in: entry.bargeIn };
  if (typeof entry === 'object' && 'dtmf' in entry) {
    return {
      keys: entry.dtmf,
      ...(entry.gapMs !== undefined ? { gap: entry.gapMs } : {}),
      ...(entry.mask !== undefined ? { mask: entry.mask } : {}),
    };
  }
  return entry as CallerTurn;
}

/** A running call's agent and a way to read its typed result once the call ends. */
export interface CallInstance<R = unknown> {
  agent: voice.Agent;
  /** The call's typed result so far (e.g. the flow's answers); printed by the runner. */
  result(): R;
}

/**
 * What a runner hands a module when it starts a call. The LiveKit room entry
 * (`roomAgent`) fills every field; the terminal runner and tests pass nothing, and a
 * module then uses its demo stand-ins (e.g. a recording transferer).
 */
export interface CallSetup {
  /** The call's session, its call context attached (not started yet). */
  session: voice.AgentSession;
  /** The LiveKit room the call runs in. */
  room?: Room;
  /** The caller's participant identity (bound to DTMF, hang-up and RoomIO). */
  callerIdentity?: string;
  /**
   * The caller's number (E.164), only when their SIP trunk presented a valid one: the one
   * thing safe to key a resumable call on. Absent for withheld or anonymous callers.
   */
  callerNumber?: string;
  /**
   * How this deployment hands the caller to a person (LiveKit SIP: cold REFER or warm
   * transfer). Never a test double in a room; a transfer it cannot make resolves
   * `{ ok: false, reason }`.
   */
  transferer?: Transferer;
  /** Where the deployment sends transfers (`TASKLINE_TRANSFER_TO`), if configured. */
  transferTo?: string;
  /** How the deployment transfers (`TASKLINE_TRANSFER_MODE`, default cold). */
  transferMode?: TransferMode;
  /**
   * How an outbound call is placed (LiveKit SIP from the room entry's `outbound` option;
   * absent for inbound calls and in the terminal runner, where a module uses its demo dialer).
   */
  dialer?: Dialer;
  /** The job's metadata as dispatched (for an outbound call: who to call and why). */
  metadata?: string;
  /**
   * Where a module that checkpoints writes, when the runner provides a store (`taskline
   * test` passes one that records every write, for `checkpoint:` expectations).
   */
  checkpoints?: CheckpointStore;
  /**
   * The call's id, the same for every job dispatched into its room (the room's sid); also
   * the call context's `callId`, so a flow checkpointing under it is found again by a job
   * the guardian re-dispatched after this one's worker died. Set by the room entry.
   */
  callKey?: string;
  /**
   * Set when this job was dispatched by the guardian because the call's previous agent was
   * lost (its worker died): continue the call from its checkpoint, apologise in one line,
   * and ask nothing already answered. Only modules with `canResume` are started so.
   */
  resumed?: Redispatch;
  /** The metadata of the call's first dispatch (a re-dispatch carries it unchanged). */
  dispatchMetadata?: string;
}

/**
 * The demo parts of a module: a scripted model so the bot runs with no API key, the caller
 * side of the demo call, and (rarely) a demo-only way to build the call, e.g. with scripted
 * sub-agents. They live in a sibling file (`demo.ts`) so production code never imports
 * `taskline/testing`.
 */
export interface CallDemo<R = unknown> {
  /** A scripted model (keyed by agent/task, see ScriptedLLM). */
  createScriptedModel?(): llm.LLM;
  /** The demo call's caller side (scenario turns; the earlier action form is still read). */
  demoScript?: readonly (CallerTurn | CallerAction)[];
  /** Builds the call when the scripted model is used (defaults to the module's `createCall`). */
  createCall?: CallModule<R>['createCall'];
}

/**
 * A bot packaged so every runner can start it: the README demo and tests (scripted
 * model + simulated caller), `npx taskline run` in a terminal, and a LiveKit room. Only
 * `name`, `description` and `createCall` are needed in production; the demo parts are
 * optional, inline or loaded on first use with `demo: () => import('./demo.js')`.
 */
export interface CallModule<R = unknown> {
  name: string;
  description: string;
  /**
   * Builds a fresh call: its first agent and how to read its result. `setup` is given by
   * the room entry (room, caller, session, transferer) and absent in the terminal runner.
   */
  createCall(setup?: CallSetup): CallInstance<R>;
  /** A scripted model so the bot runs with no API key (keyed by agent/task, see ScriptedLLM). */
  createScriptedModel?(): llm.LLM;
  /** The demo call's caller side (scenario turns; the earlier action form is still read). */
  demoScript?: readonly (CallerTurn | CallerAction)[];
  /** Loads the demo parts from a sibling file when a runner needs them. */
  demo?: () => Promise<CallDemo<R>>;
  /**
   * Whether a job the guardian re-dispatched (`setup.resumed`) can continue this call, e.g.
   * its flow has an unfinished checkpoint under `setup.callKey`. Without it, or when it
   * answers false, the room entry apologises and ends the call rather than start the module
   * afresh, which would ask again what the caller already answered.
   */
  canResume?(setup: CallSetup): boolean | Promise<boolean>;
}

/** Declares a {@link CallModule} with its result type inferred. */
export function defineCallModule<R>(module: CallModule<R>): CallModule<R> {
  return module;
}

/**
 * The demo parts of `module`: its `demo()` file merged over the inline fields. Resolves
 * an empty object for a production module that has none.
 */
export async function loadCallDemo<R>(module: CallModule<R>): Promise<CallDemo<R>> {
  const loaded = module.demo ? await module.demo() : {};
  return {
    createScriptedModel: loaded.createScriptedModel ?? module.createScriptedModel,
    demoScript: loaded.demoScript ?? module.demoScript,
    createCall: loaded.createCall,
  };
}
