import { llm } from '@livekit/agents';
import { summarizeChatContext } from '../upstream/internals.js';
import { type FlowDefinition, stepById } from './definition.js';
import type { StepEntry } from './graph.js';
import type { ContextPolicy } from './types.js';

/**
 * A typed, model-free summary of the answers so far, one line per step on the path
 * ("consent: true"), for the next step's context.
 */
export function answerSummary(
  def: FlowDefinition,
  path: readonly string[],
  entries: Readonly<Record<string, StepEntry>>,
): string {
  const lines: string[] = [];
  for (const id of path) {
    const entry = entries[id];
    if (!entry) continue;
    const step = stepById(def, id);
    const name = step?.label ? `${id} (${step.label})` : id;
    if (entry.skipped) lines.push(`- ${name}: skipped`);
    else if (entry.value !== undefined) lines.push(`- ${name}: ${JSON.stringify(entry.value)}`);
  }
  if (lines.length === 0) return '';
  return `Answers the caller already gave in this ${def.name} flow (do not ask them again):\n${lines.join('\n')}`;
}

/** Builds the chat context a step starts from, under its context policy. */
export async function stepContext(
  policy: ContextPolicy,
  info: {
    answers: Readonly<Record<string, unknown>>;
    /** The flow's history so far (copied only for the policies that read it). */
    history: () => llm.ChatContext;
    summary: string;
    model: () => llm.LLM | undefined;
  },
): Promise<llm.ChatContext> {
  if (typeof policy === 'function') {
    return policy({ answers: info.answers, history: info.history(), summary: info.summary });
  }
  if (policy === 'full') return info.history();
  if (policy === 'model-summary') {
    const model = info.model();
    const history = info.history();
    const hasTurns = history.items.some((i) => i.type === 'message' && i.role !== 'system');
    if (model && hasTurns) return summarizeChatContext(history, model, { keepLastTurns: 0 });
  }
  const ctx = llm.ChatContext.empty();
  if (info.summary) ctx.addMessage({ role: 'system', content: info.summary });
  return ctx;
}
