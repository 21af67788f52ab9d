/**
 * What a scenario run needs from a mode (text or audio): session options, a caller that
 * plays turns and keeps the transcript, and per-turn measures. The run loop
 * (`run-call.ts`) is the same for both modes.
 */
import type { voice } from '@livekit/agents';
import type { TranscriptLine } from '../testing/simulated-caller.js';
import type { TurnStages } from './audio/stages.js';
import type { ScenarioSpec, TurnSpec } from './schema.js';

/** What the caller did in a turn, for latency figures. */
export type TurnInput = 'speech' | 'keys' | 'silence' | 'tone' | 'hangup';

/** The input kind of a turn. */
export function turnInput(turn: TurnSpec): TurnInput {
  if (turn === 'hangup' || 'hangup' in turn) return 'hangup';
  if ('keys' in turn) return 'keys';
  if ('silence' in turn) return 'silence';
  if ('tone' in turn) return 'tone';
  return 'speech';
}

/** What one turn measured. */
export interface TurnMeasure {
  /**
   * Caller input → first agent reply (ms): in text mode from the input to the agent's
   * first line; in audio mode from the end of the caller's speech (or the last key) to
   * the first agent audio. Undefined when the agent did not answer.
   */
  latencyMs?: number;
  /** Agent speeches cut off during the turn (barge-in, a key over a prompt). */
  interruptions: number;
  /** Audio mode, speech turns: where the time went (upstream's turn events and metrics). */
  stages?: TurnStages;
  /**
   * The agent was still speaking when the turn returned (the next turn talks over it): what
   * it says is known only once the next turn has cut it, so the turn's checks wait for that.
   */
  unsettled?: boolean;
}

/** The caller side of one running call. */
export interface CallDriver {
  /** Everything said and pressed so far, caller and agent. */
  readonly transcript: readonly TranscriptLine[];
  /** Ids of every agent and task that became active, in order. */
  readonly visited: readonly string[];
  readonly isClosed: boolean;
  /** Starts the session on `agent` and waits for the greeting (`first` is the first turn). */
  start(agent: voice.Agent, first?: TurnSpec): Promise<void>;
  /** Plays one caller turn and waits until the agent has answered and gone quiet. */
  perform(turn: TurnSpec, index: number, next: TurnSpec | undefined): Promise<TurnMeasure>;
  /** Ends the call (idempotent). */
  close(): Promise<void>;
}

/** What a mode may read of the scenario it runs a call for. */
export interface ScenarioOfCall {
  /** The scenario's file (absolute). */
  file: string;
  spec: ScenarioSpec;
}

/** A way to run calls: text (simulated caller) or audio (the real audio pipeline). */
export interface CallMode {
  readonly name: 'text' | 'audio';
  /** Session options this mode needs (STT, TTS, VAD in audio mode) for the call `callId`. */
  sessionOptions(callId?: string): Promise<Omit<voice.AgentSessionOptions, 'llm'>>;
  /**
   * The caller for `session`; called before the call is built (it attaches the call
   * context). `scenario` is the scenario being run (its caller voice and line, in audio mode).
   */
  attach(session: voice.AgentSession, callId: string, scenario?: ScenarioOfCall): CallDriver;
  /** Releases what the mode opened (servers, models). */
  close(): Promise<void>;
}

/** A short label of a turn for reports ("say: balance", "keys ****"). */
export function turnLabel(turn: TurnSpec): string {
  if (turn === 'hangup' || 'hangup' in turn) return 'hangup';
  if ('say' in turn) return `say "${turn.say}"`;
  if ('keys' in turn) return `keys ${turn.mask ? '*'.repeat(turn.keys.length) : turn.keys}`;
  if ('silence' in turn) return `silence ${String(turn.silence)}`;
  if ('tone' in turn) return `tone ${turn.tone.hz} Hz ${turn.tone.ms} ms`;
  return `barge_in "${turn.barge_in}"`;
}
