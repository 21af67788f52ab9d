/**
 * A flow's repair patterns as declared (`flow(...).repair({...})`, a document's `repair:`
 * section) and as the runner uses them: checked once, defaults filled in, with each step's
 * own switches. What they do in a call is ./desk.ts (hearing them) and ./after.ts (what the
 * flow does once a request ended a step).
 */

import { isDtmfDigit } from '../../core/call.js';
import { TasklineError } from '../../core/errors.js';
import { REPAIR_KINDS, type RepairKind } from '../../tasks/parsers/repair.js';
import { type FlowDefinition, listens, type StepDef } from '../definition.js';
import type { FlowRepair, RepairLines, RepairOptions, StepRepair } from '../types.js';

export { REPAIR_KINDS, type RepairKind };

/** The default lines (US English). */
export const DEFAULT_REPAIR_LINES: Readonly<RepairLines> = {
  corrected: "Okay, I've changed your {name} to {value}.",
  pathChanged: 'That changes what I need to ask next.',
  cannotSkip: 'Sorry, I need an answer to this one.',
  confirmCancel: 'Do you want to end this call now?',
  carryOn: "Okay, let's carry on.",
  humanUnavailable: "Sorry, no one can take your call right now. Let's carry on.",
};

const MAX_WORDS = 50;

function bad(flow: string, message: string): TasklineError {
  return new TasklineError('invalid_argument', `Flow "${flow}": repair ${message}`);
}

function checkKey(flow: string, what: string, key: unknown): string | undefined {
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !isDtmfDigit(key)) {
    throw bad(flow, `${what} must be one key: 0-9, *, #, A-D (got ${JSON.stringify(key)}).`);
  }
  return key;
}

function checkFlag(flow: string, what: string, value: unknown): void {
  if (
    value !== undefined &&
    typeof value !== 'boolean' &&
    (typeof value !== 'object' || value === null)
  ) {
    throw bad(flow, `${what} must be true, false or an object (got ${JSON.stringify(value)}).`);
  }
}

/** Checks a flow's repair declaration and fills in the defaults; throws `invalid_argument`. */
export function resolveRepair(flow: string, options: RepairOptions): FlowRepair {
  if (typeof options !== 'object' || options === null) {
    throw bad(flow, 'takes an object: { correct, repeat, skip, cancel, human, lines }.');
  }
  const known = new Set(['correct', 'repeat', 'skip', 'cancel', 'human', 'lines']);
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw bad(flow, `has no option "${key}" (${[...known].join(', ')}).`);
  }
  for (const what of ['correct', 'skip'] as const) {
    if (options[what] !== undefined && typeof options[what] !== 'boolean') {
      throw bad(flow, `${what} must be true or false.`);
    }
  }
  checkFlag(flow, 'repeat', options.repeat);
  checkFlag(flow, 'cancel', options.cancel);
  const repeat =
    options.repeat === false
      ? false
      : {
          key: checkKey(
            flow,
            'repeat.key',
            typeof options.repeat === 'object' ? options.repeat.key : undefined,
          ),
        };
  const cancelConfirm = typeof options.cancel === 'object' ? options.cancel.confirm : undefined;
  if (cancelConfirm !== undefined && typeof cancelConfirm !== 'boolean') {
    throw bad(flow, 'cancel.confirm must be true or false.');
  }
  const cancel = options.cancel === false ? false : { confirm: cancelConfirm ?? true };
  let human: FlowRepair['human'] = false;
  if (options.human !== undefined && options.human !== false) {
    const h = options.human;
    if (typeof h !== 'object' || h === null || typeof h.escalate !== 'function') {
      throw bad(
        flow,
        'human needs { escalate }: the transfer to run when the caller asks for a person (e.g. transferCall).',
      );
    }
    const words = h.words ?? [];
    if (
      !Array.isArray(words) ||
      words.length > MAX_WORDS ||
      !words.every((w) => typeof w === 'string' && w.trim().length > 0 && w.length <= 64)
    ) {
      throw bad(flow, `human.words must be up to ${MAX_WORDS} words or short phrases.`);
    }
    human = {
      escalate: h.escalate,
      words: words.map((w) => w.trim()),
      key: checkKey(flow, 'human.key', h.key),
    };
  }
  if (repeat && human && repeat.key !== undefined && repeat.key === human.key) {
    throw bad(
      flow,
      `uses key "${repeat.key}" both to repeat and for a person: give them different keys.`,
    );
  }
  const lines: RepairLines = { ...DEFAULT_REPAIR_LINES };
  if (options.lines !== undefined) {
    if (typeof options.lines !== 'object' || options.lines === null)
      throw bad(flow, 'lines must be an object.');
    for (const [key, value] of Object.entries(options.lines)) {
      if (!(key in DEFAULT_REPAIR_LINES)) {
        throw bad(
          flow,
          `lines has no line "${key}" (${Object.keys(DEFAULT_REPAIR_LINES).join(', ')}).`,
        );
      }
      if (value === undefined) continue;
      if (typeof value !== 'string' || value.trim() === '' || value.length > 500) {
        throw bad(flow, `lines.${key} must be a line of text (at most 500 characters).`);
      }
      lines[key as keyof RepairLines] = value;
    }
  }
  return {
    correct: options.correct ?? true,
    repeat,
    skip: options.skip ?? true,
    cancel,
    human,
    lines,
    declared: options,
  };
}

/** Checks a step's `repair` option; throws `invalid_argument`. */
export function checkStepRepair(step: string, repair: unknown): StepRepair | undefined {
  if (repair === undefined) return undefined;
  const fail = (m: string) => new TasklineError('invalid_argument', `Step "${step}": repair ${m}`);
  if (typeof repair !== 'object' || repair === null) {
    throw fail('takes { correct, repeat, skip, cancel, human: false, names }.');
  }
  const r = repair as Record<string, unknown>;
  for (const [key, value] of Object.entries(r)) {
    if (key === 'names') continue;
    if (!(REPAIR_KINDS as readonly string[]).includes(key)) {
      throw fail(`has no option "${key}" (${REPAIR_KINDS.join(', ')}, names).`);
    }
    if (value !== undefined && typeof value !== 'boolean')
      throw fail(`${key} must be true or false.`);
  }
  const names = r.names;
  if (
    names !== undefined &&
    (!Array.isArray(names) ||
      names.length === 0 ||
      names.length > 20 ||
      !names.every((n) => typeof n === 'string' && n.trim().length > 0 && n.length <= 64))
  ) {
    throw fail('names must be 1 to 20 short names ("zip", "zip code").');
  }
  return repair as StepRepair;
}

/** True when `kind` is on for the flow and not turned off by the step. */
export function allows(repair: FlowRepair, step: StepDef, kind: RepairKind): boolean {
  if (step.repair?.[kind] === false) return false;
  switch (kind) {
    case 'correct':
      return repair.correct && !step.masked;
    case 'repeat':
      return repair.repeat !== false;
    case 'skip':
      return repair.skip;
    case 'cancel':
      return repair.cancel !== false;
    case 'human':
      return repair.human !== false;
  }
}

/** What callers call a step's answer: its `names`, or its id in words. */
export function stepNames(step: StepDef): readonly string[] {
  return step.repair?.names ?? [step.id.replace(/_/g, ' ')];
}

/**
 * True when a caller may correct this step's answer from a later one: corrections are on
 * for the flow and this step, its answer is not masked, and it is a question (not an
 * announcement or a nested flow).
 */
export function correctable(def: FlowDefinition, step: StepDef): boolean {
  return (
    def.repair !== undefined &&
    allows(def.repair, step, 'correct') &&
    step.runner.kind === 'task' &&
    listens(step)
  );
}

/** A line with `{name}` and `{value}` filled in. */
export function fillLine(line: string, fields: { name?: string; value?: string }): string {
  return line.replace(/\{(name|value)\}/g, (_, key: 'name' | 'value') => fields[key] ?? '');
}
