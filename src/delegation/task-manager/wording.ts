/**
 * What the manager says: the lines the voice agent is given when a task goes to the
 * background, hands the call to a specialist, is asked about, or is delivered, and the
 * result file's markdown. Pure functions of a task's snapshot.
 */
import { llm } from '@livekit/agents';
import type { TaskResult, TaskSnapshot } from '../types.js';

/** The default sentence suggested to the voice agent when a task goes to the background. */
export const DEFAULT_RELEASE_LINE =
  "I'm looking into that now. I'll tell you as soon as I have it.";

/** Milliseconds as seconds, one decimal at most. */
export function seconds(ms: number): string {
  const s = ms / 1000;
  return Number.isInteger(s) ? `${s}` : s.toFixed(1);
}

/** How every line names a task. */
export function title(s: TaskSnapshot): string {
  return `Task ${s.id} ("${s.description}")`;
}

/** The `task` call's answer when the task continues in the background. */
export function releaseText(s: TaskSnapshot, line: string): string {
  return (
    `${title(s)} is now running in the background. Tell the caller in one short sentence ` +
    `that you are on it (for example: "${line}"), then carry on with the conversation. Its ` +
    'result will be given to you automatically when it is ready: do not call task_status to ' +
    'check on it, and do not start it again.'
  );
}

/** The `task` call's answer when a voice specialist takes over the call. */
export function handoverText(s: TaskSnapshot): string {
  return (
    `${title(s)}: the ${s.subagentType} specialist takes over the call now. Say ` +
    'one short sentence to hand over; the specialist speaks next, and its result will be given ' +
    'to you when it is done.'
  );
}

/** One task's line in a `task_status` answer. */
export function statusLine(s: TaskSnapshot, detailed: boolean, now: number): string {
  let line = `${s.id} · ${s.subagentType} · "${s.description}" · `;
  if (s.status === 'queued') line += 'waiting for a free slot';
  else if (s.status === 'running')
    line += `running for ${seconds(Math.max(0, now - (s.startedAt ?? now)))} s`;
  else line += s.status;
  if (s.result && (detailed || s.status !== 'completed')) line += `: ${s.result.summary}`;
  if (s.status === 'running' && detailed) {
    line += '. Its result will be given to you automatically; no need to check again.';
  }
  return line;
}

/**
 * The `task_status` answer: one task of `tasks` (those in the caller's scope) in detail, or
 * a line for each. An unknown id is a tool error the model can act on.
 */
export function statusAnswer(
  tasks: readonly TaskSnapshot[],
  taskId: string | undefined,
  now: number,
): string {
  if (taskId) {
    const task = tasks.find((t) => t.id === taskId);
    if (!task) {
      throw new llm.ToolError(
        `not_found: there is no task "${taskId}"; call task_status without task_id to list them.`,
      );
    }
    return statusLine(task, true, now);
  }
  if (tasks.length === 0) return 'No tasks have been started.';
  return tasks.map((t) => statusLine(t, false, now)).join('\n');
}

/** What the model is told when a result is spoken later (short; the file has the rest). */
export function deliveryText(s: TaskSnapshot): string {
  const r = s.result;
  if (!r) return `${title(s)} is ${s.status}.`;
  const where = r.resultPath
    ? ` (full ${r.partial ? 'partial output' : 'result'}: ${r.resultPath})`
    : '';
  switch (r.status) {
    case 'completed':
      return `${title(s)} completed: ${r.summary}${where}`;
    case 'failed':
      return `${title(s)} failed: ${r.error?.message ?? r.summary}. Apologize briefly and offer another way.`;
    case 'timeout':
      return `${title(s)} timed out. ${r.output ? `Partial result: ${r.summary}` : 'It produced nothing.'}${where}`;
    case 'cancelled':
      return `${title(s)} was cancelled: ${r.error?.message ?? 'no reason given'}.`;
  }
}

/** The result file (`/tasks/<id>/result.md`): the brief and the full output. */
export function resultMarkdown(s: TaskSnapshot, result: TaskResult): string {
  const lines = [
    `# ${s.description}`,
    '',
    `- task: ${s.id}`,
    `- sub-agent: ${s.subagentType}`,
    `- status: ${result.status}${result.partial ? ' (partial output)' : ''}`,
  ];
  if (s.resumedFrom) lines.push(`- continues: ${s.resumedFrom}`);
  if (result.error) lines.push(`- error: ${result.error.code}: ${result.error.message}`);
  lines.push('', '## Brief', '', s.prompt, '', '## Result', '', result.output || '(no output)', '');
  return lines.join('\n');
}
