import type { Clock } from '../core/clock.js';
import { TasklineError } from '../core/errors.js';
import { describeCondition, evaluate } from './conditions.js';
import type { FlowDefinition, StepDef } from './definition.js';
import { type AnswersSoFar, END, type NextTable, type PickNext, type WhenNext } from './types.js';

/** Longest wait for an async pick unless it says otherwise. */
export const DEFAULT_PICK_TIMEOUT_MS = 5_000;

/** One edge of a flow's graph, read from its declaration (never by running it). */
export interface FlowEdge {
  from: string;
  to: string;
  /** `next`: an answer leads there; `skip`: a skipped step does. */
  kind: 'next' | 'skip';
  /** The branch key or pick label. */
  label?: string;
}

/** What a step left behind: its value, or that it was skipped. */
export interface StepEntry {
  value?: unknown;
  skipped?: boolean;
  /** The value came from the step's escalation. */
  escalated?: boolean;
  /**
   * A masked answer that is not held: not checkpointed in clear, so a resumed call asks it
   * again. Never set on an answer the running flow holds.
   */
  withheld?: boolean;
}

/** True for a `{ to, pick }` next spec. */
export function isPick(next: unknown): next is PickNext<unknown> {
  return (
    typeof next === 'object' &&
    next !== null &&
    Array.isArray((next as { to?: unknown }).to) &&
    typeof (next as { pick?: unknown }).pick === 'function'
  );
}

/** True for a `{ when, else }` next spec. */
export function isWhen(next: unknown): next is WhenNext {
  return (
    typeof next === 'object' &&
    next !== null &&
    Array.isArray((next as { when?: unknown }).when) &&
    typeof (next as { else?: unknown }).else === 'string'
  );
}

/** True for a branch table next spec. */
export function isTable(next: unknown): next is NextTable<unknown> {
  return typeof next === 'object' && next !== null && !isPick(next) && !isWhen(next);
}

/** True when where a step goes depends on its answer (a table, conditions or a pick). */
export function branchesOnValue(step: StepDef): boolean {
  return typeof step.next === 'object' && step.next !== null;
}

/** Whether a step can end up skipped (by the caller or by its failure policy). */
export function canSkip(step: StepDef): boolean {
  return step.skippable || step.onFailure === 'skip';
}

/** The step declared after this one, or the end. */
export function followingStep(def: FlowDefinition, step: StepDef): string {
  return def.steps[step.index + 1]?.id ?? END;
}

function tableEntries(table: NextTable<unknown>): Array<[string, string]> {
  return Object.entries(table as Record<string, string | undefined>).filter(
    (e): e is [string, string] => typeof e[1] === 'string',
  );
}

/** Targets an answer can lead to, with their branch labels. */
export function answerEdges(def: FlowDefinition, step: StepDef): FlowEdge[] {
  const next = step.next;
  const from = step.id;
  if (next === undefined) return [{ from, to: followingStep(def, step), kind: 'next' }];
  if (typeof next === 'string') return [{ from, to: next, kind: 'next' }];
  if (isPick(next)) {
    const labels = (next.labels ?? {}) as Record<string, string | undefined>;
    return [...new Set(next.to)].map((to) => ({ from, to, kind: 'next', label: labels[to] }));
  }
  if (isWhen(next)) {
    const labels = (next.labels ?? {}) as Record<string, string | undefined>;
    const byTarget = new Map<string, string[]>();
    for (const c of next.when) {
      byTarget.set(c.to, [...(byTarget.get(c.to) ?? []), describeCondition(c.if)]);
    }
    byTarget.set(next.else, [...(byTarget.get(next.else) ?? []), 'other']);
    return [...byTarget].map(([to, texts]) => ({
      from,
      to,
      kind: 'next' as const,
      label: labels[to] ?? texts.join(' / '),
    }));
  }
  return tableEntries(next)
    .filter(([key]) => key !== 'skipped')
    .map(([key, to]) => ({ from, to, kind: 'next', label: key === 'default' ? 'other' : key }));
}

/** Where a skipped step goes, or undefined when its `next` has no way on for a skip. */
export function skipTarget(def: FlowDefinition, step: StepDef): string | undefined {
  const next = step.next;
  if (next === undefined) return followingStep(def, step);
  if (typeof next === 'string') return next;
  if (isPick(next)) return next.skipped;
  if (isWhen(next)) return next.skipped ?? next.else;
  return next.skipped ?? next.default;
}

/** Every edge of the flow: answers' branches and skips. */
export function flowEdges(def: FlowDefinition): FlowEdge[] {
  const edges: FlowEdge[] = [];
  for (const step of def.steps) {
    edges.push(...answerEdges(def, step));
    if (canSkip(step)) {
      const to = skipTarget(def, step);
      if (to !== undefined) edges.push({ from: step.id, to, kind: 'skip', label: 'skipped' });
    }
  }
  return edges;
}

/** A pick that failed: it threw, returned an undeclared target, or timed out. */
export class PickFailure extends TasklineError {
  /** `pick_timeout` or `pick_failed`, as a flow result's `error.code` shows it. */
  readonly kind: 'pick_timeout' | 'pick_failed';

  constructor(kind: 'pick_timeout' | 'pick_failed', message: string, step: string) {
    super(kind === 'pick_timeout' ? 'timeout' : 'invalid_state', message, { step, kind });
    this.name = 'PickFailure';
    this.kind = kind;
  }
}

/** How a step's branch was decided: where to, or why it could not be. */
export interface Resolved {
  to: string;
  /** Set when an async pick failed and the flow went to its `onError` target. */
  error?: PickFailure;
}

/** What {@link resolveNext} needs to bound an async pick. */
export interface ResolveOptions {
  clock: Clock;
  /** Aborts a running pick (the call ended). */
  signal?: AbortSignal;
}

/**
 * Where the flow goes after a step left `entry`. Throws a TasklineError when the
 * declaration has no way on (validateFlow reports those before a call starts), and
 * `pick_failed` / `pick_timeout` when an async pick fails and declares no `onError`.
 */
export async function resolveNext(
  def: FlowDefinition,
  step: StepDef,
  entry: StepEntry,
  answers: AnswersSoFar,
  options: ResolveOptions,
): Promise<Resolved> {
  const next = step.next;
  if (entry.skipped) {
    const to = skipTarget(def, step);
    if (to === undefined) {
      throw new TasklineError(
        'invalid_state',
        `Step "${step.id}" was skipped but its next has no "skipped" target: add one.`,
        { step: step.id },
      );
    }
    return { to };
  }
  if (next === undefined) return { to: followingStep(def, step) };
  if (typeof next === 'string') return { to: next };
  if (isPick(next)) {
    try {
      return { to: await runPick(step, next, entry.value, answers, options) };
    } catch (error) {
      const failure =
        error instanceof PickFailure
          ? error
          : new PickFailure(
              'pick_failed',
              `Step "${step.id}": its pick failed: ${describe(error)}`,
              step.id,
            );
      if (next.onError === undefined) throw failure;
      return { to: next.onError, error: failure };
    }
  }
  if (isWhen(next)) {
    const hit = next.when.find((c) => evaluate(c.if, entry.value, answers));
    return { to: hit ? hit.to : next.else };
  }
  const table = next as Record<string, string | undefined>;
  const to = table[String(entry.value)] ?? table.default;
  if (to === undefined) {
    throw new TasklineError(
      'invalid_state',
      `Step "${step.id}" has no branch for the answer ${JSON.stringify(entry.value)}: add it or a "default" to its next table.`,
      { step: step.id },
    );
  }
  return { to };
}

/** Runs a pick, bounded on the call's clock when it is async; checks its target. */
async function runPick(
  step: StepDef,
  next: PickNext<unknown>,
  value: unknown,
  answers: AnswersSoFar,
  options: ResolveOptions,
): Promise<string> {
  const controller = new AbortController();
  const outer = options.signal;
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  let timer: { cancel(): void } | undefined;
  try {
    const picked = next.pick(value, answers, { signal: controller.signal });
    let to: unknown = picked;
    if (isThenable(picked)) {
      const ms = next.timeoutMs ?? DEFAULT_PICK_TIMEOUT_MS;
      const late = new Promise<never>((_, reject) => {
        timer = options.clock.setTimer(ms, () => {
          const error = new PickFailure(
            'pick_timeout',
            `Step "${step.id}": its pick did not answer within ${ms} ms.`,
            step.id,
          );
          controller.abort(error);
          reject(error);
        });
        controller.signal.addEventListener(
          'abort',
          () => reject(controller.signal.reason ?? new Error('aborted')),
          { once: true },
        );
      });
      const work = Promise.resolve(picked);
      work.catch(() => undefined);
      to = await Promise.race([work, late]);
    }
    if (typeof to !== 'string' || !next.to.includes(to)) {
      throw new PickFailure(
        'pick_failed',
        `Step "${step.id}" picked ${JSON.stringify(to)}, which is not among its declared targets (${next.to.join(', ')}): add it to "to".`,
        step.id,
      );
    }
    return to;
  } finally {
    timer?.cancel();
    outer?.removeEventListener('abort', onAbort);
  }
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    (typeof v === 'object' || typeof v === 'function') &&
    v !== null &&
    typeof (v as { then?: unknown }).then === 'function'
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The answers so far as values (skipped steps left out). */
export function valuesOf(entries: Record<string, StepEntry>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const id in entries) {
    const entry = entries[id]!;
    if (!entry.skipped && !entry.withheld && entry.value !== undefined) out[id] = entry.value;
  }
  return out;
}
