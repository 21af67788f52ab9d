/**
 * The survey demo: a stand-in model and the demo caller (only this file imports the
 * testing kit; the bot in `index.ts` and `room.ts` do not).
 */
import type { CallerTurn } from 'taskline';
import { ScriptedLLM } from 'taskline/testing';

/** What a stand-in model takes as "no" to a yes/no question (a real model understands more). */
const NOT_NOW =
  /\b(not interested|no interest|(don'?t|do not) have (the )?time|no time|too busy|busy|not now|not today|another time|maybe later)\b/i;

/**
 * A stand-in model for the demo: the survey needs none for clear answers (parsers and the
 * keypad resolve them); "not interested" or "no time" at a yes/no question is a no,
 * anything else unclear is reported as unclear, and "change my score" goes back to the
 * score question.
 */
export function createSurveyModel(): ScriptedLLM {
  return new ScriptedLLM({
    respond: (req) => {
      const said = req.lastUserText ?? '';
      if (req.tools.includes('go_back') && /change|go back/i.test(said)) {
        return { toolCalls: [{ name: 'go_back', args: { step: 'score' } }] };
      }
      const yesNoQuestion = req.agentId === 'consent' || req.agentId === 'referral';
      if (yesNoQuestion && !req.lastToolOutput && NOT_NOW.test(said.replace(/[’‘]/g, "'"))) {
        return { toolCalls: [{ name: 'submit', args: { value: false } }] };
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
export const demoScript: CallerTurn[] = [
  { say: 'yes, sure' },
  { keys: '9' },
  { say: 'yes please' },
  { say: 'jane dot doe at example dot com' },
  { say: 'yes' },
];
