/**
 * A flow as data: `toData(flow, { registry })` writes any flow — built in code or loaded from
 * a document — as a flow document that loads back to the same graph. Tasks, picks,
 * escalations and nested flows are named by the registry; prebuilt tasks made from a
 * document keep their options; announce lines and templates are written as text. What has no
 * data form (a context function, an untemplated announce function, a step's own schema) is
 * refused with the step it is on.
 */
import { TasklineError } from '../../core/errors.js';
import { sourceMasked } from '../answer-check.js';
import type { FlowDefinition, StepDef } from '../definition.js';
import { isPick, isWhen } from '../graph.js';
import type { FlowRepair } from '../types.js';
import { prebuiltOrigin } from './prebuilt.js';
import { type FlowRegistry, nameIn } from './registry.js';
import type { FlowDocument, NextDocument, StepDocument } from './schema.js';
import { templateOf } from './template.js';
import { yaml } from './yaml.js';

/** Options of {@link toData}. */
export interface ToDataOptions {
  /** Names the app's tasks, picks, escalations and flows (as the document will). */
  registry?: FlowRegistry;
  /** Written as `$schema` (e.g. a path to flow.schema.json) for editors. */
  $schema?: string;
}

/**
 * The flow document of a flow: load it back with `parseFlow` / `loadFlow` and the same
 * registry to get the same graph. A flow with no version is written as version 1.
 */
export function toData(
  flow: { readonly definition: FlowDefinition },
  options: ToDataOptions = {},
): FlowDocument {
  const def = flow.definition;
  const registry = options.registry ?? {};
  const problems: string[] = [];
  const o = def.options;
  if (typeof o.context === 'function')
    problems.push('the flow: a context function has no data form');
  const doc: FlowDocument = {
    ...(options.$schema ? { $schema: options.$schema } : {}),
    flow: def.name,
    version: o.version ?? 1,
    ...(o.label !== undefined ? { label: o.label } : {}),
    ...(typeof o.context === 'string' ? { context: o.context } : {}),
    ...(o.maxBackSteps !== undefined ? { maxBackSteps: o.maxBackSteps } : {}),
    ...(o.maxStepRuns !== undefined ? { maxStepRuns: o.maxStepRuns } : {}),
    ...(def.repair ? { repair: repairData(def.repair, registry, (p) => problems.push(p)) } : {}),
    steps: def.steps.map((step) =>
      stepData(step, registry, (p) => problems.push(`step "${step.id}": ${p}`)),
    ),
  };
  if (problems.length > 0) {
    throw new TasklineError(
      'invalid_argument',
      `Flow "${def.name}" cannot be written as data:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
      { problems },
    );
  }
  return doc;
}

/** A flow document as YAML (default) or JSON text. */
export function stringifyFlow(doc: FlowDocument, format: 'yaml' | 'json' = 'yaml'): string {
  return format === 'json'
    ? `${JSON.stringify(doc, null, 2)}\n`
    : yaml().stringify(doc, { lineWidth: 100 });
}

function stepData(
  step: StepDef,
  registry: FlowRegistry,
  problem: (p: string) => void,
): StepDocument {
  const out: StepDocument = { id: step.id };
  const source = step.source;
  const line = (source as { line?: unknown } | undefined)?.line;
  if (step.runner.kind === 'flow') {
    const inner = step.runner.flow;
    const name = Object.entries(registry.flows ?? {}).find(
      ([, f]) => f === source || (f as { definition?: unknown }).definition === inner,
    )?.[0];
    if (name) out.flow = name;
    else problem(`its flow "${inner.name}" is not in registry.flows`);
  } else if (typeof source === 'function' && (typeof line === 'string' || templateOf(source))) {
    out.announce = templateOf(source) ?? (line as string);
  } else if (typeof source === 'function' && typeof line === 'function') {
    problem('an announce function has no data form (use a template: "Thanks {{name}}")');
  } else {
    const name = nameIn(registry.tasks, source);
    const origin = prebuiltOrigin(source);
    if (name) out.task = name;
    else if (origin) {
      out.task = origin.task;
      out.with = structuredClone(origin.with);
    } else {
      problem('its task is not in registry.tasks: name it there to write the flow as data');
    }
  }
  if (step.label !== undefined) out.label = step.label;
  const next = nextData(step, registry, problem);
  if (next !== undefined) out.next = next;
  if (step.canRevisit) out.canRevisit = true;
  if (step.skippable) out.skippable = true;
  if (step.onFailure === 'skip') out.onFailure = 'skip';
  else if (typeof step.onFailure === 'function') {
    const name = nameIn(registry.escalations, step.onFailure);
    if (name) out.onFailure = { escalate: name };
    else problem('its escalation is not in registry.escalations');
  }
  if (step.maxVisits !== undefined) out.maxVisits = step.maxVisits;
  if (step.timeoutMs !== undefined) out.timeoutMs = step.timeoutMs;
  if (typeof step.context === 'string') out.context = step.context;
  else if (step.context !== undefined) problem('a context function has no data form');
  if (step.masked !== sourceMasked(source)) out.mask = step.masked;
  if (step.repair !== undefined) out.repair = { ...step.repair } as StepDocument['repair'];
  if (step.schema !== undefined) {
    problem('its own schema has no data form: register a task that carries it (registry.tasks)');
  }
  return out;
}

function nextData(
  step: StepDef,
  registry: FlowRegistry,
  problem: (p: string) => void,
): NextDocument | undefined {
  const next = step.next;
  if (next === undefined || typeof next === 'string') return next;
  if (isWhen(next)) {
    return structuredClone({
      when: next.when.map((c) => ({ if: c.if, to: c.to })),
      else: next.else,
      ...(next.skipped !== undefined ? { skipped: next.skipped } : {}),
      ...(next.labels ? { labels: { ...next.labels } } : {}),
    }) as NextDocument;
  }
  if (isPick(next)) {
    const name = nameIn(registry.picks, next.pick);
    if (!name) {
      problem('its pick function is not in registry.picks');
      return undefined;
    }
    return {
      pick: name,
      to: [...next.to],
      ...(next.skipped !== undefined ? { skipped: next.skipped } : {}),
      ...(next.onError !== undefined ? { onError: next.onError } : {}),
      ...(next.timeoutMs !== undefined ? { timeoutMs: next.timeoutMs } : {}),
      ...(next.labels ? { labels: { ...(next.labels as Record<string, string>) } } : {}),
    };
  }
  return { ...(next as Record<string, string>) };
}

/** A flow's repairs as a document's `repair:` section (the transfer by its registry name). */
function repairData(
  repair: FlowRepair,
  registry: FlowRegistry,
  problem: (p: string) => void,
): NonNullable<FlowDocument['repair']> {
  const { human, ...rest } = repair.declared;
  const out = { ...rest } as NonNullable<FlowDocument['repair']>;
  if (human === false) out.human = false;
  else if (human !== undefined) {
    const name = nameIn(registry.escalations, human.escalate);
    if (name) {
      out.human = {
        escalate: name,
        ...(human.words ? { words: [...human.words] } : {}),
        ...(human.key !== undefined ? { key: human.key } : {}),
      };
    } else problem('the flow: its repair transfer (human.escalate) is not in registry.escalations');
  }
  return out;
}
