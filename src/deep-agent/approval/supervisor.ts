/**
 * Approval by a supervisor: a callback, or a durable delegation record that a person (or a
 * service) answers through the delegation HTTP API. Every wait is bounded: no decision in time
 * means the action is not taken, and the record is marked expired. A record's decision counts
 * only for exactly what it asked: if anything but its status changed after it was written (the
 * arguments, the tool, who is asked), the approval is void and the tool does not run.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod/v4';
import type { Clock } from '../../core/clock.js';
import { taskDigest } from '../../delegation/digest.js';
import { deadlineSeconds, epochSeconds, FINAL_STATES } from '../../delegation/record.js';
import type {
  ApprovalDecision,
  ApprovalRequest,
  DelegationApprover,
  SupervisorCallback,
} from './types.js';

/** The stage of an approval record that the supervisor moves to done. */
export const APPROVAL_STAGE = 'approval';
/** `delegation_type` of approval records. */
export const APPROVAL_RECORD_TYPE = 'approval';

/** What a supervisor writes as the stage's `delegation_result`. */
export const ApprovalResult = z.union([
  z.object({ decision: z.literal('approve'), reason: z.string().optional() }),
  z.object({ decision: z.literal('reject'), reason: z.string().optional() }),
  z.object({
    decision: z.literal('change'),
    changes: z.record(z.string(), z.unknown()),
    reason: z.string().optional(),
  }),
]);

/**
 * A supervisor's decision as stored: an object, or (the wire contract stores results as
 * strings) its JSON text, or a bare "approve" / "reject".
 */
function decisionOf(result: unknown): unknown {
  if (typeof result !== 'string') return result;
  const text = result.trim();
  if (text === 'approve' || text === 'reject') return { decision: text };
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function timedOut(ms: number): ApprovalDecision {
  return {
    decision: 'reject',
    reason: `no decision from the supervisor within ${Math.round(ms / 1000)} s`,
  };
}

/** Asks a supervisor callback, waiting at most `timeoutMs` on `clock`. */
export async function askCallback(
  callback: SupervisorCallback,
  request: ApprovalRequest,
  timeoutMs: number,
  clock: Clock,
  signal?: AbortSignal,
): Promise<ApprovalDecision> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer: { cancel(): void } | undefined;
  const deadline = new Promise<ApprovalDecision>((resolve) => {
    timer = clock.setTimer(timeoutMs, () => {
      controller.abort(new Error('approval timed out'));
      resolve(timedOut(timeoutMs));
    });
  });
  try {
    const answer = callback(request, controller.signal).then(
      (d) => {
        const checked = ApprovalResult.safeParse(d);
        return checked.success
          ? (checked.data as ApprovalDecision)
          : ({ decision: 'reject', reason: 'the supervisor gave no valid decision' } as const);
      },
      (err: unknown) => ({
        decision: 'reject' as const,
        reason: `the supervisor could not decide (${(err as Error)?.message ?? err})`,
      }),
    );
    return await Promise.race([answer, deadline]);
  } finally {
    timer?.cancel();
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Creates an approval record (stage `approval` pending, with a deadline) and waits for the
 * supervisor to finish the stage with a decision as its `delegation_result`. Polls on `clock`;
 * past the deadline the stage is marked expired and the action is not taken.
 */
export async function askThroughRecords(
  approver: DelegationApprover,
  request: ApprovalRequest,
  timeoutMs: number,
  clock: Clock,
  signal?: AbortSignal,
): Promise<ApprovalDecision & { recordId: string }> {
  const id = `approval-${randomUUID()}`;
  const sender = approver.sender ?? 'voice-agent';
  const target = approver.target ?? 'supervisor';
  if (sender === target) {
    // The requester's own key could then settle its own approval.
    return {
      decision: 'reject',
      reason: `the approver (${target}) is the agent asking for approval; give the supervisor its own agent id`,
      recordId: id,
    };
  }
  const now = clock.now();
  const created = await approver.store.create({
    delegation_id: id,
    task_id: request.toolCallId.slice(0, 200) || id,
    sub_task_id: request.tool.slice(0, 200),
    workflow_level: typeof request.origin === 'string' ? 0 : 1,
    delegation_type: APPROVAL_RECORD_TYPE,
    sender_subject_id: sender,
    target_subject_id: target,
    status: {
      [APPROVAL_STAGE]: {
        state: 'pending',
        time: epochSeconds(now),
        deadline: deadlineSeconds(now + timeoutMs),
      },
    },
    sub_task_data: {
      tool: request.tool,
      args: request.args,
      description: request.description,
      origin: request.origin,
    },
  });
  // What the tool would run with, as the supervisor is shown it: a decision binds to this.
  const asked = taskDigest(created);
  const pollMs = approver.pollMs ?? 1000;
  const until = now + timeoutMs;
  let closing = false;
  for (;;) {
    const record = await approver.store.get(id);
    const stage = record?.status[APPROVAL_STAGE];
    if (!record || !stage) {
      return { decision: 'reject', reason: 'the approval record was deleted', recordId: id };
    }
    if (taskDigest(record) !== asked) {
      // Someone changed what is asked (or whom): no decision on this record can be trusted.
      await approver.store.setStage(id, APPROVAL_STAGE, { state: 'cancelled' }).catch(() => {});
      return {
        decision: 'reject',
        reason:
          'the approval request was changed after it was sent, so what the supervisor saw may not be what would run; nothing was done',
        recordId: id,
      };
    }
    if (FINAL_STATES.has(stage.state)) {
      if (stage.state !== 'done') {
        return { decision: 'reject', reason: `the approval was ${stage.state}`, recordId: id };
      }
      const checked = ApprovalResult.safeParse(decisionOf(stage.delegation_result));
      if (!checked.success) {
        return {
          decision: 'reject',
          reason: 'the supervisor gave no valid decision',
          recordId: id,
        };
      }
      return { ...(checked.data as ApprovalDecision), recordId: id };
    }
    if (clock.now() >= until || signal?.aborted) {
      try {
        await approver.store.setStage(id, APPROVAL_STAGE, {
          state: signal?.aborted ? 'cancelled' : 'expired',
        });
      } catch {
        // Decided in the meantime: read it once more (once only).
        if (!closing) {
          closing = true;
          continue;
        }
      }
      return signal?.aborted
        ? { decision: 'reject', reason: 'the call ended before a decision', recordId: id }
        : { ...timedOut(timeoutMs), recordId: id };
    }
    await clock.sleep(Math.min(pollMs, Math.max(1, until - clock.now())));
  }
}
