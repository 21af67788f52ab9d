import { workflows } from '@livekit/agents';
import type { Transferer, TransferRequest, TransferResult } from './transfer.js';

/** Upstream's warm-transfer options, minus the destination (it comes with each request). */
export type WarmTransfererOptions = Omit<workflows.WarmTransferTaskOptions, 'sipCallTo'>;

/**
 * Warm transfer through upstream's `workflows.WarmTransferTask`: the caller is put on
 * hold, a human is dialled over SIP and hears the summary (what was captured included),
 * then is connected. The task runs inline, so `transfer()` must be awaited inside a tool
 * or `onEnter` — collectDigits and menu run `onExhausted` inside a tool for this reason.
 * Needs a SIP outbound trunk (`sipTrunkId` or env LIVEKIT_SIP_OUTBOUND_TRUNK).
 */
export class WarmTransferer implements Transferer {
  private readonly options: WarmTransfererOptions;

  constructor(options: WarmTransfererOptions = {}) {
    this.options = options;
  }

  /** The options upstream's task is built with for `request` (summary spoken to the human). */
  taskOptions(request: TransferRequest): workflows.WarmTransferTaskOptions {
    return {
      ...this.options,
      sipCallTo: request.to,
      greetingSpeech: this.options.greetingSpeech ?? request.summary,
      instructions: this.options.instructions ?? {
        extra: `Summary prepared by the automated line (values shown as * are private): ${request.summary}`,
      },
    };
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
}
