/**
 * Restoring a call from its checkpoint without trusting it: the stored state is read as
 * unknown data and checked field by field, written for this flow and call, carried over from
 * another version only by the app's migration, its sealed answers opened, every answer
 * checked against its step, and its position re-walked from the first step. Anything that
 * does not hold is a typed {@link CheckpointRefusal}, never an exception.
 */
import { z } from 'zod/v4';
import { TasklineError } from '../core/errors.js';
import { REPAIR_KINDS } from '../tasks/parsers/repair.js';
import { answerCheck } from './answer-check.js';
import type { CheckpointKey, FlowState } from './checkpoints/types.js';
import { type FlowDefinition, type StepDef, stepById } from './definition.js';
import {
  branchesOnValue,
  canSkip,
  isPick,
  type ResolveOptions,
  resolveNext,
  type StepEntry,
} from './graph.js';
import { open, type StoredEntry } from './secrets.js';
import { type CheckpointRefusal, END } from './types.js';

/** Most step records a checkpoint may hold (a report, not a log). */
const MAX_RECORDS = 10_000;

let stateSchemaBuilt: ReturnType<typeof buildStateSchema> | undefined;

/** The shape every stored flow state must have (built on first use, not at import). */
function stateSchema(): ReturnType<typeof buildStateSchema> {
  stateSchemaBuilt ??= buildStateSchema();
  return stateSchemaBuilt;
}

function buildStateSchema() {
  const id = z.string().min(1).max(256);
  const count = z.int().min(0).max(1_000_000);
  const time = z.number().finite();

  const entrySchema = z.object({
    value: z.unknown().optional(),
    skipped: z.boolean().optional(),
    escalated: z.boolean().optional(),
    withheld: z.boolean().optional(),
    sealed: z.string().max(1_000_000).optional(),
  });

  const recordSchema = z.object({
    step: id,
    visit: count,
    startedAt: time,
    endedAt: time,
    durationMs: z.number().finite(),
    attempts: count,
    noInput: count,
    noMatch: count,
    invalid: count,
    outcome: z.string().max(64),
    modality: z.string().max(32).optional(),
    next: id.optional(),
    reason: z.string().max(10_000).optional(),
    repairs: z.array(z.enum(REPAIR_KINDS)).max(100).optional(),
  });

  const STATUSES = [
    'running',
    'completed',
    'failed',
    'escalated',
    'hangup',
    'cancelled',
    'transferred',
    'conflict',
  ] as const;

  return z.object({
    flow: id,
    callId: id,
    status: z.enum(STATUSES),
    position: id,
    entries: z.record(id, entrySchema),
    path: z.array(id).max(10_000),
    visits: z.record(id, count),
    records: z.array(recordSchema).max(MAX_RECORDS),
    backSteps: count,
    revisit: z.object({ step: id, returnTo: id }).optional(),
    resumes: count,
    owner: z.string().max(512),
    startedAt: time,
    endedAt: time.optional(),
    reason: z.string().max(10_000).optional(),
    step: id.optional(),
    version: z.union([z.number().finite(), z.string().max(256)]).optional(),
    savedAt: time.optional(),
  });
}

/** A checkpoint restored: the state to continue from, and masked answers to ask again. */
export interface Restored {
  ok: true;
  state: FlowState;
  /** Steps whose answers the checkpoint did not hold (withheld masked answers), in path order. */
  reask: string[];
  /** Those of `reask` that the checkpoint withheld because they are secret (masked). */
  secret: string[];
  /** Where the caller was, in the flow (the step after the last answer). */
  resumeAt: string;
}

/** What {@link restoreCheckpoint} needs besides the stored state. */
export interface RestoreContext {
  key: CheckpointKey;
  /** Keys that open sealed answers. */
  sealKeys?: readonly Uint8Array[];
  /** Bounds the picks the re-walk runs. */
  resolve: ResolveOptions;
}

/** Reads what a status field says, without trusting anything else in the row. */
export function storedStatus(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const status = (raw as { status?: unknown }).status;
  return typeof status === 'string' ? status : undefined;
}

/** When the stored state was last written, on the call clock, if it says. */
export function storedSavedAt(raw: unknown): number | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const at = (raw as { savedAt?: unknown }).savedAt;
  return typeof at === 'number' && Number.isFinite(at) ? at : undefined;
}

/**
 * Checks a stored state and re-walks its answers; the state to continue from, or why it
 * is refused.
 */
export async function restoreCheckpoint(
  def: FlowDefinition,
  raw: unknown,
  ctx: RestoreContext,
): Promise<Restored | { ok: false; refusal: CheckpointRefusal }> {
  try {
    return await restore(def, raw, ctx);
  } catch (error) {
    if (error instanceof Refused) return { ok: false, refusal: error.refusal };
    throw error;
  }
}

class Refused extends Error {
  constructor(readonly refusal: CheckpointRefusal) {
    super(refusal.message);
  }
}

function refuse(code: CheckpointRefusal['code'], message: string, step?: string): never {
  throw new Refused({ code, message, ...(step ? { step } : {}) });
}

async function restore(def: FlowDefinition, raw: unknown, ctx: RestoreContext): Promise<Restored> {
  const parsed = stateSchema().safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length ? issue.path.join('.') : 'the state';
    refuse('corrupt', `The stored state is not a flow state: ${field}: ${issue.message}.`);
  }
  const saved = parsed.data as FlowState & { entries: Record<string, StoredEntry> };
  if (saved.flow !== ctx.key.flow || saved.callId !== ctx.key.callId) {
    refuse(
      'corrupt',
      `The stored state was written for flow "${saved.flow}", call "${saved.callId}", not this one.`,
    );
  }
  const entries = openEntries(saved.entries, ctx);
  const version = def.options.version;
  let migrated = false;
  if (saved.version !== version) {
    migrated = true;
    migrate(def, saved, entries);
  }
  checkEntries(def, entries);
  if (!migrated) checkPath(def, saved, entries);
  const walk = await walkStored(def, entries, ctx.resolve);
  const keptPath = walk.path;
  const stoppedEarly = walk.stop !== 'gap';
  let diverged = false;
  if (!migrated) {
    const expected = saved.revisit?.returnTo ?? saved.position;
    const samePath = stoppedEarly
      ? keptPath.every((s, i) => saved.path[i] === s)
      : sameList(keptPath, saved.path);
    const samePosition =
      stoppedEarly ||
      walk.position === expected ||
      // mid-way through asking withheld answers again
      (saved.revisit === undefined && entries[saved.position]?.withheld === true);
    if (!samePath || !samePosition) {
      // A pick may decide otherwise now (its lookup answers differently): the walk decides.
      if (!decidedByPick(def, keptPath, saved.path)) {
        refuse(
          'position_mismatch',
          `The stored position "${saved.position}" does not follow from the answers (they lead to "${walk.position}").`,
          saved.position,
        );
      }
      diverged = true;
    }
    if (saved.revisit && !keptPath.includes(saved.revisit.step)) {
      refuse(
        'position_mismatch',
        `The stored go-back to "${saved.revisit.step}" is not on the path of the answers.`,
        saved.revisit.step,
      );
    }
    if (saved.status === 'completed' && walk.position !== END && !stoppedEarly) {
      refuse(
        'position_mismatch',
        `The call is stored as completed, but its answers stop at "${walk.position}".`,
        walk.position,
      );
    }
  }
  // Only what the walk reached is kept; a masked or unchecked answer it could not get past
  // is asked again, and so is everything after it.
  const kept: Record<string, StepEntry> = {};
  for (const step of keptPath) kept[step] = entries[step]!;
  const asked = keptPath.filter((s) => kept[s]!.withheld);
  if (walk.stop === 'withheld') {
    kept[walk.position] = { withheld: true };
    asked.push(walk.position);
  }
  const state: FlowState = {
    ...saved,
    entries: kept,
    path: walk.stop === 'withheld' ? [...keptPath, walk.position] : keptPath,
    visits: Object.fromEntries(
      Object.entries(saved.visits).filter(([step]) => stepById(def, step)),
    ),
    ...(version !== undefined ? { version } : {}),
  };
  if (version === undefined) delete state.version;
  const revisit =
    !migrated && !diverged && asked.length === 0 && saved.revisit ? saved.revisit : undefined;
  if (revisit) state.revisit = revisit;
  else delete state.revisit;
  state.position = asked[0] ?? (revisit ? revisit.step : walk.position);
  // Where the caller was: past the answers asked again, or the step they had gone back to.
  const resumeAt = asked.length > 0 || !revisit ? walk.position : revisit.step;
  const secret = asked.filter((id) => saved.entries[id]?.withheld === true);
  return { ok: true, state, reask: asked, secret, resumeAt };
}

/** Opens sealed answers; a sealed answer that does not open is refused. */
function openEntries(
  stored: Record<string, StoredEntry>,
  ctx: RestoreContext,
): Record<string, StepEntry> {
  const out: Record<string, StepEntry> = {};
  for (const [step, entry] of Object.entries(stored)) {
    const { sealed, ...rest } = entry;
    const kinds = [
      'value' in entry && entry.value !== undefined,
      entry.skipped === true,
      entry.withheld === true,
      sealed !== undefined,
    ].filter(Boolean).length;
    if (kinds > 1) {
      refuse('corrupt', `The stored answer of "${step}" is both given and not given.`, step);
    }
    if (sealed === undefined) {
      out[step] = rest;
      continue;
    }
    if (!ctx.sealKeys) {
      refuse(
        'sealed_answer',
        `The answer of "${step}" is sealed, but this flow run has no sealKeys to open it.`,
        step,
      );
    }
    const opened = open(ctx.sealKeys, ctx.key, step, sealed);
    if (!opened) {
      refuse(
        'sealed_answer',
        `The sealed answer of "${step}" does not open with the keys given (another key, another call's answer, or altered).`,
        step,
      );
    }
    out[step] = { ...rest, value: opened.value };
  }
  return out;
}

/** Applies the app's migration to a state of another version, or refuses it. */
function migrate(def: FlowDefinition, saved: FlowState, entries: Record<string, StepEntry>): void {
  const from = saved.version;
  const to = def.options.version;
  const describe = (v: unknown) =>
    v === undefined ? 'no version' : `version ${JSON.stringify(v)}`;
  const fn = def.options.migrate;
  if (!fn) {
    refuse(
      'version_mismatch',
      `The call was checkpointed under ${describe(from)} of flow "${def.name}", which now has ${describe(to)}, and the flow has no migrate function.`,
    );
  }
  const answers: Record<string, unknown> = {};
  const skipped: string[] = [];
  for (const [step, entry] of Object.entries(entries)) {
    if (entry.skipped) skipped.push(step);
    else if (!entry.withheld && entry.value !== undefined) answers[step] = entry.value;
  }
  let result: ReturnType<typeof fn>;
  try {
    result = fn({ from, to, answers, skipped });
  } catch (error) {
    refuse(
      'version_mismatch',
      `Migrating the call from ${describe(from)} to ${describe(to)} failed: ${error instanceof Error ? error.message : String(error)}.`,
    );
  }
  if (result === undefined) {
    refuse(
      'version_mismatch',
      `The migration refused the call checkpointed under ${describe(from)}.`,
    );
  }
  if (typeof result !== 'object' || result === null || typeof result.answers !== 'object') {
    refuse('version_mismatch', 'The migration returned no { answers }.');
  }
  for (const key of Object.keys(entries)) delete entries[key];
  for (const [step, value] of Object.entries(result.answers ?? {})) entries[step] = { value };
  for (const step of result.skipped ?? []) entries[step] = { skipped: true };
  saved.path = [];
  delete saved.revisit;
}

/** Every answer names a step and fits it; answers nothing can check are withheld (asked again). */
function checkEntries(def: FlowDefinition, entries: Record<string, StepEntry>): void {
  for (const [stepId, entry] of Object.entries(entries)) {
    const step = stepById(def, stepId);
    if (!step) {
      refuse(
        'invalid_answer',
        `The stored answers name "${stepId}", which is not a step of flow "${def.name}".`,
        stepId,
      );
    }
    if (entry.skipped) {
      if (!canSkip(step)) {
        refuse(
          'invalid_answer',
          `Step "${stepId}" is stored as skipped, but it cannot be skipped.`,
          stepId,
        );
      }
      continue;
    }
    if (entry.escalated && typeof step.onFailure !== 'function') {
      refuse(
        'invalid_answer',
        `Step "${stepId}" is stored as escalated, but it has no escalation.`,
        stepId,
      );
    }
    if (entry.withheld) continue;
    const check = answerCheck(step);
    if (!check) {
      // Nothing says what this answer may be: it is asked again rather than trusted.
      entries[stepId] = { withheld: true };
      continue;
    }
    let ok: boolean;
    try {
      ok = check(entry.value);
    } catch {
      ok = false;
    }
    if (!ok) {
      refuse(
        'invalid_answer',
        `The stored answer of "${stepId}" is not a valid answer of that step.`,
        stepId,
      );
    }
  }
}

/** The stored path names each answered step once, and nothing else. */
function checkPath(
  def: FlowDefinition,
  saved: FlowState,
  entries: Record<string, StepEntry>,
): void {
  const seen = new Set<string>();
  for (const step of saved.path) {
    if (seen.has(step) || !entries[step]) {
      refuse(
        'position_mismatch',
        `The stored path names "${step}" ${seen.has(step) ? 'twice' : 'without an answer'}.`,
        step,
      );
    }
    seen.add(step);
  }
  for (const step of Object.keys(entries)) {
    if (!seen.has(step)) {
      refuse(
        'position_mismatch',
        `The answer of "${step}" is stored off the path the call took.`,
        step,
      );
    }
  }
  for (const step of [saved.position, saved.revisit?.returnTo].filter((s) => s !== undefined)) {
    if (step !== END && !stepById(def, step)) {
      refuse(
        'position_mismatch',
        `The stored position "${step}" is not a step of flow "${def.name}".`,
        step,
      );
    }
  }
  if (saved.revisit && !stepById(def, saved.revisit.step)?.canRevisit) {
    refuse(
      'position_mismatch',
      `The stored go-back returns to "${saved.revisit.step}", which cannot be revisited.`,
      saved.revisit.step,
    );
  }
}

/**
 * The answers walked from the first step: through withheld answers whose step goes on
 * the same way whatever the answer; stopped at the first gap (`gap`), at a withheld answer
 * the way on depends on (`withheld`), or at a branch that could not be decided (`withheld`
 * too: the step is asked again).
 */
async function walkStored(
  def: FlowDefinition,
  entries: Record<string, StepEntry>,
  options: ResolveOptions,
): Promise<{ path: string[]; position: string; stop: 'gap' | 'withheld' }> {
  const path: string[] = [];
  let cur = def.steps[0]!.id;
  const answers: Record<string, unknown> = {};
  for (const [step, entry] of Object.entries(entries)) {
    if (!entry.skipped && !entry.withheld && entry.value !== undefined) answers[step] = entry.value;
  }
  while (cur !== END && entries[cur] && !path.includes(cur)) {
    const step = stepById(def, cur)!;
    const entry = entries[cur]!;
    if (entry.withheld && branchesOnValue(step)) return { path, position: cur, stop: 'withheld' };
    let to: string;
    try {
      to = entry.withheld
        ? (await resolveNext(def, step, { value: undefined }, answers, options)).to
        : (await resolveNext(def, step, entry, answers, options)).to;
    } catch (error) {
      if (!(error instanceof TasklineError)) throw error;
      // A pick that fails now (its lookup is down), or a branch with no way on: ask again.
      return { path, position: cur, stop: 'withheld' };
    }
    path.push(cur);
    cur = to;
  }
  return { path, position: cur, stop: 'gap' };
}

/** True when the walk left the stored path (or position) right after a step whose pick decided. */
function decidedByPick(def: FlowDefinition, walked: string[], stored: string[]): boolean {
  let i = 0;
  while (i < walked.length && i < stored.length && walked[i] === stored[i]) i++;
  const before = walked[i - 1];
  const step: StepDef | undefined = before === undefined ? undefined : stepById(def, before);
  return step !== undefined && isPick(step.next);
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
