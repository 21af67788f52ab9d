/**
 * The ivr-bank demo: a stand-in model and the demo caller, for `npx taskline run
 * examples/ivr-bank`, the README demo and tests. Only this file imports the testing kit;
 * `index.ts` (the bot) and `room.ts` (production) never load it.
 */
import type { CallerTurn } from 'taskline';
import { ScriptedLLM, type ScriptStep } from 'taskline/testing';
import { mainMenu } from './index.js';

const KEYWORDS: ReadonlyArray<[RegExp, string]> = [
  [/money|account|owe/, '1'],
  [/card|wallet/, '2'],
  [/help|talk/, '3'],
];

/** Stands in for a model with no API key: picks menu options by keyword, else "unclear". */
export function bankScriptedModel(): ScriptedLLM {
  const unclear: ScriptStep = {
    toolCalls: [{ name: 'report_unclear', args: { reason: 'no match' } }],
  };
  return new ScriptedLLM({
    respond: (request) => {
      const text = request.lastUserText?.toLowerCase() ?? '';
      if (request.agentId !== mainMenu.name) return unclear;
      const key = KEYWORDS.find(([words]) => words.test(text))?.[1];
      return key ? { toolCalls: [{ name: 'submit', args: { key } }] } : unclear;
    },
  });
}

/** The ScriptedLLM `taskline run` uses when OPENAI_API_KEY is not set. */
export const createScriptedModel = bankScriptedModel;

/** The demo caller: asks for the balance by voice, then keys the PIN (masked, as the task asks). */
export const demoScript: CallerTurn[] = [
  { say: 'how much money is in my account?' },
  { keys: '4321' },
];
