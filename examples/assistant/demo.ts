/**
 * The assistant demo: the scripted voice model, the scripted researcher and the demo caller,
 * for `npx taskline run examples/assistant` with no API key and for tests. Only this file
 * imports the testing kit; the bot (`index.ts`) and its room entry do not.
 */
import type { CallerTurn, Clock } from 'taskline';
import { ScriptedLLM } from 'taskline/testing';
import { type AssistantCall, createAssistantCall, toCallInstance } from './index.js';

/** What the demo caller asks. */
export const QUESTION = 'What does the refund policy say about opened items?';

/** How long the scripted researcher takes to answer (on the call's clock): research is never instant. */
export const RESEARCH_MS = 1_000;

/** The scripted researcher: searches once, then answers from what it found, `RESEARCH_MS` later. */
export function scriptedResearcher(options: { clock?: () => Clock } = {}): ScriptedLLM {
  return new ScriptedLLM({
    ...(options.clock ? { clock: options.clock } : {}),
    respond: (req) => {
      if (!req.lastToolOutput) {
        return { toolCalls: [{ name: 'search_docs', args: { query: req.lastUserText ?? '' } }] };
      }
      const found = req.lastToolOutput.output;
      return {
        afterMs: RESEARCH_MS,
        say: found.includes('Opened items can be returned within 14 days')
          ? 'Opened items can be returned within 14 days of delivery, refunded as store credit. Unopened items have 30 days for a full refund. Source: refunds.md.'
          : `I could not find that in the documents. Closest match: ${found.slice(0, 120)}`,
      };
    },
  });
}

/** What the assistant says when the findings come back. */
export const FINDINGS =
  'About your refund question: opened items can come back within 14 days, as store credit. Unopened ones have 30 days for a full refund.';

/**
 * The scripted voice model of the demo call. It answers by what it is asked, not by turn
 * order, so the findings may come back at any point of the call (as with a real model).
 */
export function scriptedAssistantModel(): ScriptedLLM {
  return new ScriptedLLM({
    respond: (req) => {
      const system = req.messages
        .filter((m) => m.role === 'system')
        .map((m) => m.text)
        .join('\n');
      if (system.includes('Delegated task results are ready')) {
        return {
          say: system.includes('within 14 days')
            ? FINDINGS
            : 'I could not find the refund details, sorry.',
        };
      }
      const tool = req.lastToolOutput?.name;
      if (tool === 'task')
        return { say: "Sure, I'm looking into that now. Anything else while I check?" };
      if (tool === 'write_todos') return { say: 'Done: "Call the bank" is on your list.' };
      const said = req.lastUserText ?? '';
      if (/refund/i.test(said)) {
        return {
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
        };
      }
      if (/todo/i.test(said)) {
        return {
          toolCalls: [
            {
              name: 'write_todos',
              args: { todos: [{ content: 'Call the bank', status: 'pending' }] },
            },
          ],
        };
      }
      if (/that's all|bye/i.test(said)) return { say: "You're welcome. Have a good day!" };
      return { say: 'Sorry, could you say that again?' };
    },
  });
}

/** The ScriptedLLM `taskline run` uses when OPENAI_API_KEY is not set. */
export const createScriptedModel = scriptedAssistantModel;

/** With the scripted model, the researcher is scripted too (timed on the call's clock). */
export function createScriptedCall(): AssistantCall {
  const call: AssistantCall = createAssistantCall({
    // Asked only once the call runs, when the manager has its call's clock.
    subagentModel: scriptedResearcher({ clock: () => call.manager.clock }),
  });
  return call;
}

/** The demo call (`taskline run`, scenarios). */
export const createCall = () => toCallInstance(createScriptedCall());

/** The demo caller: asks a policy question, adds a todo while the answer is researched. */
export const demoScript: CallerTurn[] = [
  { say: `Hi! ${QUESTION}` },
  { say: 'Thanks. While you look, add "call the bank" to my todo list.' },
  { silence: '1s' },
  { say: "Great, that's all." },
];
