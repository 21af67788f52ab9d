/**
 * zod's issues with a flow document, as one sentence a person can act on each: an unknown
 * field with the fields that are known, a missing one, a wrong type with the value found,
 * and for `next` the problem with the shape it tried to be (conditions, a pick, a table).
 */
import type { z } from 'zod/v4';
import { flowSchemas } from './schema.js';

/** One issue, where it is in the document. */
export interface Explained {
  path: PropertyKey[];
  message: string;
  /** Point at the key of the last path element (an unknown field), not its value. */
  atKey?: boolean;
}

/** zod issues as one actionable sentence each (one per place). */
export function explainAll(issues: readonly z.core.$ZodIssue[], data: unknown): Explained[] {
  const out: Explained[] = [];
  const seen = new Set<string>();
  for (const issue of issues) {
    const e = explain(issue, data);
    const key = e.path.join('.');
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(e);
  }
  return out;
}

function explain(issue: z.core.$ZodIssue, data: unknown): Explained {
  const path = [...issue.path];
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys;
    return {
      path: [...path, keys[0]!],
      message: `unknown field${keys.length > 1 ? 's' : ''} ${keys.map((k) => `"${k}"`).join(', ')}${knownFields(path)}`,
      atKey: true,
    };
  }
  if (
    (issue.code === 'invalid_union' || issue.code === 'invalid_type') &&
    path.length > 0 &&
    valueAt(data, path) === undefined
  ) {
    return { path, message: `"${String(path.at(-1))}" is missing` };
  }
  if (issue.code === 'invalid_union' && path.at(-1) === 'next') {
    return { path, ...explainNext(valueAt(data, path)) };
  }
  if (issue.code === 'invalid_type') {
    const got = valueAt(data, path);
    return { path, message: `expected ${article(issue.expected)}, got ${describeValue(got)}` };
  }
  return { path, message: issue.message.replace(/^Invalid input: /, '') };
}

/** Which shape a `next` value tried to be, and what is wrong with it as that shape. */
function explainNext(value: unknown): { message: string } {
  const {
    when: whenSchema,
    pick: pickSchema,
    table: tableSchema,
    next: nextSchema,
  } = flowSchemas();
  const shape =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? 'when' in value
        ? whenSchema
        : 'pick' in value
          ? pickSchema
          : tableSchema
      : nextSchema;
  const parsed = shape.safeParse(value);
  if (parsed.success)
    return { message: 'next is a step id, a table, { when, else } or { pick, to }' };
  const issue = parsed.error.issues[0]!;
  const e = explain(issue, value);
  const where = e.path.length ? ` (next.${e.path.join('.')})` : '';
  const what =
    shape === whenSchema
      ? 'conditions'
      : shape === pickSchema
        ? 'a pick'
        : shape === tableSchema
          ? 'a branch table'
          : 'next';
  return { message: `${what}: ${e.message}${where}` };
}

function knownFields(path: PropertyKey[]): string {
  if (path.length === 0)
    return ' (known: flow, version, label, context, maxBackSteps, maxStepRuns, steps)';
  if (path.length === 2 && path[0] === 'steps') {
    return ' (known: id, task, with, announce, flow, label, next, canRevisit, skippable, onFailure, maxVisits, timeoutMs, context, mask)';
  }
  return '';
}

function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let cur = data;
  for (const key of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  return `${typeof v} ${String(v)}`;
}
