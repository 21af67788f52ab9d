/**
 * The survey demo: a stand-in model and the demo caller (only this file imports the
 * testing kit; the bot in `index.ts` and `room.ts` do not).
 */
import type { CallerAction } from 'taskline';
import { ScriptedLLM } from 'taskline/testing';

/**
 * A stand-in model for the demo: the survey needs none for clear answers (parsers and the
 * keypad resolve them); anything unclear is reported as unclear, and "change my score"
 * goes back to the score question.
 */
export function createSurveyModel(): ScriptedLLM {
  return new ScriptedLLM({
    respond: (req) => {
      if (req.tools.includes('go_back') && /change|go back/i.test(req.lastUserText ?? '')) {
        return { toolCalls: [{ name: 'go_back', args: { step: 'score' } }] };
      }
      const question = req.messages.filter((m) => m.role === 'assistant').at(0)?.text;
      if (req.lastToolOutput?.name === 'report_unclear' && question) {
        return { say: `Sorry, I didn't catch that. ${question}` };
      }
      if (req.tools.includes('report_unclear') && !req.lastToolOutput) {
        return { toolCalls: [{ name: 'report_unclear', args: { reason: 'not an answer' } }] };
      }
      return { say: 'Sorry, could you say that again?' };
    },
  });
}

/** The ScriptedLLM `taskline run` uses when OPENAI_API_KEY is not set. */
export const createScriptedModel = createSurveyModel;

/** The demo caller: consents, keys a 9, joins the referral program and spells an email. */
export const demoScript: CallerAction[] = [
  { say: 'yes, sure' },
  { dtmf: '9' },
  { say: 'yes please' },
  { say: 'jane dot doe at example dot com' },
  { say: 'yes' },
];
