/**
 * Where a flow goes: the `go_back` tool a caller uses to change an earlier answer, the
 * fast-forward over answers that still apply after such a revisit, pruning answers the new
 * path no longer passes, and the walk of the answers from the first step. Functions of the
 * flow's definition and state: the runner decides when to call them.
 */
import { llm, type voice } from '@livekit/agents';
import { z } from 'zod/v4';
import type { Outcome } from '../outcome.js';
import type { FlowState } from './checkpoints/types.js';
import { type FlowDefinition, listens, type StepDef, stepById } from './definition.js';
import {
  type PickFailure,
  type ResolveOptions,
  resolveNext,
  type StepEntry,
  valuesOf,
} from './graph.js';
import { END } from './types.js';

/** The go-back tool's name, as models (and scripts) call it. */
export const GO_BACK_TOOL = 'go_back';

/** Go-backs a call may make unless the flow says otherwise. */
export const DEFAULT_MAX_BACK_STEPS = 3;

/** What the go-back tool reports back to the runner. */
export interface GoBackHooks {
  /** True while `task` is still the step the caller is on. */
  isCurrent(task: voice.AgentTask<Outcome<unknown>>): boolean;
  /** The caller asked to return to `target`; the runner jumps there once the step ends. */
  jump(target: string): void;
}

/** The `go_back` tool for a step, when the caller has somewhere to go back to. */
export function goBackTool(
  def: FlowDefinition,
  state: FlowState,
  step: StepDef,
  task: voice.AgentTask<Outcome<unknown>>,
  hooks: GoBackHooks,
): llm.ToolContextEntry | undefined {
  const max = def.options.maxBackSteps ?? DEFAULT_MAX_BACK_STEPS;
  if (!listens(step) || state.backSteps >= max) return undefined;
  const targets = state.path.filter(
    (id) => id !== step.id && stepById(def, id)?.canRevisit && isHeld(state.entries[id]),
  );
  if (targets.length === 0) return undefined;
  const described = Object.fromEntries(targets.map((id) => [id, stepById(def, id)?.label ?? id]));
  return llm.tool({
    name: GO_BACK_TOOL,
    description:
      'Call this when the caller wants to change an answer they gave earlier. ' +
      `Pass the id of the step to return to. Steps they can return to: ${JSON.stringify(described)}`,
    flags: llm.ToolFlag.IGNORE_ON_ENTER,
    parameters: goBackParameters(def, targets),
    execute: async ({ step: target }: { step: string }) => {
      if (!hooks.isCurrent(task) || task.done) {
        throw new llm.ToolError('This question is already finished; nothing to go back from.');
      }
      hooks.jump(target);
      // An outcome, not an Error: the caller's turn then ends normally (an Error would
      // become the run's final output and reject it).
      task.complete({ status: 'cancelled', attempts: 0, reason: `went back to ${target}` });
    },
  });
}

function goBackSchema(targets: string[]) {
  return z.object({
    step: z.enum(targets as [string, ...string[]]).describe('The step to return to'),
  });
}

const goBackSchemas = new WeakMap<FlowDefinition, Map<string, ReturnType<typeof goBackSchema>>>();

/**
 * The go-back tool's parameters for a set of targets, built once per flow and set: a zod
 * schema is costly to build and the same few sets recur on every call.
 */
function goBackParameters(def: FlowDefinition, targets: string[]): ReturnType<typeof goBackSchema> {
  let byTargets = goBackSchemas.get(def);
  if (!byTargets) {
    byTargets = new Map();
    goBackSchemas.set(def, byTargets);
  }
  const key = targets.join('\u0000');
  let schema = byTargets.get(key);
  if (!schema) {
    schema = goBackSchema(targets);
    byTargets.set(key, schema);
  }
  return schema;
}

/** After a revisit: skip ahead over answers that still apply, up to where the caller was. */
export async function fastForward(
  def: FlowDefinition,
  state: FlowState,
  from: string,
  stopAt: string | undefined,
  options: ResolveOptions,
): Promise<string> {
  let cur = from;
  const seen = new Set<string>();
  const answers = valuesOf(state.entries);
  while (cur !== END && cur !== stopAt && isHeld(state.entries[cur]) && !seen.has(cur)) {
    seen.add(cur);
    cur = (await resolveNext(def, stepById(def, cur)!, state.entries[cur]!, answers, options)).to;
  }
  return cur;
}

/** Drops answers the new path no longer passes through. */
export async function prune(
  def: FlowDefinition,
  state: FlowState,
  position: string,
  options: ResolveOptions,
): Promise<void> {
  const walk = await walkAnswers(def, state.entries, options, position);
  for (const id of Object.keys(state.entries)) {
    if (!walk.path.includes(id)) delete state.entries[id];
  }
  state.path = walk.path;
}

/** True for an entry whose answer (or skip) the running flow holds. */
export function isHeld(entry: StepEntry | undefined): entry is StepEntry {
  return entry !== undefined && !entry.withheld;
}

/** The path the answers take from the first step, up to `until` or the first gap. */
export async function walkAnswers(
  def: FlowDefinition,
  entries: Record<string, StepEntry>,
  options: ResolveOptions,
  until?: string,
): Promise<{ path: string[]; position: string }> {
  const path: string[] = [];
  let cur = def.steps[0]!.id;
  const answers = valuesOf(entries);
  while (cur !== END && cur !== until && isHeld(entries[cur]) && !path.includes(cur)) {
    path.push(cur);
    cur = (await resolveNext(def, stepById(def, cur)!, entries[cur]!, answers, options)).to;
  }
  return { path, position: cur };
}

/** Where the flow goes after a step, and whether a resumed call is still asking again. */
export interface Advance {
  next: string;
  refilling: boolean;
  /** An async pick failed and its `onError` target was taken. */
  pickError?: PickFailure;
}

/**
 * Where the flow goes after `step` left `entry`, with the path and answers updated for it:
 * through the rest of a go-back or of a resumed call's re-asked answers, or back round a
 * loop (the answers from the step it returns to on are dropped: they are asked again).
 * Throws a PickFailure when a pick fails with no `onError`.
 */
export async function advance(
  def: FlowDefinition,
  state: FlowState,
  step: StepDef,
  entry: StepEntry,
  ctx: { resolve: ResolveOptions; refilling: boolean; answers: Record<string, unknown> },
): Promise<Advance> {
  const options = ctx.resolve;
  if (ctx.refilling) {
    // Re-walk with the answer given again: on to the next withheld answer, or back to where
    // the caller was (or wherever the new answer leads).
    const walk = await walkAnswers(def, state.entries, options);
    const next = walk.position;
    if (state.entries[next]?.withheld) return { next, refilling: true };
    await prune(def, state, next, options);
    return { next, refilling: false };
  }
  const resolved = await resolveNext(def, step, entry, ctx.answers, options);
  const pickError = resolved.error ? { pickError: resolved.error } : {};
  let next = resolved.to;
  if (state.revisit?.step === step.id) {
    next = await fastForward(def, state, next, state.revisit.returnTo, options);
    delete state.revisit;
    await prune(def, state, next, options);
    return { next, refilling: false, ...pickError };
  }
  if (!state.path.includes(step.id)) state.path.push(step.id);
  if (next !== END && state.path.includes(next)) await prune(def, state, next, options);
  return { next, refilling: false, ...pickError };
}
