import { TasklineError } from '../core/errors.js';
import type { FlowDefinition, StepDef } from './definition.js';
import { type AnswersSoFar, END, type NextTable, type PickNext } from './types.js';

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

/** True for a branch table next spec. */
export function isTable(next: unknown): next is NextTable<unknown> {
  return typeof next === 'object' && next !== null && !isPick(next);
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

/**
 * Where the flow goes after a step left `entry`. Throws a TasklineError when the
 * declaration has no way on (validateFlow reports those before a call starts).
 */
export function resolveNext(
  def: FlowDefinition,
  step: StepDef,
  entry: StepEntry,
  answers: AnswersSoFar,
): string {
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
    return to;
  }
  if (next === undefined) return followingStep(def, step);
  if (typeof next === 'string') return next;
  if (isPick(next)) {
    const to = next.pick(entry.value, answers);
    if (!next.to.includes(to)) {
      throw new TasklineError(
        'invalid_state',
        `Step "${step.id}" picked "${String(to)}", which is not among its declared targets (${next.to.join(', ')}): add it to "to".`,
        { step: step.id, picked: to },
      );
    }
    return to;
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
  return to;
}

/** The answers so far as values (skipped steps left out). */
export function valuesOf(entries: Record<string, StepEntry>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const id in entries) {
    const entry = entries[id]!;
    if (!entry.skipped && entry.value !== undefined) out[id] = entry.value;
  }
  return out;
}
