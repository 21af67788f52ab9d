/**
 * What a step's answer may be, so an answer read back from a checkpoint (or given by a
 * migration) is checked before the flow trusts it: the task definition's zod schema, the
 * step's own `schema`, the rules of a digit collection, the values of a menu, the answers of
 * a nested flow, nothing for a step that only speaks.
 */
import type { z } from 'zod/v4';
import type { FlowDefinition, StepDef } from './definition.js';
import { listens } from './definition.js';

/** Checks one answer; undefined when the step's answers cannot be checked at all. */
export type AnswerCheck = (value: unknown) => boolean;

/** The check of a step's answer, or undefined when nothing is known about it. */
export function answerCheck(step: StepDef): AnswerCheck | undefined {
  const runner = step.runner;
  if (runner.kind === 'flow') {
    const inner = runner.flow;
    return (value) => nestedAnswers(inner, value);
  }
  const schema = runner.schema;
  if (schema) return (value) => schema.safeParse(value).success;
  if (!listens(step)) return (value) => value === undefined;
  return runner.check;
}

function nestedAnswers(def: FlowDefinition, value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const [id, v] of Object.entries(value)) {
    const step = def.steps.find((s) => s.id === id);
    const check = step && answerCheck(step);
    if (!check?.(v)) return false;
  }
  return true;
}

/**
 * A check derived from what a definition object shows of itself: its zod `schema`; a digit
 * collection's `options` (min/max digits, valid keys, validator); a menu's `config.options`
 * (one of their values). Undefined when it shows none of these.
 */
export function derivedCheck(source: unknown): { schema?: z.ZodType; check?: AnswerCheck } {
  if (typeof source !== 'object' || source === null) return {};
  const s = source as { schema?: unknown; options?: unknown; config?: unknown };
  if (isZodSchema(s.schema)) return { schema: s.schema };
  const o = s.options as
    | {
        minDigits?: unknown;
        maxDigits?: unknown;
        validDigits?: unknown;
        validator?: unknown;
      }
    | undefined;
  if (
    o &&
    typeof o === 'object' &&
    typeof o.minDigits === 'number' &&
    typeof o.maxDigits === 'number' &&
    typeof o.validDigits === 'string'
  ) {
    const { minDigits, maxDigits, validDigits } = o as {
      minDigits: number;
      maxDigits: number;
      validDigits: string;
    };
    const validator =
      typeof o.validator === 'function' ? (o.validator as (d: string) => unknown) : undefined;
    return {
      check: (value) =>
        typeof value === 'string' &&
        value.length >= minDigits &&
        value.length <= maxDigits &&
        [...value].every((c) => validDigits.includes(c)) &&
        (validator === undefined || safeValidator(validator, value)),
    };
  }
  const config = s.config as { options?: unknown } | undefined;
  if (
    config &&
    typeof config === 'object' &&
    typeof config.options === 'object' &&
    config.options
  ) {
    const values = Object.values(config.options as Record<string, { value?: unknown }>).map((opt) =>
      JSON.stringify(opt?.value),
    );
    return { check: (value) => values.includes(JSON.stringify(value)) };
  }
  return {};
}

function safeValidator(validator: (d: string) => unknown, value: string): boolean {
  try {
    return validator(value) === undefined;
  } catch {
    return false;
  }
}

/** True for a zod 4 schema (zod 3 ones have no `_zod`). */
export function isZodSchema(v: unknown): v is z.ZodType {
  return (
    typeof v === 'object' &&
    v !== null &&
    '_zod' in v &&
    typeof (v as { safeParse?: unknown }).safeParse === 'function'
  );
}

/** True when a source says it masks its answer (`collectDigits({ mask: true })`, `meta.masked`). */
export function sourceMasked(source: unknown): boolean {
  if ((typeof source !== 'object' && typeof source !== 'function') || source === null) return false;
  const s = source as {
    kind?: unknown;
    definition?: { steps?: ReadonlyArray<{ masked?: unknown }> };
    options?: { mask?: unknown };
    spec?: { mask?: unknown };
    meta?: { masked?: unknown };
  };
  // A nested flow's answer holds its steps' answers: masked if any of them is.
  if (s.kind === 'flow') return s.definition?.steps?.some((step) => step.masked === true) ?? false;
  return s.options?.mask === true || s.spec?.mask === true || s.meta?.masked === true;
}
