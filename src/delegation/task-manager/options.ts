/**
 * The TaskManager's settings: the defaults, the options a host passes, and their checked
 * values (a bad number fails at construction with a message naming the option).
 */
import type { APIConnectOptions, llm } from '@livekit/agents';
import type { Clock } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import type { FileBackend } from '../../tools/files/backend.js';
import type { ReplyInstructions } from '../channel.js';
import { DELIVER_AT, type DeliverAt } from '../floor.js';
import type { DelegationStore } from '../record.js';
import {
  type AnySubAgent,
  GENERAL_PURPOSE,
  GENERAL_PURPOSE_DESCRIPTION,
  GENERAL_PURPOSE_INSTRUCTIONS,
  isVoiceSpecialist,
  type SubAgentSpec,
} from '../subagent.js';
import { DEFAULT_SUMMARY_CHARS } from '../summary.js';
import type { SubAgentInfo, TaskMode, TaskSnapshot } from '../types.js';

/** Default time a `task` call waits inline in `auto` mode before releasing the turn. */
export const DEFAULT_INLINE_WINDOW_MS = 2_000;
/** Default cap on an explicit foreground wait before the turn is released anyway. */
export const DEFAULT_FOREGROUND_CAP_MS = 20_000;
/** Default tasks (started by the voice agent or host) running at once. */
export const DEFAULT_MAX_PARALLEL = 4;
/** Default tasks waiting for a slot before new ones are refused. */
export const DEFAULT_QUEUE_LIMIT = 8;
/** Default nesting: the voice agent's sub-agents may delegate once more. */
export const DEFAULT_MAX_DEPTH = 2;
/** Default time a task may take from its creation. */
export const DEFAULT_TASK_TIMEOUT_MS = 120_000;
/** Default model turns of one headless run. */
export const DEFAULT_MAX_TURNS = 20;
/** Default window in which completions are gathered into one spoken reply. */
export const DEFAULT_COALESCE_MS = 250;

/** Options for {@link TaskManager}. */
export interface TaskManagerOptions {
  /** Sub-agent types besides the general-purpose one. */
  subagents?: readonly AnySubAgent[];
  /** Offer the general-purpose sub-agent (default true), optionally customized. */
  generalPurpose?:
    | boolean
    | Partial<Pick<SubAgentSpec, 'description' | 'instructions' | 'maxTurns' | 'llm' | 'tools'>>;
  /**
   * Default model for headless sub-agents without their own. Give sub-agents their own
   * instance, not the voice session's: upstream counts a model's errors against every
   * session listening to it.
   */
  llm?: llm.LLM;
  /** Retry and timeout of sub-agent model calls (upstream's defaults otherwise). */
  connOptions?: APIConnectOptions;
  /** Models the `task` tool may pick by name when `allowModelOverride` is on. */
  models?: Readonly<Record<string, llm.LLM>>;
  /** Let the model (and host) choose a sub-agent's model from `models` (default false). */
  allowModelOverride?: boolean;
  /** The parent's file backend: results and merged child files land here. */
  files?: FileBackend;
  /** Where task records live (in memory by default). */
  store?: DelegationStore;
  /** Timers; the attached call's clock by default. */
  clock?: Clock;
  /** Mode when the model does not say (default `auto`). */
  defaultMode?: TaskMode;
  /** `auto` answers inline when done within this long (default 2 s). */
  inlineWindowMs?: number;
  /** Longest inline wait of an explicit foreground request (default 20 s). */
  foregroundCapMs?: number;
  /** Top-level tasks running at once (default 4). Nested tasks run in their parent's slot. */
  maxParallel?: number;
  /** Tasks waiting for a slot (default 8); 0 refuses a task when all slots are busy. */
  queueLimit?: number;
  /** Deepest nesting (default 2): depth-`maxDepth` sub-agents get no `task` tool. */
  maxDepth?: number;
  /** Time a task may take from its creation (default 2 min); a timeout keeps partial output. */
  timeoutMs?: number;
  /** Model turns of one headless run (default 20). */
  maxTurns?: number;
  /** Keep tasks running after the call ends, as durable records (default false: cancel). */
  keepRunningAfterCall?: boolean;
  /**
   * Results ready within this long of the first one are spoken in one reply (default
   * 250 ms on the call's clock, cut short when no other task is queued or running; 0 hands
   * each over at once).
   */
  coalesceMs?: number;
  /**
   * When a finished task's result is spoken (see {@link DeliverAt}): `step` (default) at the
   * next safe moment, never between a question and its answer; `idle` only when no step is
   * in progress; `interrupt` as soon as the line is idle, asking an open question again after.
   */
  deliverAt?: DeliverAt;
  /**
   * Words to say for a finished task instead of a reply the voice agent's model words (an
   * IVR bot without a model, or a result that must be said exactly). Return undefined to let
   * the model word that one. Per task: {@link StartTaskOptions.resultLine}.
   */
  resultLine?: (task: TaskSnapshot) => string | undefined;
  /** Longest spoken summary (default 300 characters). */
  summaryChars?: number;
  /** The sentence suggested to the voice agent when a task goes to the background. */
  releaseLine?: (task: TaskSnapshot) => string;
  /** Instructions of the deferred reply that speaks results. */
  replyInstructions?: ReplyInstructions;
  /** The voice agent's identity in task records (default `voice-agent`). */
  agentId?: string;
  /** Prefix of record ids, unique per manager (random by default). */
  namespace?: string;
}

/** A task the host starts directly (not through the model). */
export interface StartTaskOptions {
  subagentType: string;
  description: string;
  prompt?: string;
  /** Continue an earlier task's sub-agent conversation. */
  taskId?: string;
  /** A model name from `models` (needs `allowModelOverride`). */
  model?: string;
  /** Speak the completion into the attached call (default: true when a call is attached). */
  notify?: boolean;
  /**
   * Words to say when the result is delivered (instead of a reply the model words), e.g.
   * `(t) => \`Your complaint is filed: ${t.result?.summary}\``; overrides the manager's.
   */
  resultLine?: (task: TaskSnapshot) => string | undefined;
}

/** `value` when it is a finite number of at least `min`, `fallback` when absent. */
export function positive(
  name: string,
  value: number | undefined,
  fallback: number,
  min = 1,
): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < min) {
    throw new TasklineError(
      'invalid_argument',
      `${name} must be a number of at least ${min}, got ${value}.`,
    );
  }
  return value;
}

/** The numeric settings of a manager, checked. */
export interface ManagerLimits {
  inlineWindowMs: number;
  foregroundCapMs: number;
  maxParallel: number;
  queueLimit: number;
  maxDepth: number;
  timeoutMs: number;
  maxTurns: number;
  summaryChars: number;
  coalesceMs: number;
  deliverAt: DeliverAt;
}

/** Checks the numeric options and fills in the defaults. */
export function managerLimits(options: TaskManagerOptions): ManagerLimits {
  return {
    inlineWindowMs: positive('inlineWindowMs', options.inlineWindowMs, DEFAULT_INLINE_WINDOW_MS, 0),
    foregroundCapMs: positive(
      'foregroundCapMs',
      options.foregroundCapMs,
      DEFAULT_FOREGROUND_CAP_MS,
      0,
    ),
    maxParallel: positive('maxParallel', options.maxParallel, DEFAULT_MAX_PARALLEL),
    queueLimit: positive('queueLimit', options.queueLimit, DEFAULT_QUEUE_LIMIT, 0),
    maxDepth: positive('maxDepth', options.maxDepth, DEFAULT_MAX_DEPTH),
    timeoutMs: positive('timeoutMs', options.timeoutMs, DEFAULT_TASK_TIMEOUT_MS),
    maxTurns: positive('maxTurns', options.maxTurns, DEFAULT_MAX_TURNS),
    summaryChars: positive('summaryChars', options.summaryChars, DEFAULT_SUMMARY_CHARS, 20),
    coalesceMs: positive('coalesceMs', options.coalesceMs, DEFAULT_COALESCE_MS, 0),
    deliverAt: deliverAtOf(options.deliverAt),
  };
}

function deliverAtOf(value: DeliverAt | undefined): DeliverAt {
  if (value === undefined) return 'step';
  if (!DELIVER_AT.includes(value)) {
    throw new TasklineError(
      'invalid_argument',
      `deliverAt must be one of ${DELIVER_AT.join(', ')}, got ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

/** The sub-agent types a manager offers, by name: the general-purpose one unless turned off. */
export function subagentRegistry(options: TaskManagerOptions): Map<string, AnySubAgent> {
  const types = new Map<string, AnySubAgent>();
  if (options.generalPurpose !== false) {
    const gp =
      options.generalPurpose === true || options.generalPurpose === undefined
        ? {}
        : options.generalPurpose;
    types.set(GENERAL_PURPOSE, {
      kind: 'headless',
      name: GENERAL_PURPOSE,
      description: gp.description ?? GENERAL_PURPOSE_DESCRIPTION,
      instructions: gp.instructions ?? GENERAL_PURPOSE_INSTRUCTIONS,
      deepAgentTools: true,
      ...(gp.tools ? { tools: gp.tools } : {}),
      ...(gp.llm ? { llm: gp.llm } : {}),
      ...(gp.maxTurns ? { maxTurns: gp.maxTurns } : {}),
    });
  }
  for (const spec of options.subagents ?? []) {
    positive(`timeoutMs of sub-agent "${spec.name}"`, spec.timeoutMs, 1);
    if (types.has(spec.name)) {
      throw new TasklineError(
        'invalid_argument',
        `Two sub-agents are named "${spec.name}"; names must be unique.`,
      );
    }
    types.set(spec.name, spec);
  }
  if (types.size === 0) {
    throw new TasklineError(
      'invalid_argument',
      'A TaskManager needs at least one sub-agent: keep the general-purpose one or pass subagents.',
    );
  }
  if (options.allowModelOverride && Object.keys(options.models ?? {}).length === 0) {
    throw new TasklineError(
      'invalid_argument',
      'allowModelOverride needs `models` to choose from.',
    );
  }
  return types;
}

/** The sub-agent types offered at `depth` (voice specialists only to the voice agent). */
export function describeTypes(
  types: ReadonlyMap<string, AnySubAgent>,
  depth: number,
): SubAgentInfo[] {
  const out: SubAgentInfo[] = [];
  for (const spec of types.values()) {
    const kind = isVoiceSpecialist(spec) ? 'voice' : 'headless';
    if (kind === 'voice' && depth > 0) continue;
    out.push({ name: spec.name, description: spec.description, kind });
  }
  return out;
}
