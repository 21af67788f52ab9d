/**
 * The feedback demo: stand-in models and the demo caller, for `npx taskline run
 * examples/feedback`, the scenarios and tests. Only this file imports the testing kit.
 */
import type { CallerTurn } from 'taskline';
import { ScriptedLLM } from 'taskline/testing';
import { createFeedbackCall } from './index.js';

/** A stand-in for the complaints sub-agent's model: files the ticket, then submits its number. */
export function complaintsModel(options: { afterMs?: number } = {}): ScriptedLLM {
  return new ScriptedLLM({
    respond: (req) => {
      const filed = req.lastToolOutput;
      if (!filed) {
        return { toolCalls: [{ name: 'file_ticket', args: { summary: req.lastUserText ?? '' } }] };
      }
      if (filed.name === 'file_ticket') {
        return {
          ...(options.afterMs ? { afterMs: options.afterMs } : {}),
          toolCalls: [{ name: 'submit_result', args: { ticket: filed.value } }],
        };
      }
      return { say: 'Filed.' };
    },
  });
}

/**
 * A stand-in for the voice model: the call needs none for clear answers (the parsers and the
 * keypad resolve them); anything unclear is reported as unclear, so the question is asked
 * again, and a failed complaint is told in one sentence.
 */
export function feedbackModel(): ScriptedLLM {
  return new ScriptedLLM({
    respond: (req) => {
      const question = req.messages.filter((m) => m.role === 'assistant').at(0)?.text;
      if (req.lastToolOutput?.name === 'report_unclear' && question) {
        return { say: `Sorry, I didn't catch that. ${question}` };
      }
      if (req.tools.includes('report_unclear')) {
        return { toolCalls: [{ name: 'report_unclear', args: { reason: 'not an answer' } }] };
      }
      return { say: 'Sorry, we could not file your complaint; our team will call you back.' };
    },
  });
}

/** The ScriptedLLM `taskline run` uses when OPENAI_API_KEY is not set. */
export const createScriptedModel = feedbackModel;

/** With the scripted model, the complaints sub-agent is scripted too. */
export const createCall = () => createFeedbackCall({ complaintsModel: complaintsModel() });

/** The demo caller: an unhappy customer who leaves a comment and a callback number. */
export const demoScript: CallerTurn[] = [
  { say: 'yes, go ahead' },
  { keys: '2' },
  { say: 'the parcel was left in the rain' },
  { say: 'four one five, five five five, zero one nine nine' },
  { say: 'yes' },
];
