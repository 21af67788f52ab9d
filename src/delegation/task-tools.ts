/**
 * The model-facing delegation tools: `task`, `task_status` and `task_cancel`. Their
 * descriptions teach the model when to delegate, how to brief a sub-agent, and not to
 * poll. The work itself is done by a {@link DelegationHost} (the TaskManager).
 */
import { llm } from '@livekit/agents';
import { z } from 'zod/v4';
import type { DelegationHost, SubAgentInfo } from './types.js';

function typeList(types: readonly SubAgentInfo[]): string {
  return types
    .map(
      (t) =>
        `- ${t.name}${t.kind === 'voice' ? ' [voice: talks to the caller]' : ''}: ${t.description}`,
    )
    .join('\n');
}

function typeSchema(types: readonly SubAgentInfo[]) {
  const names = types.map((t) => t.name);
  const [first, ...rest] = names;
  if (first === undefined) throw new Error('no sub-agent types');
  return z.enum([first, ...rest]).describe('Which sub-agent does the work (see the list above)');
}

const description = z
  .string()
  .describe(
    'A short title you could say aloud, 3 to 8 words, e.g. "Check the refund policy". Shown in status lists.',
  );

const prompt = z
  .string()
  .nullish()
  .describe(
    'The full, self-contained brief. The sub-agent cannot hear the call: include every detail it ' +
      'needs (names, dates, numbers, what the caller asked) and say exactly what to return. ' +
      'Defaults to the description.',
  );

const taskId = z
  .string()
  .nullish()
  .describe(
    'To follow up on an earlier task, its id (e.g. "t2"): the same sub-agent continues with its memory and files.',
  );

/**
 * `model` is part of the task tool's contract. When the host does not let the model choose, the
 * parameter stays (a model that passes it anyway is told so in the result, not silently ignored).
 */
function modelParam(allowed: boolean) {
  return z
    .string()
    .nullish()
    .describe(
      allowed
        ? 'Run the sub-agent on this model instead of its default'
        : 'Not available here: sub-agents run on their own model. Leave it out.',
    );
}

/** Options for {@link createDelegationTools}. */
export interface DelegationToolsOptions {
  /** Extra guidance appended to the `task` description (your domain's do's and don'ts). */
  guidance?: string;
}

/**
 * The delegation tools for the voice agent, in the object form an `Agent` takes as
 * `tools`. Completions reach the model by themselves (a deferred reply), so the model
 * never needs to poll.
 */
export function createDelegationTools(host: DelegationHost, options: DelegationToolsOptions = {}) {
  const types = host.subagentTypes(0);
  const hasVoice = types.some((t) => t.kind === 'voice');
  const shape = {
    subagent_type: typeSchema(types),
    description,
    prompt,
    run_in_background: z
      .boolean()
      .nullish()
      .describe(
        'true: reply to the caller at once and let it run (for anything slow). false: wait for the ' +
          'answer (capped). Leave it out to wait only if it is quick.',
      ),
    task_id: taskId,
    model: modelParam(host.modelOverride),
  };
  const parameters = z.object(shape);

  return {
    task: llm.tool({
      description: [
        'Delegate work to a sub-agent so the caller never waits in silence. Use it for anything that',
        'takes more than a few seconds or several steps: looking things up across documents,',
        'research, drafting, planning. Do quick things yourself.',
        hasVoice
          ? 'Voice specialists ([voice]) take over the call to talk with the caller (for example to collect details) and then hand back.'
          : '',
        '',
        'Sub-agents:',
        typeList(types),
        '',
        'Briefing: `description` is a short speakable title; `prompt` is the complete brief, because the',
        'sub-agent knows nothing about this call. Ask for the answer in a form you can say aloud.',
        '',
        'Results: a quick task answers here at once. A longer one continues in the background: tell',
        'the caller you are on it and keep the conversation going; its result is given to you',
        'automatically when it is ready. Never poll with task_status and never start the same task',
        'twice. To continue an earlier task with a new instruction, pass its task_id.',
        '',
        'The result is JSON: {"status":"completed"|"error","task_id","subagent_type","result",',
        '"function_calls":[tool names],"summary"}; `reminder` says when an argument was not available.',
        options.guidance ?? '',
      ]
        .filter((line, i, all) => line !== '' || all[i - 1] !== '')
        .join('\n')
        .trim(),
      parameters,
      execute: (args, toolOptions) =>
        host.runTaskTool(args, { options: toolOptions as llm.ToolOptions<unknown>, depth: 0 }),
    }),

    task_status: llm.tool({
      description:
        'See where delegated tasks stand, without waiting: one task with task_id, all of them ' +
        'without. Results are delivered to you automatically, so use this only when the caller ' +
        'asks how something is going.',
      parameters: z.object({
        task_id: z.string().nullish().describe('The task to look at; all tasks when omitted'),
      }),
      execute: async ({ task_id }) => host.statusText(task_id ?? undefined, {}),
    }),

    task_cancel: llm.tool({
      description:
        'Cancel a delegated task that is no longer wanted (the caller changed their mind or it is ' +
        'no longer needed).',
      parameters: z.object({
        task_id: z.string().describe('The id of the task to cancel, e.g. "t1"'),
      }),
      execute: ({ task_id }) => host.cancelFromTool(task_id, {}),
    }),
  };
}

/** The record {@link createDelegationTools} returns. */
export type DelegationTools = ReturnType<typeof createDelegationTools>;

/**
 * The `task`, `task_status` and `task_cancel` tools of a sub-agent at `depth`: a nested task
 * runs to its end and its result is the tool's output (a sub-agent has no call to keep
 * talking in). Only headless sub-agents are offered.
 */
export function createSubAgentTaskTools(
  host: DelegationHost,
  scope: { parentId: string; depth: number },
) {
  const types = host.subagentTypes(scope.depth);
  return {
    task: llm.tool({
      description: [
        'Hand a self-contained part of your work to another sub-agent and wait for its result.',
        'Only worth it for a large, separable piece of work; do small steps yourself.',
        '',
        'Sub-agents:',
        typeList(types),
        '',
        '`description` is a short title; `prompt` the complete brief (the sub-agent sees nothing of',
        'your work). Pass task_id to continue an earlier task of yours.',
      ].join('\n'),
      parameters: z.object({
        subagent_type: typeSchema(types),
        description,
        prompt,
        task_id: taskId,
        run_in_background: z
          .boolean()
          .nullish()
          .describe('Not available to sub-agents: a task you start runs to its end. Leave it out.'),
        model: modelParam(host.modelOverride),
      }),
      execute: (args, toolOptions) =>
        host.runTaskTool(args, {
          options: toolOptions as llm.ToolOptions<unknown>,
          parentId: scope.parentId,
          depth: scope.depth,
        }),
    }),
    task_status: llm.tool({
      description: 'See where the tasks you started stand, without waiting.',
      parameters: z.object({
        task_id: z.string().nullish().describe('One task; all when omitted'),
      }),
      execute: async ({ task_id }) =>
        host.statusText(task_id ?? undefined, { parentId: scope.parentId }),
    }),
    task_cancel: llm.tool({
      description: 'Cancel a task you started that is no longer needed.',
      parameters: z.object({ task_id: z.string().describe('The id of the task to cancel') }),
      execute: ({ task_id }) => host.cancelFromTool(task_id, { parentId: scope.parentId }),
    }),
  };
}
