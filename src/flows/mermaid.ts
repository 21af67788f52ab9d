import { type FlowDefinition, listens, type StepDef } from './definition.js';
import { answerEdges, canSkip, skipTarget } from './graph.js';
import { END, type FlowReport, type StepRecord } from './types.js';
import type { FlowLikeDefinition } from './validate.js';

/** Options of {@link toMermaid}. */
export interface MermaidOptions {
  /** A call's report (or its step records): the path taken and retry counts are highlighted. */
  trace?: FlowReport | readonly StepRecord[];
  /** Graph direction. Default `TD` (top-down). */
  direction?: 'TD' | 'LR';
}

interface Edge {
  from: string;
  to: string;
  kind: 'next' | 'skip' | 'back' | 'escalate' | 'start';
  line: string;
}

const START = '_start';
const FINISH = '_end';

/**
 * Draws a flow as a Mermaid flowchart: steps, branches (with their keys or labels), skips,
 * back-edges to revisitable steps and escalation edges. With a call's trace, the steps and
 * edges the call took are highlighted and each step shows its visits, attempts, no-inputs
 * and no-matches.
 */
export function toMermaid(flow: FlowLikeDefinition, options: MermaidOptions = {}): string {
  const def: FlowDefinition = 'definition' in flow ? flow.definition : flow;
  const records = options.trace
    ? 'steps' in options.trace
      ? options.trace.steps
      : options.trace
    : undefined;
  const lines = [`flowchart ${options.direction ?? 'TD'}`];
  lines.push(`  ${START}((start))`);
  for (const step of def.steps) lines.push(`  ${step.id}${shape(step, label(step, records))}`);
  lines.push(`  ${FINISH}((end))`);

  const edges: Edge[] = [];
  const add = (from: string, to: string, kind: Edge['kind'], text?: string, dotted = false) => {
    const target = to === END ? FINISH : to;
    const arrow = dotted ? '-.->' : '-->';
    const line = `  ${from} ${arrow}${text ? `|${edgeLabel(text)}|` : ''} ${target}`;
    edges.push({ from, to, kind, line });
  };
  const first = def.steps[0];
  if (first) add(START, first.id, 'start');
  for (const step of def.steps) {
    for (const e of answerEdges(def, step)) add(step.id, e.to, 'next', e.label);
    if (canSkip(step)) {
      const to = skipTarget(def, step);
      if (to !== undefined) add(step.id, to, 'skip', 'skipped', true);
    }
    if (typeof step.onFailure === 'function') {
      const node = `${step.id}_escalate`;
      edges.push({
        from: step.id,
        to: node,
        kind: 'escalate',
        line: `  ${step.id} -.->|exhausted| ${node}{{escalate}}`,
      });
      edges.push({
        from: node,
        to: END,
        kind: 'escalate',
        line: `  ${node} -.->|no value| ${FINISH}`,
      });
    }
  }
  for (const target of def.steps.filter((s) => s.canRevisit)) {
    for (const from of reachableFrom(def, target.id)) {
      const step = def.steps.find((s) => s.id === from);
      if (step && from !== target.id && listens(step)) add(from, target.id, 'back', 'back', true);
    }
  }
  lines.push(...edges.map((e) => e.line));

  if (records && records.length > 0) {
    const taken = new Set<number>();
    const mark = (pred: (e: Edge) => boolean) => {
      const i = edges.findIndex(pred);
      if (i >= 0) taken.add(i);
    };
    mark((e) => e.kind === 'start' && e.to === records[0]!.step);
    for (const r of records) {
      const to = r.next;
      if (to === undefined) continue;
      if (r.outcome === 'back') mark((e) => e.kind === 'back' && e.from === r.step && e.to === to);
      else if (r.outcome === 'skipped')
        mark((e) => e.kind === 'skip' && e.from === r.step && e.to === to);
      else {
        if (r.outcome === 'escalated') mark((e) => e.kind === 'escalate' && e.from === r.step);
        mark((e) => e.kind === 'next' && e.from === r.step && e.to === to);
      }
    }
    const steps = [...new Set(records.map((r) => r.step))];
    lines.push('  classDef taken fill:#dcfce7,stroke:#16a34a,stroke-width:2px');
    lines.push(`  class ${steps.join(',')} taken`);
    if (taken.size > 0) {
      lines.push(
        `  linkStyle ${[...taken].sort((a, b) => a - b).join(',')} stroke:#16a34a,stroke-width:3px`,
      );
    }
  }
  return lines.join('\n');
}

function shape(step: StepDef, text: string): string {
  const q = `"${text}"`;
  if (step.runner.kind === 'flow') return `[[${q}]]`;
  if (!listens(step)) return `([${q}])`;
  return `[${q}]`;
}

function label(step: StepDef, records: readonly StepRecord[] | undefined): string {
  const base = escapeText(step.label ?? step.id);
  const mine = records?.filter((r) => r.step === step.id) ?? [];
  if (mine.length === 0) return base;
  const sum = (k: 'attempts' | 'noInput' | 'noMatch') => mine.reduce((n, r) => n + r[k], 0);
  const notes: string[] = [];
  if (mine.length > 1) notes.push(`${mine.length} visits`);
  if (sum('attempts') > mine.length) notes.push(`${sum('attempts')} attempts`);
  if (sum('noInput') > 0) notes.push(`${sum('noInput')} no-input`);
  if (sum('noMatch') > 0) notes.push(`${sum('noMatch')} no-match`);
  return notes.length > 0 ? `${base}<br/>${notes.join(', ')}` : base;
}

function edgeLabel(text: string): string {
  return /^[\w .:-]+$/.test(text) ? text : `"${escapeText(text)}"`;
}

function escapeText(text: string): string {
  return text.replace(/"/g, '#quot;').replace(/[<>]/g, (c) => (c === '<' ? '#lt;' : '#gt;'));
}

function reachableFrom(def: FlowDefinition, start: string): string[] {
  const seen = new Set<string>([start]);
  const queue = [start];
  while (queue.length > 0) {
    const id = queue.shift();
    const step = def.steps.find((s) => s.id === id);
    if (!step) continue;
    const next = answerEdges(def, step).map((e) => e.to);
    const skip = canSkip(step) ? skipTarget(def, step) : undefined;
    if (skip !== undefined) next.push(skip);
    for (const to of next) {
      if (to !== END && !seen.has(to)) {
        seen.add(to);
        queue.push(to);
      }
    }
  }
  return def.steps.map((s) => s.id).filter((id) => seen.has(id));
}
