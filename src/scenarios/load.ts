/**
 * Reads a `*.scenario.yaml` file into a validated scenario, keeping the line of every turn
 * and expectation so failures can point at them. A malformed file fails with a
 * TasklineError `invalid_scenario` whose message starts with "file:line".
 */
import { basename, dirname, resolve } from 'node:path';
import { type Document, isMap, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import type { z } from 'zod/v4';
import { MAX_INPUT_FILE_BYTES, readTextFileCapped } from '../core/bounded-read.js';
import { isTasklineError, TasklineError } from '../core/errors.js';
import { type ScenarioSpec, scenarioSchema, turnSchema } from './schema.js';

/** A scenario with where it came from. */
export interface LoadedScenario {
  /** The file (absolute path). */
  file: string;
  /** `name:` or the file name without `.scenario.yaml`. */
  name: string;
  /** The module to run (absolute path). */
  module: string;
  spec: ScenarioSpec;
  /** 1-based line of each turn, in order. */
  turnLines: number[];
  /** 1-based line of the final `expect:` block, if any. */
  expectLine?: number;
  /** 1-based line of the `meant:` block, if any. */
  meantLine?: number;
}

/** The suffix `taskline test` looks for. */
export const SCENARIO_SUFFIX = '.scenario.yaml';

const TURN_KINDS = ['say', 'keys', 'silence', 'barge_in', 'hangup'] as const;

/** Largest scenario file read (1 MiB): a scenario is a few turns, not data. */
export const MAX_SCENARIO_BYTES = MAX_INPUT_FILE_BYTES;

/** Options of {@link loadScenario}. */
export interface LoadScenarioOptions {
  /** Largest file read, in bytes (default {@link MAX_SCENARIO_BYTES}). */
  maxBytes?: number;
}

/**
 * Reads and validates one scenario file. Only a regular file of at most `maxBytes` is read
 * (`invalid_scenario` otherwise: a device, a pipe, a folder, or a file too large).
 */
export function loadScenario(file: string, options: LoadScenarioOptions = {}): LoadedScenario {
  const path = resolve(file);
  let text: string;
  try {
    text = readTextFileCapped(path, {
      what: 'scenario file',
      badCode: 'invalid_scenario',
      ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
    });
  } catch (error) {
    if (isTasklineError(error, 'not_found')) {
      throw new TasklineError('not_found', `${file}: no such scenario file`);
    }
    if (isTasklineError(error)) {
      throw new TasklineError(
        'invalid_scenario',
        `${file}:1: ${error.message.replace(`${path} `, '').replace(`${path}: `, '')}`,
        error.details,
      );
    }
    throw error;
  }
  return parseScenario(text, path);
}

/** Validates scenario text; `file` names it in errors and anchors relative module paths. */
export function parseScenario(text: string, file: string): LoadedScenario {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number) => `${file}:${lines.linePos(offset).line}`;
  const syntax = doc.errors[0];
  if (syntax) {
    const where = syntax.pos ? at(syntax.pos[0]) : `${file}:1`;
    throw invalid(`${where}: ${firstLine(syntax.message)}`);
  }
  const data: unknown = doc.toJS();
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw invalid(
      `${file}:1: a scenario is a mapping with at least "turns:" (a list of caller turns)`,
    );
  }
  const parsed = scenarioSchema.safeParse(data);
  if (!parsed.success) {
    // An unknown field explains a missing one (a typo: "turn:" for "turns:"): report it first.
    const issues = parsed.error.issues;
    const first = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0]!;
    const issue = explain(first, data as Record<string, unknown>);
    const offset = nodeAt(doc, issue.path, issue.atKey)?.range?.[0] ?? 0;
    const where = issue.path.length ? ` (${formatPath(issue.path)})` : '';
    throw invalid(`${at(offset)}: ${issue.message}${where}`);
  }
  const spec = parsed.data;
  const turnLines = spec.turns.map((_, i) => {
    const node = nodeAt(doc, ['turns', i]);
    return node?.range ? lines.linePos(node.range[0]).line : 1;
  });
  const expectNode = nodeAt(doc, ['expect'], true);
  const meantNode = nodeAt(doc, ['meant'], true);
  const name = spec.name ?? basename(file).replace(/\.scenario\.ya?ml$/, '');
  return {
    file,
    name,
    module: resolve(dirname(file), spec.module ?? '.'),
    spec,
    turnLines,
    ...(expectNode?.range ? { expectLine: lines.linePos(expectNode.range[0]).line } : {}),
    ...(meantNode?.range ? { meantLine: lines.linePos(meantNode.range[0]).line } : {}),
  };
}

interface Explained {
  path: PropertyKey[];
  message: string;
  /** Point at the key of the last path element (an unknown field), not its value. */
  atKey?: boolean;
}

/**
 * Turns zod's first issue into one actionable sentence. A turn that matches no turn shape
 * is checked against the shape its key names, so the message is about that turn's fields.
 */
function explain(issue: z.core.$ZodIssue, data: Record<string, unknown>): Explained {
  const path = [...issue.path];
  if (issue.code === 'invalid_union' && path[0] === 'turns' && path.length === 2) {
    const turn = (data.turns as unknown[])[path[1] as number];
    return { path, ...explainTurn(turn) };
  }
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => `"${k}"`).join(', ');
    const known =
      path.length === 0
        ? ' (known: name, module, model, repeat, audio, skip_audio, turns, expect)'
        : '';
    return {
      path: [...path, issue.keys[0]!],
      message: `unknown field ${keys}${known}`,
      atKey: true,
    };
  }
  if (issue.code === 'invalid_union' && path.at(-1) === 'model') {
    return {
      path,
      message:
        'model is "module" (the module\'s scripted model) or a map of agent/task id to scripted replies [{say}, {tool_calls: [{name, args}]}, {fail}]',
    };
  }
  if (issue.code === 'invalid_union') {
    const inner = issue.errors.flat()[0];
    if (inner) return explain({ ...inner, path: [...path, ...inner.path] }, data);
  }
  return { path, message: issue.message };
}

/** What is wrong with a caller turn, in one sentence (for files other than scenarios too). */
export function explainTurn(turn: unknown): { message: string; path?: PropertyKey[] } {
  const shapes = 'a turn is one of: say: "…", keys: "123#", silence: 8s, barge_in: "…", hangup';
  if (typeof turn === 'string') return { message: `"${turn}" is not a turn; ${shapes}` };
  if (typeof turn !== 'object' || turn === null || Array.isArray(turn)) {
    return { message: shapes };
  }
  const kinds = TURN_KINDS.filter((k) => k in turn);
  if (kinds.length !== 1) {
    const found = kinds.length ? ` (it has ${kinds.join(' and ')})` : '';
    return { message: `${shapes}${found}` };
  }
  const option = turnSchema.options.find(
    (o) => 'shape' in o && kinds[0]! in (o.shape as Record<string, unknown>),
  );
  const result = option?.safeParse(turn);
  const inner = result && !result.success ? result.error.issues[0] : undefined;
  if (!inner) return { message: shapes };
  if (inner.code === 'unrecognized_keys') {
    return { message: `unknown field "${inner.keys[0]}" in a ${kinds[0]} turn` };
  }
  const field = inner.path.length ? `${inner.path.join('.')}: ` : '';
  return { message: `${field}${inner.message}` };
}

/** The deepest node of `doc` along `path` (so an error points at the nearest line). */
function nodeAt(doc: Document, path: PropertyKey[], atKey = false): Node | undefined {
  let node: unknown = doc.contents;
  let found: Node | undefined = node as Node | undefined;
  for (const [i, key] of path.entries()) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown })?.value === key);
      if (!pair) break;
      const last = i === path.length - 1;
      node = pair.value ?? pair.key;
      found = (atKey && last ? pair.key : (pair.value ?? pair.key)) as Node;
    } else if (isSeq(node) && typeof key === 'number') {
      node = node.items[key];
      if (!node) break;
      found = node as Node;
    } else {
      break;
    }
  }
  return found;
}

function formatPath(path: PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${String(p)}`))
    .join('');
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}

function invalid(message: string): TasklineError {
  return new TasklineError('invalid_scenario', message);
}
