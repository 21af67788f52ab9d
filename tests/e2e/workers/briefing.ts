/**
 * The stand-in briefing model of the warm-transfer e2e worker (ivr-bank-warm.ts), apart
 * from the worker so the test reads its constants without loading a worker.
 */
import {
  ScriptedLLM,
  type ScriptedRequest,
  type ScriptStep,
} from '../../../src/testing/scripted-llm.js';

/** The agent name this worker registers under (the test's dispatch rule names it). */
export const WARM_AGENT_NAME = 'taskline-ivr-bank-warm';

/** The worker's bound on a warm transfer's hold (WarmTransferer `consultTimeoutMs`). */
export const CONSULT_TIMEOUT_MS = 60_000;

/** What the briefing agent says first: the summary the bot prepared, and a question. */
export const BRIEFING_OPENING = 'Hello, I have a caller on hold for you.';

/** The summary line taskline's WarmTransferer adds to upstream's briefing instructions. */
const SUMMARY = /Summary prepared by the automated line[^:]*: (.+)/;

/**
 * A stand-in for the briefing model: to the person who answered it says the summary and
 * asks; on their yes it calls upstream's `connect_to_caller`, on their no
 * `decline_transfer`. The bank's menu is keyed in this test, so nothing else asks it.
 */
export function briefingStep(request: ScriptedRequest): ScriptStep | undefined {
  if (!request.tools.includes('connect_to_caller')) return undefined;
  // After its own tool call (the person is being moved, or declined): nothing more to say.
  if (request.lastToolOutput) return {};
  const last = request.messages.at(-1);
  const answer = last?.role === 'user' ? last.text : '';
  if (/\b(yes|connect|put (them|him|her) through)\b/i.test(answer)) {
    return { toolCalls: [{ name: 'connect_to_caller' }] };
  }
  if (/\b(no|cannot|can't)\b/i.test(answer)) {
    return { toolCalls: [{ name: 'decline_transfer', args: { reason: answer } }] };
  }
  const summary = request.messages
    .map((m) => SUMMARY.exec(m.text)?.[1]?.trim())
    .find((found) => found !== undefined);
  return { say: `${BRIEFING_OPENING} ${summary ?? ''} Shall I connect them?`.replace(/ +/g, ' ') };
}

/** A scripted model that plays {@link briefingStep}. */
export function briefingModel(): ScriptedLLM {
  return new ScriptedLLM({ respond: briefingStep });
}
