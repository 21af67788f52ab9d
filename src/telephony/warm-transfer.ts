import { type llm, workflows } from '@livekit/agents';
import { TasklineError } from '../core/errors.js';
import { parseDestination, ringingSeconds } from './sip-address.js';
import type { Transferer, TransferRequest, TransferResult } from './transfer.js';

/**
 * Upstream's warm-transfer options, minus what each request brings (the destination), with
 * one time unit shared with {@link ColdSipTransferer}: `ringingTimeoutMs`.
 */
export interface WarmTransfererOptions
  extends Omit<workflows.WarmTransferTaskOptions, 'sipCallTo' | 'ringingTimeout'> {
  /**
   * How long the human's phone may ring, in milliseconds; a whole number of seconds, as
   * LiveKit SIP counts them (upstream rounds other values silently; taskline refuses them).
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
}

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

  constructor(options: WarmTransfererOptions = {}) {
    const seconds = ringingSeconds(options, 'WarmTransferer');
    this.ringingTimeout = seconds === undefined ? undefined : seconds * 1000;
    this.options = options;
  }

  /**
   * The options upstream's task is built with for `request`. Throws a TasklineError
   * (`invalid_argument`) for a destination it cannot dial.
   */
  taskOptions(request: TransferRequest): workflows.WarmTransferTaskOptions {
    const { ringingTimeoutMs: _ms, greetWithSummary, chatCtx, ...upstream } = this.options;
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

  /** Builds (does not run) upstream's WarmTransferTask for `request`. */
  createTask(request: TransferRequest): workflows.WarmTransferTask {
    return new workflows.WarmTransferTask(this.taskOptions(request));
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
    try {
      const result = await this.createTask(request).run();
      return { ok: true, mode, to, humanIdentity: result.humanAgentIdentity };
    } catch (error) {
      return {
        ok: false,
        mode,
        to,
        reason: error instanceof Error ? error.message : String(error),
      };
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
