import { TasklineError } from '../core/errors.js';
import type { SubAgentSpec } from '../delegation/subagent.js';
import type { DelegationSender } from './bus/sender.js';

/** Options for {@link remoteSubAgent}. */
export interface RemoteSubAgentOptions {
  /** The `subagent_type` the model names. */
  name: string;
  /** When to use it, for the model choosing a sub-agent. */
  description: string;
  /** The sender side of the durable delegations (`createDelegationSender`). */
  sender: DelegationSender;
  /** The agent (worker process) that executes it: `serveDelegations({ agentId: target })`. */
  target: string;
  /** The delegation type the worker understands (default: `name`). */
  delegationType?: string;
  /** Deadline on the delegation record; the expiry checker marks it `expired` after it. */
  deadlineMs?: number;
}

/**
 * A sub-agent that runs in another process: each `task` call becomes a durable delegation
 * record (outbox + bus) for `target`, and the worker's result comes back through the
 * TaskManager, which speaks it to whichever agent is current — as for local sub-agents.
 */
export function remoteSubAgent(options: RemoteSubAgentOptions): SubAgentSpec<unknown> {
  const type = options.delegationType ?? options.name;
  return {
    name: options.name,
    description: options.description,
    instructions: `Delegated to ${options.target} (${type}).`,
    async run(brief, signal) {
      const record = await options.sender.delegate({
        target: options.target,
        delegation_type: type,
        task_id: brief.taskId,
        sub_task_data: { prompt: brief.prompt, description: brief.description },
        ...(options.deadlineMs !== undefined ? { deadlineMs: options.deadlineMs } : {}),
      });
      const result = await options.sender.awaitResult(record.delegation_id, { signal });
      if (result.state !== 'done') {
        const raw = result.result;
        const detail =
          typeof raw === 'string' ? raw : (raw as { error?: unknown } | undefined)?.error;
        throw new TasklineError(
          result.state === 'expired' ? 'timeout' : 'invalid_state',
          `${options.target} ${result.state} the delegation${detail ? `: ${String(detail)}` : ''}.`,
        );
      }
      const value = result.result;
      return { output: typeof value === 'string' ? value : JSON.stringify(value, null, 2), value };
    },
  };
}
