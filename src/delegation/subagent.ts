/**
 * Sub-agent definitions: headless ones (an instruction, tools, a model, maybe an output
 * schema) run as an LLM tool loop; voice specialists (an AgentTask factory, e.g. a typed
 * capture task) run inline in the foreground of the call.
 */
import type { llm, voice } from '@livekit/agents';
import type { z } from 'zod/v4';
import { TasklineError } from '../core/errors.js';
import type { Outcome } from '../outcome.js';
import type { TaskDefinition } from '../tasks/define.js';
import type { Workspace } from './workspace.js';

/** The name of the sub-agent every TaskManager offers unless told not to. */
export const GENERAL_PURPOSE = 'general-purpose';

/** What a sub-agent's tool factory receives: its own workspace and where it runs. */
export interface SubAgentToolContext {
  workspace: Workspace;
  taskId: string;
  depth: number;
}

/** Which headless run a {@link SubAgentToolGuard} wraps tools for. */
export interface SubAgentRun {
  /** The sub-agent type. */
  name: string;
  taskId: string;
  depth: number;
}

/**
 * Wraps a headless sub-agent's tools before each run: how a voice agent's approval policy
 * reaches the sub-agents its TaskManager runs (see `TaskManager.guardSubAgentTools`).
 */
export type SubAgentToolGuard = (tools: llm.FunctionTool[], run: SubAgentRun) => llm.FunctionTool[];

/** A headless sub-agent: runs as an LLM tool loop, no voice. */
export interface SubAgentSpec<O = unknown> {
  kind?: 'headless';
  /** The `subagent_type` the model names (letters, digits, `-`, `_`). */
  name: string;
  /** When to use it, for the model choosing a sub-agent. */
  description: string;
  /** Its system prompt. */
  instructions: string;
  /** Its own tools: a map/list, or a factory given the sub-agent's workspace. */
  tools?: llm.ToolContextLike | ((context: SubAgentToolContext) => llm.ToolContextLike);
  /** Also give it the deep-agent tools (files, todos, and `task` below max depth). */
  deepAgentTools?: boolean;
  /** Its model; the TaskManager's default otherwise. */
  llm?: llm.LLM;
  /** Structured output: the run ends when the model submits a value of this shape. */
  output?: z.ZodType<O>;
  /** Turn cap for one run (the TaskManager's default otherwise). */
  maxTurns?: number;
  /** Time one task may take (the TaskManager's `timeoutMs` otherwise). */
  timeoutMs?: number;
  /** The speakable summary of a result; the first sentences of the output by default. */
  summarize?(result: { output: string; value?: O }): string;
  /**
   * Runs the sub-task some other way than a model loop (e.g. on another process through
   * a durable delegation, see `remoteSubAgent`). Replaces the headless run when given.
   */
  run?(brief: SubAgentBrief, signal: AbortSignal): Promise<SubAgentRunResult<O>>;
  /**
   * The work this sub-agent still holds for call `callId` from an earlier job of the call
   * (whose worker died): each entry is awaited by `TaskManager.recover()` in this job and
   * spoken once. Only work that outlives a worker can be recovered (`remoteSubAgent`: the
   * durable delegations other processes run).
   */
  recover?(callId: string, signal: AbortSignal): Promise<RecoveredWork<O>[]>;
}

/** What a sub-agent's own `run` is given. */
export interface SubAgentBrief {
  taskId: string;
  prompt: string;
  description: string;
  /** The call the task belongs to (the manager's attached call), when there is one. */
  callId?: string;
}

/** What a sub-agent's own `run` resolves. */
export interface SubAgentRunResult<O = unknown> {
  output: string;
  value?: O;
  /**
   * Called once when the result has been told to the caller (spoken, or answered inline):
   * how a durable delegation records that it was delivered, so a later job of the call
   * never speaks it again.
   */
  delivered?: () => void | Promise<void>;
}

/** Work an earlier job of the call left running or unspoken (see {@link SubAgentSpec.recover}). */
export interface RecoveredWork<O = unknown> {
  description: string;
  prompt: string;
  /** Resolves the work's result once it has one (at once when it finished meanwhile). */
  wait(signal: AbortSignal): Promise<SubAgentRunResult<O>>;
}

/** A voice specialist: an AgentTask the caller talks to, run inline in the foreground. */
export interface VoiceSpecialistSpec<T = unknown> {
  kind: 'voice';
  name: string;
  description: string;
  /** A fresh AgentTask for one run, given the brief. */
  create(brief: { prompt: string; description: string }): voice.AgentTask<T>;
  /**
   * Time the conversation may take (the TaskManager's `timeoutMs` otherwise); on timeout
   * the AgentTask is completed with a `timeout` error and the call goes back to the agent.
   */
  timeoutMs?: number;
  /** The speakable summary of the task's result. */
  summarize?(value: T): string;
}

/** Any sub-agent type a TaskManager can run. */
export type AnySubAgent = SubAgentSpec<unknown> | VoiceSpecialistSpec<unknown>;

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** Throws `invalid_argument` unless `name` is a usable sub-agent type name. */
export function assertSubAgentName(name: string): void {
  if (!NAME.test(name)) {
    throw new TasklineError(
      'invalid_argument',
      `Sub-agent name "${name}" must start with a letter and use only letters, digits, "-" and "_" (at most 64 characters).`,
    );
  }
}

/** Declares a headless sub-agent, checking its name; the output type follows its schema. */
export function defineSubAgent<O = unknown>(spec: SubAgentSpec<O>): SubAgentSpec<O> {
  assertSubAgentName(spec.name);
  if (!spec.instructions.trim()) {
    throw new TasklineError(
      'invalid_argument',
      `Sub-agent "${spec.name}" needs instructions (its system prompt).`,
    );
  }
  return { ...spec, kind: 'headless' };
}

/** Declares a voice specialist from an AgentTask factory. */
export function voiceSpecialist<T>(
  spec: Omit<VoiceSpecialistSpec<T>, 'kind'>,
): VoiceSpecialistSpec<T> {
  assertSubAgentName(spec.name);
  return { ...spec, kind: 'voice' };
}

/**
 * A voice specialist from a typed task definition (`defineTask` or a prebuilt capture):
 * its typed `Outcome` becomes the task's result.
 */
export function specialistFromTask<T>(
  definition: TaskDefinition<T>,
  options: { name?: string; description: string; summarize?: (outcome: Outcome<T>) => string },
): VoiceSpecialistSpec<Outcome<T>> {
  return voiceSpecialist<Outcome<T>>({
    name: options.name ?? definition.name,
    description: options.description,
    create: () => definition.create(),
    summarize: options.summarize ?? describeOutcome,
  });
}

/** A short sentence for an outcome, e.g. `ok: {"email":"a@b.co"}` or `declined`. */
export function describeOutcome<T>(outcome: Outcome<T>): string {
  if (outcome.status === 'ok') return `ok: ${JSON.stringify(outcome.value)}`;
  return outcome.reason ? `${outcome.status} (${outcome.reason})` : outcome.status;
}

/** True for a voice specialist. */
export function isVoiceSpecialist(spec: AnySubAgent): spec is VoiceSpecialistSpec<unknown> {
  return spec.kind === 'voice';
}

/** The default instructions of the general-purpose sub-agent. */
export const GENERAL_PURPOSE_INSTRUCTIONS = [
  'You are a general-purpose sub-agent working for a voice assistant that is on a phone call.',
  'You get one self-contained brief. Work through it with your tools: plan with write_todos when',
  'it has several steps, keep notes and drafts in files, and read before you edit.',
  'You cannot talk to the caller. When you are done, answer with the result only: start with',
  'one or two plain sentences the assistant can say aloud, then the details.',
].join(' ');

/** The default description of the general-purpose sub-agent. */
export const GENERAL_PURPOSE_DESCRIPTION =
  'General-purpose agent for multi-step work: research across files, drafting, planning. It has files and todos of its own.';
