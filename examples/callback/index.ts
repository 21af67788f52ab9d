/**
 * Callback booking: four prebuilt capture tasks in a row, as a flow run inside one tool.
 * Every answer in the demo is understood by taskline's parsers, so the tasks make no model
 * call; so are the caller's repairs (a correction, "say that again", "skip", "cancel", a
 * person).
 */
import { llm, voice } from '@livekit/agents';
import { defineCallModule } from 'taskline';
import { type Escalate, type FlowResult, type FlowValueOf, flow } from 'taskline/flows';
import { type PersonName, personName, phone, time, yesNo } from 'taskline/tasks';
import { RecordingTransferer, type Transferer, transferCall } from 'taskline/telephony';

/** What the bot books. */
export interface CallbackRequest {
  name: PersonName;
  phone: string;
  time: string;
  textReminder: boolean;
}

const askName = personName({ question: 'Who should we ask for?' });
const askPhone = phone({ question: 'What number should we call?' });
const askTime = time({ question: 'What time suits you?', defaultPeriod: 'pm' });
const askReminder = yesNo({ question: 'Would you like a text reminder?' });

/** Where a caller who asks for a person goes: the front desk. */
export const FRONT_DESK = '+15550142';

/**
 * The booking as a flow: four typed answers, with repairs heard in every question —
 * "actually my number is …" (the phone step's own parser and read-back), "say that again",
 * "skip" (the reminder), "cancel" (confirmed first), "agent" / "a claims adjuster" or key 0
 * (the front desk).
 */
export function bookingFlow(transferer: Transferer) {
  const toFrontDesk: Escalate<never> = (outcome, { session }) =>
    transferCall(
      transferer,
      {
        to: FRONT_DESK,
        session,
        summary: 'Callback caller asked for a person',
        announce: 'Please hold while I put you through to the front desk.',
      },
      outcome,
    );
  return flow('callback_booking', { label: 'callback booking' })
    .step('name', askName, { label: 'your name' })
    .step('phone', askPhone, {
      label: 'your phone number',
      repair: { names: ['number', 'phone number', 'phone', 'callback number'] },
    })
    .step('time', askTime, { label: 'the time', repair: { names: ['time', 'callback time'] } })
    .step('reminder', askReminder, { label: 'a text reminder', skippable: true })
    .repair({ human: { words: ['claims adjuster', 'adjuster'], key: '0', escalate: toFrontDesk } });
}

/** The front desk: greets, and books a callback when asked. */
export class CallbackDesk extends voice.Agent {
  booking: CallbackRequest | undefined;
  /** How the booking flow ended (its repairs in `report.repairs`). */
  flowResult: FlowResult<FlowValueOf<ReturnType<typeof bookingFlow>>> | undefined;

  /** @param transferer how a caller who asks for a person is handed over (the room's, or a recording stand-in). */
  constructor(transferer: Transferer = new RecordingTransferer()) {
    const booking = bookingFlow(transferer);
    super({
      instructions: 'You book callbacks for Acme Insurance. Keep replies short.',
      tools: {
        book_callback: llm.tool({
          description: 'Book a callback for the caller.',
          execute: async () => {
            const result = await booking.run();
            this.flowResult = result;
            if (result.status !== 'completed') {
              const step = result.step ?? 'call';
              if (result.repair === 'cancel') return 'No booking: the caller ended the call';
              if (result.status === 'transferred')
                return 'No booking: transferred to the front desk';
              return `No booking: ${step} ${result.outcome?.status ?? result.status}`;
            }
            const a = result.value;
            this.booking = {
              name: a.name,
              phone: a.phone,
              time: a.time,
              textReminder: a.reminder === true,
            };
            return this.booking;
          },
        }),
      },
    });
  }

  override async onEnter(): Promise<void> {
    this.session.say('Thanks for calling Acme Insurance. How can I help?');
  }
}

/** What a callback call reports: the booking, and the caller's repair requests by kind. */
export interface CallbackOutcome extends Partial<CallbackRequest> {
  status: string;
  repairs: Record<string, number>;
}

export default defineCallModule({
  name: 'callback',
  description: 'Books a callback: name, phone number, time and a reminder, all typed.',
  createCall(setup) {
    const agent = new CallbackDesk(setup?.transferer);
    return {
      agent,
      // Nothing to report when no booking was tried or the caller hung up during it.
      result: (): CallbackOutcome | undefined => {
        const flowResult = agent.flowResult;
        if (!flowResult || flowResult.status === 'hangup') return undefined;
        return {
          ...agent.booking,
          status: flowResult.status,
          repairs: { ...flowResult.report.repairs },
        };
      },
    };
  },
  demo: () => import('./demo.js'),
});
