/**
 * The pharmacy demo: a stand-in model and the demo caller, for `npx taskline run
 * examples/pharmacy`, the scenarios and tests. Only this file imports the testing kit.
 */
import type { CallerTurn } from 'taskline';
import { ScriptedLLM } from 'taskline/testing';
import { mainMenu } from './index.js';

const KEYWORDS: ReadonlyArray<[RegExp, string]> = [
  [/medicine|pills|medication|run(ning)? out/, '1'],
  [/question|talk|speak/, '2'],
];

/**
 * Stands in for a model with no API key: the line needs none for clear answers (the menu,
 * the parsers and the keypad resolve them); at the menu it picks by keyword, anything else
 * unclear is reported as unclear, so the task asks again.
 */
export function pharmacyModel(): ScriptedLLM {
  return new ScriptedLLM({
    respond: (req) => {
      const said = req.lastUserText?.toLowerCase() ?? '';
      const key =
        req.agentId === mainMenu.name ? KEYWORDS.find(([w]) => w.test(said))?.[1] : undefined;
      if (key) return { toolCalls: [{ name: 'submit', args: { key } }] };
      const question = req.messages.filter((m) => m.role === 'assistant').at(0)?.text;
      if (req.lastToolOutput?.name === 'report_unclear' && question) {
        return { say: `Sorry, I didn't catch that. ${question}` };
      }
      return { toolCalls: [{ name: 'report_unclear', args: { reason: 'not an answer' } }] };
    },
  });
}

/** The ScriptedLLM `taskline run` uses when OPENAI_API_KEY is not set. */
export const createScriptedModel = pharmacyModel;

/** The demo caller: asks for a refill, keys the date of birth, says the prescription number. */
export const demoScript: CallerTurn[] = [
  { say: "I'd like a refill please" },
  { keys: '03151980' },
  { say: 'yes' },
  { say: 'one two three four five six seven' },
  { say: "yes that's right" },
];
