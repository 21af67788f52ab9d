/**
 * The reminder demo: a stand-in model and the far end of the demo call (only this file
 * imports the testing kit). Who answered, the beep and the switchboard are read by
 * taskline's rules; the stand-in model only answers "will they make it?" when the rules
 * leave a reply to it ("Yes, I'll be there" is more than a bare yes), by its first word.
 */
import type { CallerAction } from 'taskline';
import { ScriptedLLM, type ScriptStep } from 'taskline/testing';

const unclear: ScriptStep = {
  toolCalls: [{ name: 'report_unclear', args: { reason: 'not understood' } }],
};

/** Stands in for a model with no API key (see the file comment). */
export function createScriptedModel(): ScriptedLLM {
  return new ScriptedLLM({
    respond: (request) => {
      if (request.agentId !== 'will_attend') return unclear;
      const first = request.lastUserText?.trim().toLowerCase().split(/\W+/)[0];
      if (first === 'yes' || first === 'yeah') {
        return { toolCalls: [{ name: 'submit', args: { value: true } }] };
      }
      if (first === 'no') return { toolCalls: [{ name: 'submit', args: { value: false } }] };
      return unclear;
    },
  });
}

/** The far end of the demo: a voicemail greeting, then its beep. */
export const demoScript: CallerAction[] = [
  { say: "Hi, you've reached Sam. Please leave a message after the tone." },
  { tone: { hz: 1000, ms: 400 } },
];
