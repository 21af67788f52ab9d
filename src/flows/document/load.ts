/**
 * Loading a flow document: YAML or JSON text → a checked document → a flow, the same one the
 * builder makes. Every problem is reported before any call starts, as `file:line: what is
 * wrong` — the document's shape and types, unknown tasks and names, a prebuilt task's
 * options, conditions, announce placeholders, and the graph (`validateFlow`: a branch to
 * nowhere, a loop with no way out, unreachable steps).
 *
 * Over 500 lines: one pass that keeps every problem's file:line while it builds the flow.
 */
import { readFileSync, statSync } from 'node:fs';
import type { z } from 'zod/v4';
import { TasklineError } from '../../core/errors.js';
import { announce } from '../announce.js';
import { sourceMasked } from '../answer-check.js';
import { type FlowBuilder, flow } from '../builder.js';
import { type Condition, checkCondition } from '../conditions.js';
import type { FlowMigration } from '../definition.js';
import type { AnyStepSource } from '../infer.js';
import type { Escalate, FlowLike, NextSpec, RepairOptions, StepOptions } from '../types.js';
import { type FlowIssue, validateFlow } from '../validate.js';
import { explainAll } from './explain.js';
import { type DocPath, Positions } from './positions.js';
import { buildPrebuilt, PREBUILT_TASKS } from './prebuilt.js';
import type { FlowRegistry } from './registry.js';
import { type FlowDocument, flowSchemas, type StepDocument } from './schema.js';
import { placeholders, rememberTemplate, render } from './template.js';
import { yaml } from './yaml.js';

/** Largest flow document read (a flow, not a data dump). */
export const MAX_FLOW_DOCUMENT_BYTES = 1_000_000;
const MAX_ISSUES = 50;

/** One problem in a flow document, where it is. */
export interface FlowDocumentIssue {
  severity: 'error' | 'warning';
  file: string;
  line: number;
  message: string;
  /** The validateFlow code, for graph problems. */
  code?: string;
}

/** What {@link loadFlow} and {@link parseFlow} need besides the text. */
export interface LoadFlowOptions {
  /** The app's tasks, picks, escalations and flows the document names. */
  registry?: FlowRegistry;
  /** Carries checkpoints of other versions over to this one (see FlowOptions.migrate). */
  migrate?: FlowMigration;
  /** The name messages use for the document (default: the path, or "flow"). */
  file?: string;
}

/** A document's check: the flow (when it has no errors), and every problem found. */
export interface FlowCheck<R = Record<string, unknown>> {
  flow?: FlowBuilder & { run: FlowBuilder['run'] } & FlowLike<R>;
  document?: FlowDocument;
  errors: FlowDocumentIssue[];
  warnings: FlowDocumentIssue[];
}

/** A flow document that cannot be loaded: every problem with its `file:line`. */
export class FlowDocumentError extends TasklineError {
  readonly issues: FlowDocumentIssue[];

  constructor(issues: FlowDocumentIssue[]) {
    super('invalid_flow', issues.map((i) => `${i.file}:${i.line}: ${i.message}`).join('\n'), {
      issues,
    });
    this.name = 'FlowDocumentError';
    this.issues = issues;
  }
}

/** A loaded flow: runnable like a built one; its result type is the one you name. */
export type LoadedFlow<R> = Omit<FlowBuilder, 'run' | 'create' | '__result'> & {
  readonly __result?: (r: R) => R;
  create: (...args: Parameters<FlowBuilder['create']>) => ReturnType<FlowBuilder['create']>;
  run: (...args: Parameters<FlowBuilder['run']>) => Promise<import('../types.js').FlowResult<R>>;
};

/**
 * Reads a flow document (`.yaml`, `.yml` or `.json`) and builds its flow; throws a
 * {@link FlowDocumentError} listing every problem as `file:line: what is wrong`.
 *
 * @example
 * const survey = loadFlow<SurveyAnswers>('survey.flow.yaml', { registry: { picks: { band } } });
 * const result = await survey.run({ checkpoints });
 */
export function loadFlow<R = Record<string, unknown>>(
  path: string,
  options: LoadFlowOptions = {},
): LoadedFlow<R> {
  const checked = checkFlowFile<R>(path, options);
  if (!checked.flow) throw new FlowDocumentError(checked.errors);
  return checked.flow as unknown as LoadedFlow<R>;
}

/** Builds a flow from document text; throws a {@link FlowDocumentError} on any problem. */
export function parseFlow<R = Record<string, unknown>>(
  text: string,
  options: LoadFlowOptions = {},
): LoadedFlow<R> {
  const checked = checkFlowText<R>(text, options);
  if (!checked.flow) throw new FlowDocumentError(checked.errors);
  return checked.flow as unknown as LoadedFlow<R>;
}

/** Checks a flow document file without throwing: the flow, or every problem found. */
export function checkFlowFile<R = Record<string, unknown>>(
  path: string,
  options: LoadFlowOptions = {},
): FlowCheck<R> {
  const file = options.file ?? path;
  const fail = (message: string): FlowCheck<R> => ({
    errors: [{ severity: 'error', file, line: 1, message }],
    warnings: [],
  });
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) return fail('not a file');
    size = stat.size;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return fail(code === 'ENOENT' ? 'no such file' : `cannot read it (${code})`);
  }
  if (size > MAX_FLOW_DOCUMENT_BYTES) {
    return fail(`${size} bytes: a flow document is at most ${MAX_FLOW_DOCUMENT_BYTES} bytes`);
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return fail(`cannot read it (${(error as NodeJS.ErrnoException).code})`);
  }
  return checkFlowText<R>(text, { ...options, file });
}

/** Checks flow document text without throwing: the flow, or every problem found. */
export function checkFlowText<R = Record<string, unknown>>(
  text: string,
  options: LoadFlowOptions = {},
): FlowCheck<R> {
  const file = options.file ?? 'flow';
  const errors: FlowDocumentIssue[] = [];
  const warnings: FlowDocumentIssue[] = [];
  const byLine = (a: FlowDocumentIssue, b: FlowDocumentIssue) => a.line - b.line;
  const done = (): FlowCheck<R> => ({
    errors: errors.sort(byLine).slice(0, MAX_ISSUES),
    warnings: warnings.sort(byLine),
  });
  if (text.length > MAX_FLOW_DOCUMENT_BYTES) {
    errors.push({
      severity: 'error',
      file,
      line: 1,
      message: `a flow document is at most ${MAX_FLOW_DOCUMENT_BYTES} bytes`,
    });
    return done();
  }
  const { LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  for (const e of doc.errors) {
    errors.push({
      severity: 'error',
      file,
      line: e.pos ? lines.linePos(e.pos[0]).line : 1,
      message: firstLine(e.message),
    });
  }
  if (errors.length) return done();
  const where = new Positions(doc, lines);
  const error = (path: DocPath, message: string, atKey = false) =>
    errors.push({ severity: 'error', file, line: where.line(path, atKey), message });
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 50 });
  } catch (e) {
    error([], firstLine(e instanceof Error ? e.message : String(e)));
    return done();
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    error([], 'a flow document is a mapping with "flow", "version" and "steps"');
    return done();
  }
  const parsed = flowSchemas().document.safeParse(data);
  if (!parsed.success) {
    for (const issue of explainAll(parsed.error.issues, data)) {
      error(issue.path, issue.message, issue.atKey);
    }
    return done();
  }
  const document = parsed.data;
  // Built even with problems (unresolved tasks stand in as placeholders), so the graph's
  // problems are reported in the same pass.
  const built = build(document, options, error);
  const validation = validateFlow(built.definition);
  for (const issue of [...validation.errors, ...validation.warnings]) {
    const at = issueLine(issue, document, where);
    const entry: FlowDocumentIssue = {
      severity: issue.severity,
      file,
      line: at,
      message: issue.message,
      code: issue.code,
    };
    (issue.severity === 'error' ? errors : warnings).push(entry);
  }
  if (errors.length) return { ...done(), document };
  return { flow: built as never, document, errors: [], warnings: warnings.sort(byLine) };
}

type Report = (path: DocPath, message: string, atKey?: boolean) => void;

/** Builds the flow a checked document describes, reporting what it cannot resolve. */
function build(document: FlowDocument, options: LoadFlowOptions, error: Report): FlowBuilder {
  const registry = options.registry ?? {};
  const ids = new Set<string>();
  document.steps.forEach((step, i) => {
    if (ids.has(step.id))
      error(['steps', i, 'id'], `a second step "${step.id}": step ids are unique`);
    ids.add(step.id);
  });
  // Sources first: conditions and templates are checked against the answers they read.
  const sources = document.steps.map((step, i) => resolveSource(step, i, registry, error));
  const masked = new Set<string>();
  const schemas = new Map<string, z.ZodType | undefined>();
  document.steps.forEach((step, i) => {
    const source = sources[i];
    if (step.mask || sourceMasked(source)) masked.add(step.id);
    schemas.set(step.id, schemaOfSource(source));
  });
  let builder = flow(document.flow, {
    version: document.version,
    ...(document.label !== undefined ? { label: document.label } : {}),
    ...(document.context !== undefined ? { context: document.context } : {}),
    ...(document.maxBackSteps !== undefined ? { maxBackSteps: document.maxBackSteps } : {}),
    ...(document.maxStepRuns !== undefined ? { maxStepRuns: document.maxStepRuns } : {}),
    ...(options.migrate ? { migrate: options.migrate } : {}),
  }) as FlowBuilder;
  document.steps.forEach((step, i) => {
    let source = sources[i];
    if (step.announce !== undefined) {
      source = announceSource(step, i, ids, masked, error) ?? source;
    }
    const stepOptions = stepOptionsOf(step, i, registry, ids, schemas, error);
    try {
      builder = builder.step(
        step.id,
        (source ?? placeholder) as AnyStepSource,
        stepOptions as never,
      );
    } catch (e) {
      error(['steps', i], e instanceof Error ? e.message : String(e));
      try {
        builder = builder.step(step.id, placeholder, {});
      } catch {
        // a step id the builder refuses was reported above
      }
    }
  });
  return document.repair ? withRepair(builder, document, registry, error) : builder;
}

/** The document's `repair:` section on the flow, its transfer named in registry.escalations. */
function withRepair(
  builder: FlowBuilder,
  document: FlowDocument,
  registry: FlowRegistry,
  error: Report,
): FlowBuilder {
  const declared = document.repair!;
  const { human, ...rest } = declared;
  const options: RepairOptions = { ...rest };
  if (human === false) options.human = false;
  else if (human !== undefined) {
    const fn = registry.escalations?.[human.escalate];
    if (typeof fn !== 'function') {
      error(
        ['repair', 'human', 'escalate'],
        `unknown escalation "${human.escalate}"${known('escalations', registry.escalations)}`,
      );
      return builder;
    }
    options.human = { ...human, escalate: fn as Escalate<unknown> };
  }
  try {
    return builder.repair(options);
  } catch (e) {
    error(['repair'], e instanceof Error ? e.message : String(e), true);
    return builder;
  }
}

/** Stands in for a step whose task could not be resolved, so the graph can still be checked. */
const placeholder = Object.assign(() => undefined as never, {
  meta: { handlesNoInput: true },
}) as unknown as AnyStepSource;

function resolveSource(
  step: StepDocument,
  i: number,
  registry: FlowRegistry,
  error: Report,
): unknown {
  const kinds = (['task', 'announce', 'flow'] as const).filter((k) => step[k] !== undefined);
  if (kinds.length !== 1) {
    error(
      ['steps', i],
      kinds.length === 0
        ? `step "${step.id}" needs one of task, announce or flow`
        : `step "${step.id}" has ${kinds.join(' and ')}: a step has one of task, announce or flow`,
    );
    return undefined;
  }
  if (step.with !== undefined && step.task === undefined) {
    error(['steps', i, 'with'], '"with" holds the options of a task: this step has no task', true);
    return undefined;
  }
  if (step.flow !== undefined) {
    const nested = registry.flows?.[step.flow];
    if (!nested || (nested as { kind?: unknown }).kind !== 'flow') {
      error(['steps', i, 'flow'], `unknown flow "${step.flow}"${known('flows', registry.flows)}`);
      return undefined;
    }
    return nested;
  }
  if (step.task === undefined) return undefined;
  const own = registry.tasks?.[step.task];
  if (own !== undefined) {
    if (step.with !== undefined) {
      error(
        ['steps', i, 'with'],
        `"${step.task}" is the app's own task (registry.tasks): its options are set in code, not in "with"`,
        true,
      );
      return undefined;
    }
    return own;
  }
  const prebuilt = PREBUILT_TASKS[step.task];
  if (!prebuilt) {
    error(
      ['steps', i, 'task'],
      `unknown task "${step.task}": not a prebuilt task (${Object.keys(PREBUILT_TASKS).join(', ')})${known('tasks', registry.tasks, ' nor')}`,
    );
    return undefined;
  }
  const parsed = prebuilt.options.safeParse(step.with ?? {});
  if (!parsed.success) {
    for (const issue of explainAll(parsed.error.issues, step.with ?? {})) {
      error(
        ['steps', i, 'with', ...issue.path],
        `${step.task}: ${issue.message}${issue.path.length ? ` (with.${issue.path.join('.')})` : ''}`,
        issue.atKey,
      );
    }
    return undefined;
  }
  try {
    return buildPrebuilt(step.task, parsed.data, step.id);
  } catch (e) {
    error(
      ['steps', i, 'with'],
      `${step.task}: ${e instanceof Error ? e.message : String(e)}`,
      true,
    );
    return undefined;
  }
}

function announceSource(
  step: StepDocument,
  i: number,
  ids: ReadonlySet<string>,
  masked: ReadonlySet<string>,
  error: Report,
): unknown {
  const template = step.announce!;
  const found = placeholders(template);
  if ('error' in found) {
    error(['steps', i, 'announce'], found.error);
    return undefined;
  }
  if (found.ok.length === 0) return announce(template, step.id);
  for (const p of found.ok) {
    if (!ids.has(p.step)) {
      error(['steps', i, 'announce'], `{{${p.step}}} names no step of this flow`);
    } else if (masked.has(p.step)) {
      error(
        ['steps', i, 'announce'],
        `{{${p.step}}} would speak a masked answer: announce lines never say a secret`,
      );
    }
  }
  const factory = announce((answers) => render(template, answers), step.id);
  rememberTemplate(factory, template);
  return factory;
}

function stepOptionsOf(
  step: StepDocument,
  i: number,
  registry: FlowRegistry,
  ids: ReadonlySet<string>,
  schemas: ReadonlyMap<string, z.ZodType | undefined>,
  error: Report,
): StepOptions<unknown> {
  const out: StepOptions<unknown> = {};
  const copy = out as Record<string, unknown>;
  for (const key of [
    'label',
    'canRevisit',
    'skippable',
    'maxVisits',
    'timeoutMs',
    'context',
    'mask',
    'repair',
  ] as const) {
    if (step[key] !== undefined) copy[key] = step[key];
  }
  const failure = step.onFailure;
  if (failure !== undefined) {
    if (typeof failure === 'string') out.onFailure = failure;
    else {
      const fn = registry.escalations?.[failure.escalate];
      if (typeof fn !== 'function') {
        error(
          ['steps', i, 'onFailure', 'escalate'],
          `unknown escalation "${failure.escalate}"${known('escalations', registry.escalations)}`,
        );
      } else out.onFailure = fn as Escalate<unknown>;
    }
  }
  const next = nextOf(step, i, registry, ids, schemas, error);
  if (next !== undefined) out.next = next;
  return out;
}

function nextOf(
  step: StepDocument,
  i: number,
  registry: FlowRegistry,
  ids: ReadonlySet<string>,
  schemas: ReadonlyMap<string, z.ZodType | undefined>,
  error: Report,
): NextSpec<unknown> | undefined {
  const next = step.next;
  if (next === undefined || typeof next === 'string') return next;
  const at: DocPath = ['steps', i, 'next'];
  if ('when' in next && Array.isArray(next.when)) {
    let ok = true;
    next.when.forEach((c, j) => {
      const problems = checkCondition(c.if, step.id, {
        hasStep: (id) => ids.has(id),
        schemaOf: (id) => schemas.get(id),
      });
      for (const p of problems) {
        ok = false;
        error([...at, 'when', j, 'if', ...p.path], p.message);
      }
    });
    const when = next as {
      when: Array<{ if: Condition; to: string }>;
      else: string;
      skipped?: string;
      labels?: Record<string, string>;
    };
    return ok ? when : when.else;
  }
  if ('pick' in next && typeof next.pick === 'string') {
    const spec = next as { pick: string; to: string[] };
    const fn = registry.picks?.[spec.pick];
    if (typeof fn !== 'function') {
      error([...at, 'pick'], `unknown pick "${spec.pick}"${known('picks', registry.picks)}`);
      return undefined;
    }
    return { ...spec, pick: fn } as NextSpec<unknown>;
  }
  return next as NextSpec<unknown>;
}

function known(section: string, entries: object | undefined, nor = ''): string {
  const names = entries ? Object.keys(entries) : [];
  return names.length
    ? `;${nor} in the registry's ${section} (${names.join(', ')})`
    : `; the registry has no ${section}`;
}

function schemaOfSource(source: unknown): z.ZodType | undefined {
  if (typeof source !== 'object' || source === null) return undefined;
  const schema = (source as { schema?: unknown }).schema;
  return typeof schema === 'object' && schema !== null && '_zod' in schema
    ? (schema as z.ZodType)
    : undefined;
}

/** The line a validateFlow issue belongs on: the target it names, the step's next, or the step. */
function issueLine(issue: FlowIssue, document: FlowDocument, where: Positions): number {
  const id = issue.step?.split('.')[0];
  const i = document.steps.findIndex((s) => s.id === id);
  if (i < 0) return where.line(['steps']);
  if (issue.code === 'unknown_target') {
    const target = /goes to "([^"]+)"/.exec(issue.message)?.[1];
    const hit = target ? where.linesOf(['steps', i, 'next'], target)[0] : undefined;
    if (hit !== undefined) return hit;
  }
  if (issue.code === 'unreachable') return where.line(['steps', i, 'id']);
  if (
    ['dead_end', 'invalid_condition', 'no_default_branch', 'unknown_target'].includes(issue.code) &&
    document.steps[i]!.next !== undefined
  ) {
    return where.line(['steps', i, 'next'], true);
  }
  return where.line(['steps', i]);
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
