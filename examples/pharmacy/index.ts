/**
 * pharmacy: a prescription refill line.
 *
 *   greeting + menu ─┬─ 1 refill ── date of birth ── 7-digit prescription number ── refill booked
 *                    └─ 2 pharmacist ──────────────────────────────────────────────── transfer
 *
 * Every answer can be said or keyed in; both numbers are read back, and a "no, the last two
 * are 4 5" corrects the read-back in place. Two answers in a row that cannot be used hand
 * the caller to a pharmacist. The refill is a flow, checkpointed after every answer (SQLite
 * in `room.ts`), so a dropped call resumes where it stopped.
 */
import { voice } from '@livekit/agents';
import { type CallInstance, defineCallModule, parsers } from 'taskline';
import type { CheckpointStore, FlowResult, FlowValueOf } from 'taskline/flows';
import { flow } from 'taskline/flows';
import { date, digits } from 'taskline/tasks';
import {
  endCall,
  menu,
  RecordingTransferer,
  type Transferer,
  transferCall,
} from 'taskline/telephony';

/** Where the pharmacists are. */
export const PHARMACIST = '+15550142';

/** The main menu (its name keys the demo's scripted model). */
export const mainMenu = menu({
  name: 'main_menu',
  prompt: 'Welcome to Taskline Pharmacy.',
  options: {
    '1': {
      label: 'a prescription refill',
      synonyms: ['refill', 'renew', 'prescription'],
      value: 'refill',
    },
    '2': {
      label: 'a pharmacist',
      synonyms: ['pharmacist', 'person', 'someone', 'agent'],
      value: 'pharmacist',
    },
  },
  repeatKey: '*',
});

/** Eight digits, month day year ("03151980"), as a date in the past; anything else is invalid. */
function keyedDate(keys: string, now: number): parsers.ParseResult<string> {
  const [, mm, dd, yyyy] = /^(\d\d)(\d\d)(\d{4})$/.exec(keys) ?? [];
  const iso = `${yyyy}-${mm}-${dd}`;
  const day = new Date(`${iso}T00:00:00Z`);
  if (!yyyy || Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== iso) {
    return { kind: 'invalid', reason: 'That is not a date: key in the month, day and year.' };
  }
  if (day.getTime() > now) return { kind: 'invalid', reason: 'That date is in the future.' };
  return parsers.match(iso);
}

const dateOfBirth = date({
  name: 'date_of_birth',
  question: 'What is your date of birth? Say it, or key in the month, day and year.',
  keypad: { maxDigits: 8 },
  confirm: 'always',
  retry: { maxNoMatch: 2, maxInvalid: 2 },
  parse: (text, ctx) => {
    const said = parsers.date(text, { now: new Date(ctx.now), prefer: 'past' });
    if (said.kind === 'match') return said;
    const keys = parsers.digits(text, { minLength: 8, maxLength: 8 });
    return keys.kind === 'match' ? keyedDate(keys.value, ctx.now) : keys;
  },
});

const rxNumber = digits({
  name: 'rx_number',
  question: 'What is your 7-digit prescription number? It is on the label, after R X.',
  minLength: 7,
  maxLength: 7,
  keypad: { maxDigits: 7 },
  confirm: 'always',
  retry: { maxNoMatch: 2, maxInvalid: 2 },
});

/** The refill questions; a step that runs out of tries hands the caller to a pharmacist. */
export function refillFlow(transferer: Transferer) {
  const toPharmacist =
    (why: string) =>
    (outcome: Parameters<typeof transferCall>[2], ctx: { session: voice.AgentSession }) =>
      transferCall(
        transferer,
        {
          to: PHARMACIST,
          summary: `Refill caller ${why}`,
          session: ctx.session,
          announce: 'Let me put you through to a pharmacist.',
        },
        outcome,
      );
  return flow('refill', { label: 'prescription refill' })
    .step('date_of_birth', dateOfBirth, {
      label: 'your date of birth',
      onFailure: toPharmacist('could not give their date of birth'),
    })
    .step('rx_number', rxNumber, {
      label: 'your prescription number',
      onFailure: toPharmacist('could not give their prescription number'),
    });
}

/** The refill's typed answers: `{ date_of_birth: string; rx_number: string }`. */
export type RefillAnswers = FlowValueOf<ReturnType<typeof refillFlow>>;

/** How the call ended. */
export type PharmacyOutcome = 'refill_booked' | 'transferred' | 'hangup' | 'ended';

/** The call's typed result. */
export interface PharmacyResult {
  outcome: PharmacyOutcome | undefined;
  answers: Partial<RefillAnswers>;
}

/** Where the refill is checkpointed, and under which key (the caller's number, in a room). */
export interface RefillCheckpoints {
  open: () => Promise<CheckpointStore>;
  callId?: string;
}

/** The pharmacy line: the whole call, step by step, in `onEnter`. */
export class PharmacyLine extends voice.Agent {
  outcome: PharmacyOutcome | undefined;
  refill: FlowResult<RefillAnswers> | undefined;

  constructor(
    private readonly transferer: Transferer,
    private readonly checkpoints?: RefillCheckpoints,
  ) {
    super({ instructions: 'You are the phone line of Taskline Pharmacy. Keep every reply short.' });
  }

  override async onEnter(): Promise<void> {
    const pick = await mainMenu.run();
    if (pick.status !== 'ok' || pick.value === 'pharmacist') return this.toPharmacist(pick.status);
    const store = await this.checkpoints?.open(); // SQLite in a room: opened before the flow
    this.refill = await refillFlow(this.transferer).run({
      ...(store ? { checkpoints: store, callId: this.checkpoints?.callId } : {}),
      ifCompleted: 'restart', // a caller who refilled before starts a new refill
    });
    const { status, answers } = this.refill;
    if (status === 'completed' && answers.rx_number) {
      this.outcome = 'refill_booked';
      return endCall(this.session, {
        goodbye: `Thank you. Your refill of prescription ${parsers.groupDigits(answers.rx_number)} will be ready tomorrow after 10 am. Goodbye.`,
      });
    }
    this.outcome =
      status === 'escalated' ? 'transferred' : status === 'hangup' ? 'hangup' : 'ended';
    if (this.outcome === 'ended') {
      await endCall(this.session, { goodbye: 'Sorry I could not help today. Goodbye.' });
    }
  }

  private async toPharmacist(status: string): Promise<void> {
    if (status === 'hangup') {
      this.outcome = 'hangup';
      return;
    }
    const moved = await transferCall(this.transferer, {
      to: PHARMACIST,
      summary: status === 'ok' ? 'Caller asked for a pharmacist' : 'Caller could not use the menu',
      session: this.session,
      announce: 'Let me put you through to a pharmacist.',
    });
    this.outcome = moved.status === 'transferred' ? 'transferred' : 'ended';
    if (this.outcome === 'ended')
      await endCall(this.session, { goodbye: 'Sorry, please call again later. Goodbye.' });
  }
}

/** Builds one pharmacy call: a room gives its SIP transferer, the terminal records transfers. */
export function createPharmacyCall(
  options: { transferer?: Transferer; checkpoints?: RefillCheckpoints } = {},
): CallInstance<PharmacyResult> & { transferer: Transferer } {
  const transferer = options.transferer ?? new RecordingTransferer();
  const agent = new PharmacyLine(transferer, options.checkpoints);
  return {
    agent,
    transferer,
    result: () => ({ outcome: agent.outcome, answers: agent.refill?.answers ?? {} }),
  };
}

/** The pharmacy line for `npx taskline run`, `taskline test` and the room entry. */
export const pharmacy = defineCallModule<PharmacyResult>({
  name: 'pharmacy',
  description:
    'Prescription refill line: menu, date of birth and a 7-digit prescription number (said or keyed, read back), a pharmacist when stuck.',
  createCall: (setup) =>
    createPharmacyCall({
      transferer: setup?.transferer,
      // A runner that hands a checkpoint store (`taskline test`) gets every answer checkpointed.
      ...(setup?.checkpoints
        ? { checkpoints: { open: async () => setup.checkpoints as CheckpointStore } }
        : {}),
    }),
  demo: () => import('./demo.js'),
});

export default pharmacy;
