/**
 * The headless deep agent: the same parts as the voice one (files, todos, execution, skills,
 * memory, the approval gate) as a sub-agent a TaskManager runs as an LLM tool loop. Its
 * workspace is its own backend, shared by its runs. It inherits the voice agent's approval
 * policy when given the same gate: guarded tools then ask the supervisor (sub-agents cannot
 * ask the caller) or are refused with a result the sub-agent can report back.
 */
import type { llm } from '@livekit/agents';
import { defineSubAgent, type SubAgentSpec } from '../delegation/subagent.js';
import { buildParts, type DeepAgentOptions } from './agent.js';
import type { ApprovalGate } from './approval/guard.js';
import { DEFAULT_MEMORY_PATH, loadMemory, memoryPrompt } from './memory.js';
import { loadSkills, skillsPrompt } from './tools/skills/tools.js';

/** Options of {@link createHeadlessDeepAgent}. */
export interface HeadlessDeepAgentOptions
  extends Omit<
    DeepAgentOptions,
    'greeting' | 'summarization' | 'delegation' | 'approval' | 'id' | 'chatCtx'
  > {
  /** The `subagent_type` the voice agent's model names. */
  name: string;
  /** When to use it, for the model choosing a sub-agent. */
  description: string;
  /** The sub-agent's model (the TaskManager's otherwise). */
  llm?: llm.LLM;
  /** Most model turns per run (the TaskManager's default otherwise). */
  maxTurns?: number;
  /** The approval gate to inherit: pass the voice agent's `agent.approvals`. */
  approvals?: ApprovalGate;
}

/** A headless deep agent: its sub-agent spec, and `close()` for its sandboxes. */
export interface HeadlessDeepAgent {
  spec: SubAgentSpec;
  close(): Promise<void>;
}

/**
 * Builds a headless deep agent for a TaskManager's `subagents`. Loads its skills and memory
 * first (an invalid SKILL.md rejects with `invalid_argument`).
 */
export async function createHeadlessDeepAgent(
  options: HeadlessDeepAgentOptions,
): Promise<HeadlessDeepAgent> {
  const parts = buildParts(options, { subagent: options.name });
  if (options.skills && options.skills.length > 0) {
    parts.skills.push(...(await loadSkills(parts.backend, options.skills)));
  }
  const mem = typeof options.memory === 'object' ? options.memory : {};
  const memory = options.memory
    ? await loadMemory(parts.backend, mem.paths ?? [DEFAULT_MEMORY_PATH], parts.fileState)
    : [];
  const instructions = [
    parts.prompt({
      ...(parts.skills.length > 0 ? { skills: skillsPrompt(parts.skills) } : {}),
      ...(options.memory ? { memory: memoryPrompt(memory, mem.maxChars) } : {}),
    }),
    'You work in the background for the voice agent and cannot talk to the caller. End with ' +
      'the result only: one or two plain sentences the voice agent can say, then details.',
  ].join('\n\n');
  const tools = options.approvals
    ? options.approvals.guard(parts.tools, { subagent: options.name }, { partial: true })
    : parts.tools;
  const spec = defineSubAgent({
    name: options.name,
    description: options.description,
    instructions,
    tools,
    ...(options.llm ? { llm: options.llm } : {}),
    ...(options.maxTurns ? { maxTurns: options.maxTurns } : {}),
  });
  return {
    spec,
    close: async () => {
      await parts.execution?.close();
    },
  };
}
