/**
 * The concierge demo: the scripted model and the demo caller, for `npx taskline run
 * examples/concierge` with no API key and for tests. Only this file imports the testing kit.
 */
import type { CallerTurn } from 'taskline';
import { ScriptedLLM } from 'taskline/testing';

/** The notes the scripted concierge writes about the demo guest. */
export const DEMO_NOTES = '# Guest\n- Name: Sam, room 1204\n- Vegetarian\n';

/**
 * The scripted concierge: remembers, follows the skill, runs the script, charges the room.
 * It answers by what it is asked (the caller's words, the last tool's output), not by turn
 * order, so a sentence heard as two turns (audio mode) gets a short acknowledgement first.
 */
export function scriptedConcierge(): ScriptedLLM {
  return new ScriptedLLM({
    respond: (req) => {
      const tool = req.lastToolOutput;
      const out = tool?.output ?? '';
      if (tool?.name === 'write_file') {
        return { say: "Noted, Sam: vegetarian. I'll remember that. How can I help?" };
      }
      if (tool?.name === 'use_skill') {
        return {
          toolCalls: [
            {
              name: 'run_script',
              args: {
                skill: 'tip-calculator',
                script: 'scripts/split.py',
                args: ['120', '20', '4'],
              },
            },
          ],
        };
      }
      if (tool?.name === 'run_script') {
        const total = /total with tip: ([\d.]+)/.exec(out)?.[1];
        const share = /each of 4: ([\d.]+)/.exec(out)?.[1];
        return {
          say:
            total && share
              ? `With a 20 percent tip that's ${total} dollars, ${share} each.`
              : 'Sorry, I could not work that out.',
        };
      }
      if (tool?.name === 'charge_room') {
        return {
          say: out.includes('Charged 144.00')
            ? 'Done: 144 dollars is on room 1204. Enjoy your evening, Sam.'
            : 'I did not charge anything. What would you like instead?',
        };
      }
      const said = req.lastUserText?.toLowerCase() ?? '';
      if (/remember/.test(said)) {
        return {
          toolCalls: [
            { name: 'write_file', args: { file_path: '/memories/AGENTS.md', content: DEMO_NOTES } },
          ],
        };
      }
      if (/\btip\b/.test(said)) {
        return { toolCalls: [{ name: 'use_skill', args: { name: 'tip-calculator' } }] };
      }
      if (/charge/.test(said)) {
        return {
          toolCalls: [
            {
              name: 'charge_room',
              args: { room: '1204', amount: 144, description: 'dinner at the Grill' },
            },
          ],
        };
      }
      if (/that's all|good night|bye/.test(said)) return { say: 'Good night, Sam!' };
      return { say: 'Mm-hm.' };
    },
  });
}

/** The ScriptedLLM `taskline run` uses when OPENAI_API_KEY is not set. */
export const createScriptedModel = scriptedConcierge;

/** The demo caller. */
export const demoScript: CallerTurn[] = [
  { say: "Hi, it's Sam in room 1204. I'm vegetarian, please remember that." },
  {
    say: 'Dinner at the Grill was 120 dollars for four of us. What does each of us pay with a 20 percent tip?',
  },
  { say: 'Please charge the whole thing to my room.' },
  { say: 'Yes, go ahead.' },
  { say: "Thanks, that's all." },
];
