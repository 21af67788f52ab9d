/**
 * ivr-bank: a bank's phone line built with taskline's IVR kit.
 *
 *   greeting + main menu ─┬─ 1 balance ── PIN (keypad, masked) ── balance read out
 *                         ├─ 2 lost card ── "block it?" (yes/no) ── card blocked
 *                         └─ 3 agent ───────────────────────────── transfer
 *   Any step that runs out of retries transfers to a person too.
 *
 * The whole call is one agent's `onEnter`: each step is awaited and returns a typed
 * Outcome. Keypad and recognised speech need no model; the model is only asked when the
 * caller's words match no menu option. `room.ts` runs the same call in a LiveKit room.
 */
import { voice } from '@livekit/agents';
import { type CallInstance, defineCallModule } from 'taskline';
import { yesNo } from 'taskline/tasks';
import {
  type CaptureEntry,
  type CaptureLog,
  capturesOf,
  collectDigits,
  endCall,
  menu,
  RecordingTransferer,
  type Transferer,
  type TransferMode,
  transferCall,
  transferOnExhausted,
} from 'taskline/telephony';

/** Where people are: the bank's service desk. */
export const SERVICE_DESK = '+15550100';

/** Demo accounts, keyed by PIN (a real bot would ask its core banking system). */
export const ACCOUNTS: Readonly<Record<string, { balance: string }>> = {
  '4321': { balance: '$1,234.56' },
};

/** The main menu (its name keys the demo's scripted model). */
export const mainMenu = menu({
  name: 'main_menu',
  prompt: 'Welcome to Taskline Bank.',
  options: {
    '1': { label: 'your balance', synonyms: ['balance'], value: 'balance' },
    '2': { label: 'a lost or stolen card', synonyms: ['lost', 'stolen'], value: 'lost_card' },
    '3': {
      label: 'an agent',
      synonyms: ['person', 'human', 'someone', 'representative'],
      value: 'agent',
    },
  },
  repeatKey: '*',
});

const pinEntry = collectDigits({
  name: 'pin',
  prompt: 'Please enter your 4-digit PIN.',
  minDigits: 4,
  maxDigits: 4,
  deleteKey: '*', // a mistyped digit is taken back with star, as on most bank lines
  mask: true,
  validator: (pin) => (ACCOUNTS[pin] ? undefined : "That PIN doesn't match our records."),
});

const blockCard = yesNo({ name: 'block_card', question: 'Shall I block your card now?' });

/** How the call ended. */
export type BankOutcome =
  | 'balance_read'
  | 'card_blocked'
  | 'card_kept'
  | 'transferred'
  | 'hangup'
  | 'ended';

/** The call's typed result: how it ended and what was captured (PIN masked). */
export interface BankResult {
  outcome: BankOutcome | undefined;
  captured: readonly CaptureEntry[];
}

/** The bank line: the whole call, step by step, in `onEnter`. */
export class BankLine extends voice.Agent {
  outcome: BankOutcome | undefined;
  /** What the call captured (kept after it ends). */
  captures: CaptureLog | undefined;
  private readonly transferer: Transferer;
  private readonly desk: { to: string; mode: TransferMode };

  constructor(transferer: Transferer, desk: { to?: string; mode?: TransferMode } = {}) {
    super({ instructions: 'You are the phone line of Taskline Bank. Keep every reply short.' });
    this.transferer = transferer;
    this.desk = { to: desk.to ?? SERVICE_DESK, mode: desk.mode ?? 'cold' };
  }

  override async onEnter(): Promise<void> {
    this.captures = capturesOf(this.session);
    const pick = await mainMenu.run({ retry: this.escalation('could not use the main menu') });
    if (pick.status !== 'ok') return this.end(pick.status);
    if (pick.value === 'agent') return this.toAgent();
    if (pick.value === 'balance') return this.balance();
    return this.lostCard();
  }

  private async balance(): Promise<void> {
    const pin = await pinEntry.run({ retry: this.escalation('could not verify their PIN') });
    if (pin.status !== 'ok') return this.end(pin.status);
    this.outcome = 'balance_read';
    await endCall(this.session, {
      goodbye: `Your balance is ${ACCOUNTS[pin.value]?.balance}. Thank you for calling. Goodbye.`,
    });
  }

  private async lostCard(): Promise<void> {
    const block = await blockCard.run({ retry: this.escalation('reported a lost card') });
    if (block.status !== 'ok') return this.end(block.status);
    this.outcome = block.value ? 'card_blocked' : 'card_kept';
    await endCall(this.session, {
      goodbye: block.value
        ? 'Your card is blocked and a new one is on its way. Goodbye.'
        : 'Okay, your card stays active. Goodbye.',
    });
  }

  private async toAgent(): Promise<void> {
    const moved = await transferCall(this.transferer, this.transferTo('asked to talk to someone'));
    return this.end(moved.status);
  }

  /** A retry policy whose exhaustion transfers the caller (the default for IVR steps). */
  private escalation(why: string) {
    return { onExhausted: transferOnExhausted(this.transferer, this.transferTo(why)) };
  }

  private transferTo(why: string) {
    return {
      ...this.desk,
      summary: `Caller ${why}`,
      session: this.session,
      announce: 'Please hold while I transfer you to a colleague.',
    };
  }

  private async end(status: string): Promise<void> {
    this.outcome = status === 'transferred' || status === 'hangup' ? status : 'ended';
    await endCall(this.session, {
      goodbye: this.outcome === 'ended' ? 'Sorry I could not help. Goodbye.' : undefined,
    });
  }
}

/**
 * Builds one bank call. In a room the transferer, desk number and transfer mode come
 * from the room entry (LiveKit SIP); the terminal demo records transfers instead.
 */
export function createBankCall(
  options: { transferer?: Transferer; transferTo?: string; transferMode?: TransferMode } = {},
): CallInstance<BankResult> & { transferer: Transferer } {
  const transferer = options.transferer ?? new RecordingTransferer();
  const agent = new BankLine(transferer, { to: options.transferTo, mode: options.transferMode });
  return {
    agent,
    transferer,
    result: () => ({
      outcome: agent.outcome,
      captured: agent.captures?.entries ?? [],
    }),
  };
}

/** The ivr-bank call for the README demo, `npx taskline run` and tests. */
export const ivrBank = defineCallModule<BankResult>({
  name: 'ivr-bank',
  description: 'Bank phone line: menu, masked PIN on the keypad, lost card, transfer to a person.',
  createCall: (setup) =>
    createBankCall({
      transferer: setup?.transferer,
      transferTo: setup?.transferTo,
      transferMode: setup?.transferMode,
    }),
  demo: () => import('./demo.js'),
});

export default ivrBank;
