/**
 * Types of the approval policy: which tools need a yes before they run, who gives it (the
 * caller by voice, or a supervisor through a callback or the delegation records), and what a
 * decision is.
 */
import type { DelegationStore } from '../../delegation/record.js';

/** What a guarded tool call would do. */
export interface ApprovalRequest {
  /** The tool's name. */
  tool: string;
  /** The arguments the model gave (after any earlier change). */
  args: Record<string, unknown>;
  /** The model's tool call id. */
  toolCallId: string;
  /** The action in words, as said to the caller ("transfer 500 dollars to savings"). */
  description: string;
  /** Which agent asks: the voice agent, or a sub-agent (its task id). */
  origin: 'voice' | { subagent: string };
}

/** An approver's answer. */
export type ApprovalDecision =
  | { decision: 'approve'; reason?: string }
  | { decision: 'reject'; reason?: string }
  /** Run the tool with these arguments changed (merged over the model's arguments). */
  | { decision: 'change'; changes: Record<string, unknown>; reason?: string };

/** A supervisor that decides by code (a UI, a rule engine, a human behind an API). */
export type SupervisorCallback = (
  request: ApprovalRequest,
  signal: AbortSignal,
) => Promise<ApprovalDecision>;

/** A supervisor that decides through the delegation records (the HTTP API and its clients). */
export interface DelegationApprover {
  /** Where the approval records are created. */
  store: DelegationStore;
  /** `target_subject_id` of the records (default "supervisor"). */
  target?: string;
  /** `sender_subject_id` of the records (default "voice-agent"). */
  sender?: string;
  /** How often the record is read for a decision (default 1 s, on the call's clock). */
  pollMs?: number;
}

/** Per-tool approval options. */
export interface ApprovalToolOptions {
  /** The action in words for the caller, from the arguments. */
  describe?: (args: Record<string, unknown>) => string;
}

/** Who must approve which tools, and how long to wait. */
export interface ApprovalPolicy {
  /** Tools that need approval: names, or names with per-tool options. */
  tools: readonly string[] | Readonly<Record<string, ApprovalToolOptions>>;
  /**
   * Ask the caller on the call (default true for the voice agent). Sub-agents cannot ask the
   * caller; they use the supervisor when there is one and are refused otherwise.
   */
  caller?: boolean;
  /** A supervisor callback (used when `caller` is false, and by sub-agents). */
  supervisor?: SupervisorCallback;
  /** A supervisor through the delegation records (as `supervisor`). */
  delegations?: DelegationApprover;
  /** Longest wait for a supervisor's decision (default 120 s; then the action is not taken). */
  timeoutMs?: number;
  /** Most argument changes the caller may ask for on one call (default 2). */
  maxChanges?: number;
  /**
   * Guard the same tools in the headless sub-agents the agent's TaskManager runs (default
   * true): a sub-agent's guarded tool asks the supervisor, or is refused with a result it can
   * report back. `false` leaves sub-agents unguarded, and `task` then counts as a tool that
   * can change the workspace.
   */
  subagents?: boolean;
}

/** The tool names of a policy. */
export function guardedNames(policy: ApprovalPolicy): string[] {
  return Array.isArray(policy.tools)
    ? [...(policy.tools as readonly string[])]
    : Object.keys(policy.tools);
}

/** A policy's options for one tool. */
export function toolOptions(policy: ApprovalPolicy, name: string): ApprovalToolOptions {
  if (Array.isArray(policy.tools)) return {};
  return (policy.tools as Record<string, ApprovalToolOptions>)[name] ?? {};
}
