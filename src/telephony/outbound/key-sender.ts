/**
 * Sending keys (DTMF) to the far end of an outbound call. In a LiveKit room the keys go out
 * on the agent's OWN local participant in the room where the far end's SIP participant is:
 * LiveKit SIP turns them into RFC 4733 events on that call (livekit/agents#6357 is about
 * keys published in another room — a consultation room — never reaching the far end).
 */
import { type DtmfDigit, isDtmfDigit } from '../../core/call.js';
import { type Clock, systemClock } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import { checkOptions, millis, type OptionTable } from '../../core/options.js';

/** Anything that can press keys on the far end: a room, a test's linked line, a recorder. */
export interface KeySender {
  /** Sends `keys` in order; resolves once the last one is sent. */
  send(keys: string): Promise<void>;
}

/** RFC 4733 event codes in order (0-9, *, #, A-D): what LiveKit SIP sends for a digit. */
const CODES = '0123456789*#ABCD';

/** The RFC 4733 event code of a key ("*" is 10, "#" is 11). */
export function dtmfCode(key: DtmfDigit): number {
  return CODES.indexOf(key);
}

/** Checks a key string (0-9 * # A-D) before anything is sent, so nothing half-goes out. */
export function checkKeys(keys: string): DtmfDigit[] {
  const list = [...keys.toUpperCase()];
  if (list.length === 0 || !list.every(isDtmfDigit)) {
    throw new TasklineError(
      'invalid_argument',
      `Cannot send ${JSON.stringify(keys)}: keys are one or more of 0-9, *, #, A-D.`,
    );
  }
  return list as DtmfDigit[];
}

/** The rtc-node room surface a room key sender uses (`Room` satisfies it). */
export interface DtmfRoom {
  readonly name?: string;
  readonly localParticipant?: { publishDtmf(code: number, digit: string): Promise<void> };
}

/** Options for {@link roomKeySender}. */
export interface RoomKeySenderOptions {
  /** Time between two keys: 0 to 10,000 ms (default 300 ms, upstream's `sendDtmfEvents` pace). */
  gapMs?: number;
  /** The clock the gaps run on (the wall clock by default). */
  clock?: Clock;
}

/** The gap of {@link RoomKeySenderOptions}, with its accepted range. */
const KEY_GAP = {
  gapMs: { range: millis(0, 10_000), default: 300 },
} as const satisfies OptionTable;

/**
 * Keys published by the agent's own local participant in `room` (rtc-node `publishDtmf`),
 * `gapMs` apart: pass the room the far end's SIP participant is in. A `gapMs` outside its
 * range throws a TasklineError (`invalid_argument`) here; `send` rejects (`invalid_state`)
 * when the room is not connected.
 */
export function roomKeySender(room: DtmfRoom, options: RoomKeySenderOptions = {}): KeySender {
  const { gapMs } = checkOptions(KEY_GAP, options, { owner: 'roomKeySender' });
  const clock = options.clock ?? systemClock;
  return {
    async send(keys) {
      const list = checkKeys(keys);
      const local = room.localParticipant;
      if (!local) {
        throw new TasklineError(
          'invalid_state',
          `Cannot send keys: the agent is not connected to room ${room.name ?? '(unnamed)'}.`,
        );
      }
      for (let i = 0; i < list.length; i++) {
        await local.publishDtmf(dtmfCode(list[i]!), list[i]!);
        if (i < list.length - 1 && gapMs > 0) await clock.sleep(gapMs);
      }
    },
  };
}

/** A key sender that only records what it was asked to send: for demos and text runs. */
export class RecordingKeySender implements KeySender {
  /** Every `send`, in order. */
  readonly sent: string[] = [];

  async send(keys: string): Promise<void> {
    checkKeys(keys);
    this.sent.push(keys);
  }
}
