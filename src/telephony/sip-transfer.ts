import type { SipClient, TransferSipParticipantOptions } from 'livekit-server-sdk';
import { TasklineError } from '../core/errors.js';
import { ringingSeconds, sipTarget } from './sip-address.js';
import { connectSipClient } from './sip-client.js';
import type { Transferer, TransferRequest, TransferResult } from './transfer.js';

/** The one SipClient method a cold transfer uses (a fake in tests). */
export type SipTransferClient = Pick<SipClient, 'transferSipParticipant'>;

/** Options for {@link ColdSipTransferer}. */
export interface ColdSipTransfererOptions {
  /** The caller's room. */
  roomName: string;
  /** The caller's SIP participant identity. */
  participantIdentity: string;
  /** LiveKit URL (default env LIVEKIT_URL). */
  url?: string;
  /** Default env LIVEKIT_API_KEY. */
  apiKey?: string;
  /** Default env LIVEKIT_API_SECRET. */
  apiSecret?: string;
  /** Play a dial tone to the caller while the transfer connects (default true). */
  playDialtone?: boolean;
  /**
   * How long the destination may ring, in milliseconds (the unit WarmTransferer and
   * upstream's WarmTransferTask use): 1,000 to 600,000 (1 s to 10 minutes), a whole number
   * of seconds, as LiveKit SIP counts them. Checked by the constructor.
   */
  ringingTimeoutMs?: number;
  /** Extra SIP headers on the REFER. */
  headers?: Record<string, string>;
  /** Builds the client; defaults to livekit-server-sdk's SipClient (created on first use). */
  createClient?: () => SipTransferClient | Promise<SipTransferClient>;
}

/** Max characters of the summary carried in the `X-Taskline-Summary` SIP header. */
export const SUMMARY_HEADER_MAX = 200;

/**
 * Cold (blind) transfer of the caller's SIP leg through livekit-server-sdk's
 * `SipClient.transferSipParticipant` (a SIP REFER). The client is created on the first
 * transfer, so constructing this costs nothing and needs no network. The summary travels
 * in an `X-Taskline-Summary` header for the receiving system; no human is briefed.
 */
export class ColdSipTransferer implements Transferer {
  private readonly options: ColdSipTransfererOptions;
  private readonly ringingTimeout: number | undefined;
  private client: SipTransferClient | undefined;

  constructor(options: ColdSipTransfererOptions) {
    if (!options.roomName || !options.participantIdentity) {
      throw new TasklineError(
        'invalid_argument',
        'ColdSipTransferer needs the caller room name and SIP participant identity.',
      );
    }
    this.ringingTimeout = ringingSeconds(options, 'ColdSipTransferer');
    this.options = options;
  }

  /** True once the SIP client exists (it is created lazily on the first transfer). */
  get connected(): boolean {
    return this.client !== undefined;
  }

  async transfer(request: TransferRequest): Promise<TransferResult> {
    const { mode, to } = request;
    if (mode !== 'cold') {
      return {
        ok: false,
        mode,
        to,
        reason: 'ColdSipTransferer only makes cold transfers; use WarmTransferer for warm ones.',
      };
    }
    try {
      const opts: TransferSipParticipantOptions = {
        playDialtone: this.options.playDialtone ?? true,
        headers: { ...this.options.headers, 'X-Taskline-Summary': headerSafe(request.summary) },
      };
      if (this.ringingTimeout !== undefined) opts.ringingTimeout = this.ringingTimeout;
      const target = sipTarget(to);
      const client = await this.sipClient();
      await client.transferSipParticipant(
        this.options.roomName,
        this.options.participantIdentity,
        target,
        opts,
      );
      return { ok: true, mode, to };
    } catch (error) {
      return {
        ok: false,
        mode,
        to,
        reason: error instanceof Error ? error.message : String(error),
      };
    }
  }

  private async sipClient(): Promise<SipTransferClient> {
    if (this.client) return this.client;
    if (this.options.createClient) {
      this.client = await this.options.createClient();
      return this.client;
    }
    this.client = await connectSipClient(this.options, 'Cold SIP transfer');
    return this.client;
  }
}

function headerSafe(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strip control characters from a header value
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/[^\x20-\x7e]/g, '?');
  return clean.slice(0, SUMMARY_HEADER_MAX);
}
