/**
 * Old words a scenario file may still use for values taskline has renamed (a task's `status`
 * `done`, now `completed`): the file keeps passing, with a deprecation notice saying where the
 * old word is, instead of failing on a rename it did not make.
 */
import { noticeDeprecation } from '../core/deprecation.js';
import { RETIRED_STATUS_NOTICE, RETIRED_TASK_STATUSES } from '../delegation/types.js';

/**
 * `expected` (an `outcome:` as written) with each task `status` (in an entry of a `tasks`
 * list) that holds an old word where `actual` holds its new one, at the same place, written
 * in the new word; a notice for each.
 * An old word anywhere else is left as it is (and matches nothing new).
 */
export function inCurrentWords(actual: unknown, expected: unknown, where?: string): unknown {
  return walk(actual, expected, '', (path, old, now) =>
    noticeDeprecation(
      RETIRED_STATUS_NOTICE,
      `${where ? `${where}: ` : ''}outcome ${path}: the task status '${old}' is now '${now}'; write '${now}' ('${old}' is still read, for now).`,
    ),
  );
}

type Renamed = (path: string, old: string, now: string) => void;

/** Where a task's snapshot sits in an outcome: an entry of a `tasks` list (todos and flows are not tasks). */
const TASK_ENTRY = /(^|\.)tasks\[\d+\]$/;

function walk(actual: unknown, expected: unknown, path: string, renamed: Renamed): unknown {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return expected;
    return expected.map((e, i) => walk(actual[i], e, `${path}[${i}]`, renamed));
  }
  if (!isObject(expected) || !isObject(actual)) return expected;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(expected)) {
    const at = path ? `${path}.${key}` : key;
    const now = typeof value === 'string' ? RETIRED_TASK_STATUSES.get(value) : undefined;
    if (key === 'status' && TASK_ENTRY.test(path) && now !== undefined && actual[key] === now) {
      renamed(at, value as string, now);
      out[key] = now;
    } else {
      out[key] = walk(actual[key], value, at, renamed);
    }
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
