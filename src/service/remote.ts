import { TasklineError } from '../core/errors.js';
import { type DelegationRecord, type DelegationStore, epochSeconds } from '../delegation/record.js';
import type { SubAgentRunResult, SubAgentSpec } from '../delegation/subagent.js';
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

/** Most delegations of one call a recovering job takes over. */
const MAX_RECOVERED = 100;

/**
 * A sub-agent that runs in another process: each `task` call becomes a durable delegation
 * record (outbox + bus) for `target`, and the worker's result comes back through the
 * TaskManager, which speaks it to whichever agent is current — as for local sub-agents.
 *
 * Its delegations outlive the voice worker: each record names its call (`sub_task_data.call_id`)
 * and, once its result was told to the caller, when (`sub_task_data.delivered_at`). A job that
 * resumes the call after a crash finds the ones not yet told (`TaskManager.recover()`), makes
 * itself their sender (so their result events reach it, not the dead job) and speaks each once.
 */
export function remoteSubAgent(options: RemoteSubAgentOptions): SubAgentSpec<unknown> {
  const type = options.delegationType ?? options.name;
  const { sender } = options;
  const resultOf = async (
    delegationId: string,
    signal: AbortSignal,
  ): Promise<SubAgentRunResult<unknown>> => {
    const result = await sender.awaitResult(delegationId, { signal });
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
    return {
      output: typeof value === 'string' ? value : JSON.stringify(value, null, 2),
      value,
      delivered: () => markDelivered(sender.store, delegationId),
    };
  };
  return {
    name: options.name,
    description: options.description,
    instructions: `Delegated to ${options.target} (${type}).`,
    async run(brief, signal) {
      const record = await sender.delegate({
        target: options.target,
        delegation_type: type,
        task_id: brief.taskId,
        sub_task_data: {
          prompt: brief.prompt,
          description: brief.description,
          ...(brief.callId !== undefined ? { call_id: brief.callId } : {}),
        },
        ...(options.deadlineMs !== undefined ? { deadlineMs: options.deadlineMs } : {}),
      });
      return resultOf(record.delegation_id, signal);
    },
    async recover(callId) {
      const page = await sender.store.query(
        {
          'sub_task_data.call_id': callId,
          delegation_type: type,
          target_subject_id: options.target,
          'sub_task_data.delivered_at': { $exists: false },
        },
        { limit: MAX_RECOVERED },
      );
      return page.items.map((record) => ({
        description: textOf(record, 'description') || type,
        prompt: textOf(record, 'prompt'),
        async wait(signal: AbortSignal) {
          // The dead job's reply inbox has no reader: results are told to this job from now on.
          if (record.sender_subject_id !== sender.agentId) {
            await sender.store.update(record.delegation_id, { sender_subject_id: sender.agentId });
          }
          return resultOf(record.delegation_id, signal);
        },
      }));
    },
  };
}

function textOf(record: DelegationRecord, key: string): string {
  const value = record.sub_task_data[key];
  return typeof value === 'string' ? value : '';
}

/** Records on the delegation that its result was told to the caller (epoch seconds). */
async function markDelivered(store: DelegationStore, delegationId: string): Promise<void> {
  await store.update(delegationId, { 'sub_task_data.delivered_at': epochSeconds(Date.now()) });
}
