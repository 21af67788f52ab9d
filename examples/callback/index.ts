/**
 * Callback booking: four prebuilt capture tasks in a row inside one tool. Every answer
 * in the demo is understood by taskline's parsers, so the tasks make no model call.
 */
import { llm, voice } from '@livekit/agents';
import { defineCallModule } from 'taskline';
import { type PersonName, personName, phone, time, yesNo } from 'taskline/tasks';

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

/** The front desk: greets, and books a callback when asked. */
export class CallbackDesk extends voice.Agent {
  booking: CallbackRequest | undefined;

  constructor() {
    super({
      instructions: 'You book callbacks for Acme Insurance. Keep replies short.',
      tools: {
        book_callback: llm.tool({
          description: 'Book a callback for the caller.',
          execute: async () => {
            const name = await askName.run();
            if (name.status !== 'ok') return `No booking: name ${name.status}`;
            const number = await askPhone.run();
            if (number.status !== 'ok') return `No booking: phone ${number.status}`;
            const at = await askTime.run();
            if (at.status !== 'ok') return `No booking: time ${at.status}`;
            const reminder = await askReminder.run();
            this.booking = {
              name: name.value,
              phone: number.value,
              time: at.value,
              textReminder: reminder.status === 'ok' && reminder.value,
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

export default defineCallModule({
  name: 'callback',
  description: 'Books a callback: name, phone number, time and a reminder, all typed.',
  createCall() {
    const agent = new CallbackDesk();
    return { agent, result: () => agent.booking };
  },
  demo: () => import('./demo.js'),
});
