/**
 * The assistant demo: the scripted voice model, the scripted researcher and the demo caller,
 * for `npx taskline run examples/assistant` with no API key and for tests. Only this file
 * imports the testing kit; the bot (`index.ts`) and its room entry do not.
 */
import type { CallerAction } from 'taskline';
import { ScriptedLLM } from 'taskline/testing';
import { Assistant, createAssistantCall, toCallInstance } from './index.js';

/** What the demo caller asks. */
export const QUESTION = 'What does the refund policy say about opened items?';

/** The scripted researcher: searches once, then answers from what it found. */
export function scriptedResearcher(): ScriptedLLM {
  return new ScriptedLLM({
    respond: (req) => {
      if (!req.lastToolOutput) {
        return { toolCalls: [{ name: 'search_docs', args: { query: req.lastUserText ?? '' } }] };
      }
      const found = req.lastToolOutput.output;
      return {
        say: found.includes('Opened items can be returned within 14 days')
          ? 'Opened items can be returned within 14 days of delivery, refunded as store credit. Unopened items have 30 days for a full refund. Source: refunds.md.'
          : `I could not find that in the documents. Closest match: ${found.slice(0, 120)}`,
      };
    },
  });
}

/** The scripted voice model of the demo call. */
export function scriptedAssistantModel(): ScriptedLLM {
  return new ScriptedLLM().for(Assistant, [
    {
      toolCalls: [
        {
          name: 'task',
          args: {
            subagent_type: 'researcher',
            description: 'Check refunds for opened items',
            prompt: `${QUESTION} Answer in two sentences a caller can hear.`,
            run_in_background: true,
          },
        },
      ],
    },
    { say: "Sure, I'm looking into that now. Anything else while I check?" },
    {
      toolCalls: [
        { name: 'write_todos', args: { todos: [{ content: 'Call the bank', status: 'pending' }] } },
      ],
    },
    { say: 'Done: "Call the bank" is on your list.' },
    (req) => {
      const instructions = req.messages
        .filter((m) => m.role === 'system')
        .map((m) => m.text)
        .join('\n');
      return {
        say: instructions.includes('within 14 days')
          ? 'About your refund question: opened items can come back within 14 days, as store credit. Unopened ones have 30 days for a full refund.'
          : 'I could not find the refund details, sorry.',
      };
    },
    { say: "You're welcome. Have a good day!" },
  ]);
}

/** The ScriptedLLM `taskline run` uses when OPENAI_API_KEY is not set. */
export const createScriptedModel = scriptedAssistantModel;

/** With the scripted model, the researcher is scripted too. */
export const createCall = () =>
  toCallInstance(createAssistantCall({ subagentModel: scriptedResearcher() }));

/** The demo caller: asks a policy question, adds a todo while the answer is researched. */
export const demoScript: CallerAction[] = [
  { say: `Hi! ${QUESTION}` },
  { say: 'Thanks. While you look, add "call the bank" to my todo list.' },
  { silence: 1_000 },
  { say: "Great, that's all." },
];
