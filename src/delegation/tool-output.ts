/**
 * What the `task` tool hands back to the model: the structured output of the dynamic task tool
 * contract (`status`, `task_id`, `subagent_type`, `result`, `function_calls`), with a speakable
 * summary and explicit reminders riding along. Kept apart from the manager so the shape has
 * one home.
 */
import type { TaskSnapshot, TaskToolArgs } from './types.js';

/** The `task` tool's output to the model. */
export interface TaskToolOutput {
  status: 'completed' | 'error';
  task_id: string;
  subagent_type: string;
  /** The sub-agent's answer; for an error, what went wrong (and any partial output). */
  result: string;
  /** Names of the tools the sub-agent called, in order. */
  function_calls: string[];
  /** A short version the voice agent can say. */
  summary?: string;
  /** Where the full result is, when `result` had to be shortened. */
  result_path?: string;
  /** Why the model's request was not followed exactly (an argument that is not available). */
  reminder?: string;
}

/** Output longer than this is shortened to the summary plus the result file. */
export const INLINE_OUTPUT_CHARS = 2_000;

/** The tool output for a finished task. */
export function taskToolOutput(
  task: TaskSnapshot,
  reminders: readonly string[] = [],
): TaskToolOutput {
  const r = task.result;
  const base = {
    task_id: task.id,
    subagent_type: task.subagentType,
    function_calls: r?.functionCalls ?? [],
    ...(reminders.length > 0 ? { reminder: reminders.join(' ') } : {}),
  };
  if (!r) {
    return {
      ...base,
      status: 'error',
      result: `The task is ${task.status}; it has no result yet.`,
    };
  }
  const long = r.output.length > INLINE_OUTPUT_CHARS;
  const where = r.resultPath ? { result_path: r.resultPath } : {};
  if (r.status === 'completed') {
    return {
      ...base,
      status: 'completed',
      result: long ? `${r.output.slice(0, INLINE_OUTPUT_CHARS)}…` : r.output,
      summary: r.summary,
      ...(long ? where : {}),
    };
  }
  const reason =
    r.status === 'timeout'
      ? `timed out: ${r.error?.message ?? 'no result in time'}`
      : r.status === 'cancelled'
        ? `cancelled: ${r.error?.message ?? 'no reason given'}`
        : `failed: ${r.error?.message ?? r.summary}`;
  const partial = r.output ? ` Partial output: ${long ? r.summary : r.output}` : '';
  return { ...base, status: 'error', result: `${reason}.${partial}`, summary: r.summary, ...where };
}

/** What the host offers the `task` call that came in. */
export interface ToolCapabilities {
  /** The model may choose a sub-agent's model. */
  modelOverride: boolean;
  /** The task may run in the background (not for sub-agents or voice specialists). */
  background: boolean;
}

/**
 * Drops arguments the host cannot honour, with a reminder for each, so the model is told
 * instead of silently ignored: `model` when model choice is off, `run_in_background: true`
 * where a task always runs to its end.
 */
export function checkToolArgs(
  args: TaskToolArgs,
  can: ToolCapabilities,
): { args: TaskToolArgs; reminders: string[] } {
  const reminders: string[] = [];
  let out = args;
  if (!can.modelOverride && args.model !== undefined && args.model !== null && args.model !== '') {
    out = { ...out, model: null };
    reminders.push(
      `model is not available here (choosing a model is turned off): the task ran on the sub-agent's own model; leave model out.`,
    );
  }
  if (!can.background && args.run_in_background === true) {
    out = { ...out, run_in_background: null };
    reminders.push(
      'run_in_background is not available here: the task ran to its end before this answer; leave run_in_background out.',
    );
  }
  return { args: out, reminders };
}
