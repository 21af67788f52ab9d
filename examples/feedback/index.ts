/**
 * feedback: a call after a delivery.
 *
 *   consent ── rating 1-5 (said or keyed) ── what to improve (optional) ─┬─ 1-2: callback number ── thanks
 *                                                                        └─ 3-5: ───────────────── thanks
 *
 * A rating of 1 or 2 files a complaint with the help desk in the background (a sub-agent on
 * the help desk's tools) while the call goes on; its ticket number is said at the first
 * moment no question waits for its answer — never between a question and its answer, so a
 * read-back waiting for its "yes" keeps it.
 */
import { llm, voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { type CallInstance, defineCallModule } from 'taskline';
import { defineSubAgent, TaskManager, type TaskSnapshot } from 'taskline/delegation';
import { freeText, number, phone, yesNo } from 'taskline/tasks';
import { endCall } from 'taskline/telephony';
import { z } from 'zod';

const consent = yesNo({
  name: 'consent',
  question:
    'Hi, this is Taskline Delivery about your order today. Do you have a minute for a few quick questions?',
});
const rating = number({
  name: 'rating',
  question: 'From 1 to 5, how was your delivery? Say it, or press it on your keypad.',
  min: 1,
  max: 5,
  integer: true,
  keypad: true,
});
const improve = freeText({
  name: 'comment',
  question: 'What could we have done better?',
  maxChars: 300,
});
const callbackNumber = phone({
  name: 'callback',
  question: 'Which number can our team call you back on?',
  confirm: 'always',
});

/** The help desk (a stand-in: your ticketing system here). */
export class HelpDesk {
  readonly tickets: Array<{ ticket: string; summary: string }> = [];
  #next = 4815;

  file(summary: string): string {
    const ticket = `FB-${this.#next++}`;
    this.tickets.push({ ticket, summary });
    return ticket;
  }
}

/** The sub-agent that files a complaint: it writes the ticket and answers with its number. */
export function complaintsAgent(desk: HelpDesk, model?: llm.LLM) {
  return defineSubAgent({
    name: 'complaints',
    description: 'Files a complaint about a delivery with the help desk.',
    instructions: 'File one complaint ticket with file_ticket, then submit its number.',
    tools: {
      file_ticket: llm.tool({
        description: 'File a complaint ticket; returns its number.',
        parameters: z.object({ summary: z.string() }),
        execute: async ({ summary }) => desk.file(summary),
      }),
    },
    output: z.object({ ticket: z.string() }),
    ...(model ? { llm: model } : {}),
  });
}

/** What the caller hears once the ticket is filed: its number, letter by letter. */
export function ticketLine(task: TaskSnapshot): string | undefined {
  const ticket = (task.result?.value as { ticket?: string } | undefined)?.ticket;
  if (task.status !== 'completed' || !ticket) return undefined; // the model words a failure
  const spelled = ticket.replace(/-/g, '').split('').join(' ');
  return `An update on your complaint: it is filed as ticket ${spelled}.`;
}

/** The call's answers, as far as it got. */
export interface FeedbackAnswers {
  consent?: boolean;
  rating?: number;
  comment?: string;
  callback?: string;
}

/** The call's typed result. */
export interface FeedbackResult {
  answers: FeedbackAnswers;
  /** The complaint ticket, once filed. */
  ticket?: string;
  /** Whether the caller heard the ticket number. */
  ticketSaid: boolean;
}

/** The feedback call: the whole call, question by question, in `onEnter`. */
export class FeedbackCall extends voice.Agent {
  readonly answers: FeedbackAnswers = {};

  constructor(readonly complaints: TaskManager) {
    super({ instructions: 'You ask customers about their delivery. Keep every reply short.' });
  }

  override async onEnter(): Promise<void> {
    this.complaints.attach(this.session);
    const agreed = await consent.run();
    if (agreed.status !== 'ok') return this.end();
    this.answers.consent = agreed.value;
    if (!agreed.value) return this.end('No problem. Thank you, and have a good day!');
    const score = await rating.run();
    if (score.status !== 'ok') return this.end();
    this.answers.rating = score.value;
    const unhappy = score.value <= 2;
    if (unhappy) {
      this.complaints.start({
        subagentType: 'complaints',
        description: 'File a complaint about a delivery',
        prompt: `The customer rated their delivery ${score.value} out of 5.`,
        resultLine: ticketLine,
      });
    }
    const said = await improve.run();
    if (said.status === 'ok') this.answers.comment = said.value;
    if (unhappy) {
      const callback = await callbackNumber.run();
      if (callback.status === 'ok') this.answers.callback = callback.value;
    }
    await this.end('Thank you for your feedback. Goodbye!');
  }

  private async end(goodbye?: string): Promise<void> {
    await endCall(this.session, goodbye ? { goodbye } : {});
  }
}

/** Builds one feedback call; the complaints sub-agent runs on `complaintsModel` (OpenAI by default). */
export function createFeedbackCall(
  options: { complaintsModel?: llm.LLM; desk?: HelpDesk } = {},
): CallInstance<FeedbackResult> & { agent: FeedbackCall; desk: HelpDesk } {
  const desk = options.desk ?? new HelpDesk();
  const model =
    options.complaintsModel ??
    new openai.LLM({
      model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini',
      apiKey: process.env.OPENAI_API_KEY,
    });
  const complaints = new TaskManager({ subagents: [complaintsAgent(desk, model)] });
  const agent = new FeedbackCall(complaints);
  return {
    agent,
    desk,
    result: () => {
      const task = complaints.list().at(0);
      const ticket = (task?.result?.value as { ticket?: string } | undefined)?.ticket;
      return {
        answers: { ...agent.answers },
        ...(ticket ? { ticket } : {}),
        ticketSaid: task?.delivery === 'spoken',
      };
    },
  };
}

/** The feedback call for `npx taskline run`, `taskline test` and the room entry. */
export const feedback = defineCallModule<FeedbackResult>({
  name: 'feedback',
  description:
    'Delivery feedback: consent, a 1-5 rating (said or keyed), what to improve, and for a low rating a complaint filed in the background and a callback number.',
  createCall: () => createFeedbackCall(),
  demo: () => import('./demo.js'),
});

export default feedback;
