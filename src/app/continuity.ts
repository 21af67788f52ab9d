/**
 * What lets a call outlive the job serving it: the call's stable key (the room's sid, the
 * same for every job dispatched into the room), whether this job is a re-dispatch by the
 * guardian, the job's lifeline to the guardian, and the polite ending of a call a
 * re-dispatched job cannot continue. The room entry (./room.ts) uses these per job.
 */
import { type JobContext, voice } from '@livekit/agents';
import { logLine } from '../core/log.js';
import type { CheckpointStore } from '../flows/checkpoints/types.js';
import type { ResumeInfo } from '../flows/run-options.js';
import { endCall } from '../telephony/end-call.js';
import { type Lifeline, openLifeline } from './guardian/lifeline.js';
import { dispatchMetadataOf, type Redispatch, redispatchOf } from './guardian/protocol.js';

/** The environment variable naming the guardian a worker's jobs keep lifelines to. */
export const GUARDIAN_URL_ENV = 'TASKLINE_GUARDIAN_URL';

/** What a re-dispatched job says, by default, when its module cannot continue the call. */
export const DEFAULT_UNRESUMABLE_LINE =
  "I'm sorry, we lost the line for a moment and I can't pick up where we were. Please call us again. Goodbye.";

/**
 * The line a re-dispatched job says before it asks the first unanswered question: an
 * apology, not a "welcome back" (the caller never left), saying why an answer the checkpoint
 * withheld (a PIN) is asked again. Use it as a flow's `resumeLine`
 * when `setup.resumed` is set.
 */
export function resumeApology(info: ResumeInfo): string {
  const sorry = "Sorry about that, we lost the line for a moment. Let's carry on.";
  if (info.reask.length === 0) return sorry;
  const what = info.reaskLabels.join(' and ');
  return info.reaskMasked
    ? `${sorry} For your security, I need to ask for ${what} again first.`
    : `${sorry} First, I need to ask for ${what} again.`;
}

/**
 * True when `store` holds an unfinished run of flow `flow` for call `callId` (a checkpoint
 * whose status is not `completed`): what a re-dispatched job can continue. A module's
 * `canResume` for a flow checkpointed under `setup.callKey`.
 */
export async function hasUnfinishedFlow(
  store: CheckpointStore,
  key: { flow: string; callId: string | undefined },
): Promise<boolean> {
  if (!key.callId) return false;
  const saved = await store.load({ flow: key.flow, callId: key.callId });
  return saved !== undefined && saved.state.status !== 'completed';
}

/** Who a job's call is, across the jobs dispatched into its room. */
export interface CallIdentity {
  /** Stable id of the call: the room's sid (its name when the job carries no sid). */
  callKey: string;
  /** Set when the guardian dispatched this job after the call's agent was lost. */
  resumed?: Redispatch;
  /** The metadata of the call's first dispatch. */
  dispatchMetadata: string;
}

/** The call a job serves, read from its job (dispatch metadata, room). */
export function callIdentityOf(ctx: JobContext): CallIdentity {
  const job = ctx.job;
  const resumed = redispatchOf(job.metadata);
  return {
    callKey: job.room?.sid || job.room?.name || ctx.room.name || job.id,
    ...(resumed ? { resumed } : {}),
    dispatchMetadata: dispatchMetadataOf(job.metadata),
  };
}

/**
 * Opens the job's lifeline to the guardian at `url` (or `TASKLINE_GUARDIAN_URL`); undefined
 * when none is configured or the job has no API credentials to sign it with.
 */
export function openJobLifeline(ctx: JobContext, url: string | undefined): Lifeline | undefined {
  const target = url ?? process.env[GUARDIAN_URL_ENV];
  if (!target) return undefined;
  const apiKey = ctx.info.apiKey ?? process.env.LIVEKIT_API_KEY;
  const apiSecret = ctx.info.apiSecret ?? process.env.LIVEKIT_API_SECRET;
  const room = ctx.job.room?.name || ctx.room.name;
  if (!apiKey || !apiSecret || !room) {
    logLine('taskline.room', 'warn', 'no lifeline to the guardian: no API key, secret or room', {
      room,
    });
    return undefined;
  }
  const identity = ctx.agent?.identity || ctx.info.acceptArguments.identity;
  return openLifeline({
    url: target,
    apiKey,
    apiSecret,
    call: {
      room,
      ...(ctx.job.room?.sid ? { roomSid: ctx.job.room.sid } : {}),
      agentName: ctx.job.agentName || 'default',
      identity,
      jobId: ctx.job.id,
    },
  });
}

/**
 * The agent of a re-dispatched job whose module cannot continue the call: one apology with
 * the goodbye, then the call ends. It asks nothing.
 */
export class UnresumableCall extends voice.Agent {
  constructor(private readonly line: string) {
    super({ id: 'unresumable_call', instructions: 'You end a call that could not be resumed.' });
  }

  override async onEnter(): Promise<void> {
    await endCall(this.session, { goodbye: this.line });
  }
}
