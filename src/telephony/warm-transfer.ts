import { llm, type voice, workflows } from '@livekit/agents';
import { type Clock, systemClock } from '../core/clock.js';
import { TasklineError } from '../core/errors.js';
import { checkRange, millis } from '../core/options.js';
import { parseDestination, ringingSeconds } from './sip-address.js';
import type { Transferer, TransferRequest, TransferResult } from './transfer.js';

/**
 * Upstream's warm-transfer options, minus what each request brings (the destination), with
 * one time unit shared with {@link ColdSipTransferer}: `ringingTimeoutMs`.
 */
export interface WarmTransfererOptions
  extends Omit<workflows.WarmTransferTaskOptions, 'sipCallTo' | 'ringingTimeout'> {
  /**
   * How long the human's phone may ring, in milliseconds: 1,000 to 600,000 (1 s to 10
   * minutes), a whole number of seconds, as LiveKit SIP counts them (upstream rounds other
   * values silently; taskline refuses them). Checked by the constructor.
   */
  ringingTimeoutMs?: number;
  /**
   * Speak the summary the moment the human's phone answers. Off by default: an answer may
   * be a voicemail greeting, so the human speaks first and the briefing agent answers with
   * the summary (upstream's default behaviour).
   */
  greetWithSummary?: boolean;
  /**
   * The conversation the human is briefed on, when the request carries none
   * (`transferCall` passes the session's masked history with every request).
   */
  chatCtx?: llm.ChatContext;
  /**
   * How long the caller may be kept on hold for one warm transfer — ringing, briefing and
   * the move into the caller's room together — before it is given up as failed (the human's
   * call is ended, the caller is told): 1 to 3,600,000 ms (an hour), default 180,000 (3 minutes). Upstream's task has no
   * bound of its own: a move the server refuses leaves the caller on hold until a party
   * hangs up (a self-hosted livekit-server does not implement MoveParticipant).
   */
  consultTimeoutMs?: number;
  /** The clock {@link consultTimeoutMs} runs on (default: the wall clock). */
  clock?: Clock;
}

/** Longest {@link WarmTransfererOptions.consultTimeoutMs}: one hour on hold is already too long. */
export const MAX_CONSULT_TIMEOUT_MS = 3_600_000;

/** Default of {@link WarmTransfererOptions.consultTimeoutMs}. */
export const DEFAULT_CONSULT_TIMEOUT_MS = 180_000;

/** The tool of upstream's briefing agent that asks the server to move the human (pinned in tests/upstream). */
export const CONNECT_TOOL = 'connect_to_caller';

/**
 * Whether a refused move can never succeed on this server: the open-source livekit-server
 * answers MoveParticipant "not implemented" (LiveKit Cloud implements it); Twirp's
 * `unimplemented` code says the same. Any other refusal may pass on a retry.
 */
export function isMoveUnsupported(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === 'unimplemented' || /\bnot implemented\b/i.test(error.message);
}

/** Why a warm transfer ended at once: the server cannot put the human in the caller's room. */
const MOVE_UNSUPPORTED =
  "the server cannot move the human into the caller's room (a self-hosted livekit-server does not implement MoveParticipant; LiveKit Cloud does), so the caller was not connected: use a cold transfer on this server";

/**
 * Warm transfer through upstream's `workflows.WarmTransferTask`: the caller is put on
 * hold, a human is dialled over SIP into a consultation room and briefed with the
 * conversation so far plus the summary (what was captured included), then moved into the
 * caller's room. The task runs inline, so `transfer()` must be awaited inside a tool or
 * `onEnter` — collectDigits and menu run `onExhausted` inside a tool for this reason.
 * Needs a SIP outbound trunk (`sipTrunkId` or env LIVEKIT_SIP_OUTBOUND_TRUNK); a `sip:`
 * destination is dialled through an inline trunk to its host instead (`sipConnection`).
 */
export class WarmTransferer implements Transferer {
  private readonly options: WarmTransfererOptions;
  private readonly ringingTimeout: number | undefined;
  private readonly consultTimeoutMs: number;

  constructor(options: WarmTransfererOptions = {}) {
    const seconds = ringingSeconds(options, 'WarmTransferer');
    this.ringingTimeout = seconds === undefined ? undefined : seconds * 1000;
    this.consultTimeoutMs =
      checkRange('consultTimeoutMs', options.consultTimeoutMs, millis(1, MAX_CONSULT_TIMEOUT_MS), {
        owner: 'WarmTransferer',
      }) ?? DEFAULT_CONSULT_TIMEOUT_MS;
    this.options = options;
  }

  /**
   * The options upstream's task is built with for `request`. Throws a TasklineError
   * (`invalid_argument`) for a destination it cannot dial.
   */
  taskOptions(request: TransferRequest): workflows.WarmTransferTaskOptions {
    const {
      ringingTimeoutMs: _ms,
      consultTimeoutMs: _consult,
      clock: _clock,
      greetWithSummary,
      chatCtx,
      ...upstream
    } = this.options;
    const options: workflows.WarmTransferTaskOptions = {
      ...upstream,
      ...this.dialTarget(request.to),
      chatCtx: request.history ?? chatCtx,
      instructions: upstream.instructions ?? {
        extra: `Summary prepared by the automated line (values shown as * are private): ${request.summary}`,
      },
    };
    if (this.ringingTimeout !== undefined) options.ringingTimeout = this.ringingTimeout;
    if (upstream.greetingSpeech === undefined && greetWithSummary) {
      options.greetingSpeech = request.summary;
    }
    return options;
  }

  /**
   * Builds (does not run) upstream's warm-transfer task for `request` (`createWarmTransferTask`,
   * what `WarmTransferTask` runs, whose tools can be read); `abortSignal` (with the configured
   * one) cancels it.
   */
  createTask(
    request: TransferRequest,
    abortSignal?: AbortSignal,
  ): voice.AgentTask<workflows.WarmTransferResult> {
    const options = this.taskOptions(request);
    const signals = [options.abortSignal, abortSignal].filter((s) => s !== undefined);
    if (signals.length) options.abortSignal = AbortSignal.any(signals);
    return workflows.createWarmTransferTask(options);
  }

  async transfer(request: TransferRequest): Promise<TransferResult> {
    const { mode, to } = request;
    if (mode !== 'warm') {
      return {
        ok: false,
        mode,
        to,
        reason: 'WarmTransferer only makes warm transfers; use ColdSipTransferer for cold ones.',
      };
    }
    // The caller is on hold from here: bounded, whatever the human or the server does.
    const deadline = new AbortController();
    const seconds = Math.round(this.consultTimeoutMs / 1000);
    const timer = (this.options.clock ?? systemClock).setTimer(this.consultTimeoutMs, () =>
      deadline.abort(
        new TasklineError(
          'timeout',
          `the warm transfer did not complete within ${seconds} s, so the caller was not connected to the human (raise consultTimeoutMs for longer briefings; a self-hosted livekit-server cannot move the human into the caller's room: it does not implement MoveParticipant)`,
        ),
      ),
    );
    try {
      const task = this.createTask(request, deadline.signal);
      await endOnUnsupportedMove(task, deadline);
      const result = await task.run();
      return { ok: true, mode, to, humanIdentity: result.humanAgentIdentity };
    } catch (error) {
      return {
        ok: false,
        mode,
        to,
        reason: error instanceof Error ? error.message : String(error),
      };
    } finally {
      timer.cancel();
    }
  }

  /**
   * What upstream dials: a number for `tel:` and bare numbers; for `sip:user@host`, the
   * user part through an inline trunk to that host — refused when a stored trunk or a
   * trunk to another host is configured, since the call would go elsewhere.
   */
  private dialTarget(
    to: string,
  ): Pick<workflows.WarmTransferTaskOptions, 'sipCallTo' | 'sipConnection' | 'sipTrunkId'> {
    const dest = parseDestination(to);
    if (dest.kind === 'tel') return { sipCallTo: dest.number };
    if (dest.uri.includes(';') || dest.uri.includes('?')) {
      throw new TasklineError(
        'invalid_argument',
        `Cannot dial ${JSON.stringify(to)} warm: SIP URI parameters are not supported; configure them on the outbound trunk.`,
      );
    }
    const trunkId = this.options.sipTrunkId;
    const connection = this.options.sipConnection;
    if (trunkId || (connection?.hostname && connection.hostname !== dest.host)) {
      throw new TasklineError(
        'invalid_argument',
        `Cannot dial ${JSON.stringify(to)} warm: the configured outbound trunk goes to ${trunkId ? `trunk ${trunkId}` : connection?.hostname}, not ${dest.host}. Dial a number, or configure sipConnection for ${dest.host}.`,
      );
    }
    return {
      sipCallTo: dest.user,
      sipTrunkId: null,
      sipConnection: {
        ...connection,
        hostname: dest.host,
      } as workflows.WarmTransferTaskOptions['sipConnection'],
    };
  }
}

/**
 * Ends the transfer the moment the server refuses the move for good, instead of keeping the
 * caller on hold until `consultTimeoutMs`: upstream hands the refusal back to the briefing
 * model as a tool error and waits. Wraps the briefing agent's {@link CONNECT_TOOL} through
 * the task's public tool list before it runs (the briefing agent is built from that list).
 */
async function endOnUnsupportedMove(
  task: voice.AgentTask<workflows.WarmTransferResult>,
  deadline: AbortController,
): Promise<void> {
  const tools = task.toolCtx.tools.map((entry) => {
    if (!llm.isFunctionTool(entry) || entry.name !== CONNECT_TOOL) return entry;
    const execute: typeof entry.execute = async (args, options) => {
      try {
        return await entry.execute(args, options);
      } catch (error) {
        if (isMoveUnsupported(error)) {
          deadline.abort(
            new TasklineError('call_failed', MOVE_UNSUPPORTED, {
              server: (error as Error).message,
            }),
          );
        }
        throw error;
      }
    };
    return { ...entry, execute };
  });
  await task.updateTools(tools);
}
