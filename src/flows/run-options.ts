/**
 * What a flow run is given and what it tells: its options, its events, and the line a
 * resumed call hears.
 */
import type { llm } from '@livekit/agents';
import type { CheckpointInfo, ClaimResult } from './checkpointing.js';
import type { CheckpointKey, CheckpointStore } from './checkpoints/types.js';
import { type FlowDefinition, stepById } from './definition.js';
import type { FlowEnding } from './ending.js';
import type { SealKeys } from './secrets.js';
import { END, type StepRecord } from './types.js';

/** What the default resume line and a custom one are told. */
export interface ResumeInfo {
  flow: string;
  callId: string;
  /** The step the call continues at. */
  step: string;
  /** That step's label, if it has one. */
  label?: string;
  /** Steps already answered (or skipped). */
  answered: number;
  /**
   * Masked answers the checkpoint did not hold (a PIN), asked again first, in order; their
   * labels (or ids) are in `reaskLabels`.
   */
  reask: string[];
  /** Labels (or ids) of the `reask` steps. */
  reaskLabels: string[];
  /** True when every answer asked again is a masked one (withheld from the checkpoint). */
  reaskMasked: boolean;
}

/** Events of a running flow; subscribe with {@link FlowTask.on} or the run options. */
export interface FlowEvents {
  step_started: [{ step: string; visit: number }];
  step_completed: [StepRecord];
  checkpoint: [CheckpointInfo];
  resumed: [ResumeInfo];
}

/** Options for one run of a flow (`flow.create(options)` / `flow.run(options)`). */
export interface FlowRunOptions {
  /** Where to checkpoint after every step; without one nothing survives the session. */
  checkpoints?: CheckpointStore;
  /** The call to checkpoint under. Default `callOf(session).callId`. */
  callId?: string;
  /** Checkpoint key of the flow run (default the flow's name). */
  checkpointKey?: string;
  /** Chat history the flow starts from (for `'full'` and `'model-summary'` contexts). */
  chatCtx?: llm.ChatContext;
  /** What to say when a call resumes (no model); `false` says nothing. */
  resumeLine?: false | ((info: ResumeInfo) => string);
  /**
   * A checkpoint that already completed: start the call afresh (default) or return its
   * result without asking anything (`'return'`: the answers are re-checked first, as on a
   * resume). Keyed by a caller's number, `'restart'` is what a caller dialling again expects.
   */
  ifCompleted?: 'return' | 'restart';
  /**
   * A stored checkpoint that does not hold up (corrupt, forged, an answer that fails its
   * step, another version with no migration): the flow ends `failed` with `error.code`
   * `checkpoint_refused` and `refused` saying why, writing nothing (default), or starts the
   * call afresh over it (`'restart'`).
   */
  ifRefused?: 'fail' | 'restart';
  /**
   * A checkpoint last written longer ago than this (on the call's clock) is not resumed:
   * the call starts afresh. Default 30 minutes; `Infinity` resumes whenever the caller
   * comes back.
   */
  resumeWindowMs?: number;
  /**
   * Keys (32 bytes, AES-256-GCM) that seal masked answers (a PIN, a card number) in the
   * checkpoint, so a resumed call need not ask them again. The first key seals; every key
   * opens (list the old one second while rotating). Without keys a masked answer is never
   * stored: a resumed call asks it again.
   */
  sealKeys?: SealKeys;
  /** Called after each step, once its checkpoint is written. */
  onStepCompleted?: (record: StepRecord) => void;
  /** Called after each checkpoint write. */
  onCheckpoint?: (info: CheckpointInfo) => void;
  /**
   * How the call ends once the flow does: a goodbye chosen by the result, then the bot ends
   * the call (see {@link FlowEnding}). Without it the flow just returns and the agent decides,
   * except after losing a checkpoint race (`conflict`): this session no longer owns the call,
   * so it says so and ends the call.
   */
  onEnd?: FlowEnding;
  /**
   * Longest wait for one checkpoint read or write, on the call's clock (default 10,000 ms).
   * A store that fails or stays silent ends the flow as `failed` with the answers so far and
   * the store's `error`; nothing is retried behind the caller's back.
   */
  checkpointTimeoutMs?: number;
}

/** The default resume line: where the caller was, in words. */
export function defaultResumeLine(info: ResumeInfo): string {
  const where = info.label
    ? `Welcome back. We'll pick up where we left off: ${info.label}.`
    : `Welcome back. We'll pick up where we left off, at question ${info.answered + 1}.`;
  if (info.reask.length === 0) return where;
  const what = info.reaskLabels.join(' and ');
  return info.reaskMasked
    ? `${where} For your security, I need to ask for ${what} again first.`
    : `${where} First, I need to ask for ${what} again.`;
}

/** What a resumed call is told (and `resumed` listeners get); undefined once at the end. */
export function resumeInfo(
  def: FlowDefinition,
  key: CheckpointKey,
  claimed: ClaimResult,
): ResumeInfo | undefined {
  const state = claimed.state;
  const at = claimed.resumeAt ?? state.position;
  if (at === END) return undefined;
  const reask = claimed.reask ?? [];
  return {
    flow: def.name,
    callId: key.callId,
    step: at,
    label: stepById(def, at)?.label,
    answered: state.path.length,
    reask,
    reaskLabels: reask.map((id) => stepById(def, id)?.label ?? id),
    reaskMasked: reask.every((id) => claimed.secret?.includes(id)),
  };
}
