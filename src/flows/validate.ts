import { z } from 'zod/v4';
import { TasklineError } from '../core/errors.js';
import { checkCondition } from './conditions.js';
import { type FlowDefinition, listens, type StepDef, stepById } from './definition.js';
import { canSkip, flowEdges, isPick, isTable, isWhen, skipTarget } from './graph.js';
import { END } from './types.js';

/** Stable codes of the problems {@link validateFlow} finds. */
export type FlowIssueCode =
  | 'empty_flow'
  | 'unknown_target'
  | 'unreachable'
  | 'dead_end'
  | 'unbounded_retries'
  | 'no_input_handling'
  | 'key_clash'
  | 'no_default_branch'
  | 'invalid_condition';

/** One problem in a flow's declaration. Errors stop `run()`; warnings do not. */
export interface FlowIssue {
  severity: 'error' | 'warning';
  code: FlowIssueCode;
  /** The step it is about (nested flows: "outer.inner"). */
  step?: string;
  /** What is wrong and what to do about it. */
  message: string;
}

/** The result of {@link validateFlow}. */
export interface FlowValidation {
  ok: boolean;
  errors: FlowIssue[];
  warnings: FlowIssue[];
}

/** A flow, or its plain definition. */
export type FlowLikeDefinition = FlowDefinition | { readonly definition: FlowDefinition };

function definitionOf(flow: FlowLikeDefinition): FlowDefinition {
  return 'definition' in flow ? flow.definition : flow;
}

/**
 * Checks a flow's graph without running it: unknown `next` targets, unreachable steps,
 * dead ends (no way to the end, branch tables missing a value), loops with no bound,
 * steps with no no-input handling, and menu keys that clash with repeat/back keys.
 */
export function validateFlow(flow: FlowLikeDefinition): FlowValidation {
  const issues = collect(definitionOf(flow), '');
  const errors = issues.filter((i) => i.severity === 'error');
  const warnings = issues.filter((i) => i.severity === 'warning');
  return { ok: errors.length === 0, errors, warnings };
}

/** Throws a TasklineError listing every error, when the flow has any. */
export function assertValidFlow(flow: FlowLikeDefinition): void {
  const def = definitionOf(flow);
  const { errors } = validateFlow(def);
  if (errors.length === 0) return;
  throw new TasklineError(
    'invalid_argument',
    `Flow "${def.name}" is not valid; fix these before running it:\n${errors
      .map((e) => `  - [${e.code}] ${e.message}`)
      .join('\n')}`,
    { flow: def.name, errors },
  );
}

function collect(def: FlowDefinition, prefix: string): FlowIssue[] {
  const issues: FlowIssue[] = [];
  const error = (code: FlowIssueCode, step: string | undefined, message: string) =>
    issues.push({ severity: 'error', code, step: step && prefix + step, message });
  const warn = (code: FlowIssueCode, step: string | undefined, message: string) =>
    issues.push({ severity: 'warning', code, step: step && prefix + step, message });

  if (def.steps.length === 0) {
    error('empty_flow', undefined, `Flow "${def.name}" has no steps: add one with .step().`);
    return issues;
  }
  const edges = flowEdges(def);
  for (const e of edges) {
    if (e.to !== END && !stepById(def, e.to)) {
      error(
        'unknown_target',
        e.from,
        `Step "${e.from}" goes to "${e.to}", which is not a step of flow "${def.name}": declare it or use 'end'.`,
      );
    }
  }
  const known = edges.filter((e) => e.to === END || stepById(def, e.to));

  const reached = reach(def.steps[0]!.id, (id) => known.filter((e) => e.from === id));
  for (const step of def.steps) {
    if (!reached.has(step.id)) {
      error(
        'unreachable',
        step.id,
        `Step "${step.id}" can never be reached from "${def.steps[0]!.id}": point a next at it or remove it.`,
      );
    }
  }

  const toEnd = reachBack(END, (id) => known.filter((e) => e.to === id));
  for (const step of def.steps) {
    if (reached.has(step.id) && !toEnd.has(step.id)) {
      error(
        'dead_end',
        step.id,
        `Step "${step.id}" has no way to the end of the flow: give it (or a step after it) a next that leads to 'end'.`,
      );
    }
    checkBranches(step, def, error, warn);
  }

  for (const loop of loops(def, known)) {
    if (!loop.some((id) => stepById(def, id)?.maxVisits !== undefined)) {
      error(
        'unbounded_retries',
        loop[0],
        `Steps ${loop.join(' -> ')} form a loop with no bound: give one of them maxVisits.`,
      );
    }
  }

  for (const step of def.steps) {
    const r = step.runner;
    if (
      listens(step) &&
      r.kind === 'task' &&
      !r.definition &&
      !step.meta.handlesNoInput &&
      step.timeoutMs === undefined
    ) {
      error(
        'no_input_handling',
        step.id,
        `Step "${step.id}" runs a plain task factory that may wait for a silent caller forever: set timeoutMs on the step, use a typed task, or declare meta.handlesNoInput.`,
      );
    }
    checkKeys(step, error);
    checkConditions(step, def, error);
    if (r.kind === 'flow') issues.push(...collect(r.flow, `${prefix}${step.id}.`));
  }
  return issues;
}

type Report = (code: FlowIssueCode, step: string | undefined, message: string) => void;

/** `when` conditions: `of` names a step, operands fit the answers they compare. */
function checkConditions(step: StepDef, def: FlowDefinition, error: Report): void {
  const next = step.next;
  if (!isWhen(next)) return;
  const scope = {
    hasStep: (id: string) => stepById(def, id) !== undefined,
    schemaOf: (id: string) => {
      const s = stepById(def, id);
      return s?.runner.kind === 'task' ? s.runner.schema : undefined;
    },
  };
  next.when.forEach((c, i) => {
    for (const problem of checkCondition(c.if, step.id, scope)) {
      const at = ['when', i, 'if', ...problem.path].join('.');
      error('invalid_condition', step.id, `Step "${step.id}" (${at}): ${problem.message}.`);
    }
  });
}

function checkBranches(step: StepDef, def: FlowDefinition, error: Report, warn: Report): void {
  const next = step.next;
  if (canSkip(step) && skipTarget(def, step) === undefined) {
    error(
      'dead_end',
      step.id,
      `Step "${step.id}" can be skipped but its next has no target for a skip: add "skipped" (or a table "default").`,
    );
  }
  if (isPick(next) && next.to.length === 0) {
    error('dead_end', step.id, `Step "${step.id}" has a pick with no targets: list them in "to".`);
  }
  if (!isTable(next) || 'default' in next) return;
  const keys = new Set(Object.keys(next));
  const schema = step.runner.kind === 'task' ? step.runner.schema : undefined;
  const values = enumerable(schema);
  if (values) {
    const missing = values.filter((v) => !keys.has(v));
    if (missing.length > 0) {
      error(
        'dead_end',
        step.id,
        `Step "${step.id}" has no branch for ${missing.map((m) => JSON.stringify(m)).join(', ')}: add them or a "default" to its next table.`,
      );
    }
    return;
  }
  warn(
    'no_default_branch',
    step.id,
    `Step "${step.id}" branches on a table with no "default": an unlisted answer fails the flow.`,
  );
}

function enumerable(schema: z.ZodType | undefined): string[] | undefined {
  if (!schema) return undefined;
  if (schema instanceof z.ZodBoolean) return ['true', 'false'];
  if (schema instanceof z.ZodEnum) return schema.options.map(String);
  // A menu's values (`z.literal([...])`): a table keys on each; a symbol value (the menu's
  // BACK) cannot be a table key, so it is left to the step's other handling.
  if (schema instanceof z.ZodLiteral) {
    return [...schema.values].filter((v) => typeof v !== 'symbol').map(String);
  }
  return undefined;
}

function checkKeys(step: StepDef, error: Report): void {
  const { keys = [], repeatKey, backKey } = step.meta;
  const seen = new Set<string>();
  for (const k of keys) {
    if (seen.has(k)) error('key_clash', step.id, `Step "${step.id}" uses key "${k}" twice.`);
    seen.add(k);
  }
  for (const [name, key] of [
    ['repeat', repeatKey],
    ['back', backKey],
  ] as const) {
    if (key !== undefined && seen.has(key)) {
      error(
        'key_clash',
        step.id,
        `Step "${step.id}": key "${key}" is both a menu option and the ${name} key; pick another ${name} key.`,
      );
    }
  }
  if (repeatKey !== undefined && repeatKey === backKey) {
    error(
      'key_clash',
      step.id,
      `Step "${step.id}": key "${repeatKey}" is both the repeat and the back key.`,
    );
  }
}

function reach(start: string, out: (id: string) => Array<{ to: string }>): Set<string> {
  const seen = new Set<string>([start]);
  const queue = [start];
  while (queue.length > 0) {
    for (const e of out(queue.shift()!)) {
      if (!seen.has(e.to)) {
        seen.add(e.to);
        queue.push(e.to);
      }
    }
  }
  return seen;
}

function reachBack(end: string, into: (id: string) => Array<{ from: string }>): Set<string> {
  return reach(end, (id) => into(id).map((e) => ({ to: e.from })));
}

/** Strongly connected step groups that loop (Tarjan), each in declaration order. */
function loops(def: FlowDefinition, edges: Array<{ from: string; to: string }>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const e of edges) {
      if (e.from !== v || e.to === END) continue;
      if (!index.has(e.to)) {
        visit(e.to);
        low.set(v, Math.min(low.get(v)!, low.get(e.to)!));
      } else if (onStack.has(e.to)) {
        low.set(v, Math.min(low.get(v)!, index.get(e.to)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      for (;;) {
        const w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
        if (w === v) break;
      }
      const selfLoop = edges.some((e) => e.from === v && e.to === v);
      if (group.length > 1 || selfLoop) {
        const order = (id: string) => stepById(def, id)?.index ?? 0;
        found.push(group.sort((a, b) => order(a) - order(b)));
      }
    }
  };
  for (const step of def.steps) if (!index.has(step.id)) visit(step.id);
  return found;
}
