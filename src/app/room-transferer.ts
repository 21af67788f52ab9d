import type { JobContext } from '@livekit/agents';
import { ParticipantKind } from '@livekit/rtc-node';
import type { Clock } from '../core/clock.js';
import { TasklineError } from '../core/errors.js';
import { parseDestination, ringingSeconds } from '../telephony/sip-address.js';
import { ColdSipTransferer, type ColdSipTransfererOptions } from '../telephony/sip-transfer.js';
import type {
  Transferer,
  TransferMode,
  TransferRequest,
  TransferResult,
} from '../telephony/transfer.js';
import { WarmTransferer, type WarmTransfererOptions } from '../telephony/warm-transfer.js';

/** How a room entry hands callers to a person; every field has an environment default. */
export interface RoomTransferOptions {
  /** Default destination for the module (env `TASKLINE_TRANSFER_TO`): number, tel: or sip: URI. */
  to?: string;
  /** Default mode for the module (env `TASKLINE_TRANSFER_MODE`: `cold` or `warm`; default cold). */
  mode?: TransferMode;
  /** Cold (SIP REFER) settings. */
  cold?: Pick<ColdSipTransfererOptions, 'playDialtone' | 'ringingTimeoutMs' | 'headers'>;
  /** Warm (upstream WarmTransferTask) settings; the outbound trunk defaults to env LIVEKIT_SIP_OUTBOUND_TRUNK. */
  warm?: WarmTransfererOptions;
}

/** The transfer defaults a room entry resolved from its options and the environment. */
export interface ResolvedTransferDefaults {
  to?: string;
  mode: TransferMode;
}

/**
 * Reads `TASKLINE_TRANSFER_TO` / `TASKLINE_TRANSFER_MODE` (options win) and checks them and
 * the cold and warm timeouts, so a misconfigured worker fails when it starts, not in the
 * middle of a call.
 */
export function transferDefaults(
  options: RoomTransferOptions = {},
  env: NodeJS.ProcessEnv = process.env,
): ResolvedTransferDefaults {
  const mode = options.mode ?? env.TASKLINE_TRANSFER_MODE ?? 'cold';
  if (mode !== 'cold' && mode !== 'warm') {
    throw new TasklineError(
      'invalid_argument',
      `TASKLINE_TRANSFER_MODE must be "cold" or "warm", got ${JSON.stringify(mode)}.`,
    );
  }
  const to = options.to ?? (env.TASKLINE_TRANSFER_TO || undefined);
  if (to !== undefined) parseDestination(to);
  // The transferers are built per transfer, mid-call: their options are checked now.
  if (options.cold) ringingSeconds(options.cold, 'ColdSipTransferer');
  if (options.warm) new WarmTransferer(options.warm);
  return { to, mode };
}

/** The caller fields a room transferer needs. */
export interface TransferCaller {
  identity: string;
  kind?: ParticipantKind;
}

/**
 * The real transferer of a call in a LiveKit room: cold requests become a SIP REFER of
 * the caller's leg (livekit-server-sdk `SipClient`, with the job's own URL and API
 * credentials), warm ones upstream's WarmTransferTask. What cannot be done here — a cold
 * transfer of a caller who is not on a phone line, a warm one with no outbound trunk —
 * resolves `{ ok: false, reason }`, so the bot tells the caller instead of pretending.
 */
export class RoomTransferer implements Transferer {
  private readonly job: Pick<JobContext, 'info' | 'room'>;
  private readonly caller: TransferCaller;
  private readonly options: RoomTransferOptions;
  private readonly clock: Clock | undefined;

  /** `clock` bounds a warm transfer's hold (the call's clock; default the wall clock). */
  constructor(
    job: Pick<JobContext, 'info' | 'room'>,
    caller: TransferCaller,
    options: RoomTransferOptions = {},
    clock?: Clock,
  ) {
    this.job = job;
    this.caller = caller;
    this.options = options;
    this.clock = clock;
  }

  async transfer(request: TransferRequest): Promise<TransferResult> {
    if (request.mode === 'warm') {
      const warm = { ...(this.clock ? { clock: this.clock } : {}), ...this.options.warm };
      return new WarmTransferer(warm).transfer(request);
    }
    if (this.caller.kind !== ParticipantKind.SIP) {
      return {
        ok: false,
        mode: request.mode,
        to: request.to,
        reason:
          'the caller is not on a phone line (not a SIP participant): a cold SIP transfer needs one',
      };
    }
    const { info, room } = this.job;
    return new ColdSipTransferer({
      ...this.options.cold,
      roomName: room.name ?? info.job.room?.name ?? '',
      participantIdentity: this.caller.identity,
      url: info.url,
      apiKey: info.apiKey,
      apiSecret: info.apiSecret,
    }).transfer(request);
  }
}
