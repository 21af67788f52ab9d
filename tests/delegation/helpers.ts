// Shared fixtures for the delegation tests: a front-desk voice agent with the delegation
// tools, sub-agent models scripted separately from the voice model, and event helpers.
import { llm, voice } from '@livekit/agents';
import { z } from 'zod';
import { DEFAULT_COALESCE_MS, type TaskManager } from '../../src/delegation/manager.js';
import { defineSubAgent, type SubAgentSpec } from '../../src/delegation/subagent.js';
import { createDelegationTools } from '../../src/delegation/task-tools.js';
import type { TaskEvent, TaskSnapshot } from '../../src/delegation/types.js';
import {
  type ScriptEntry,
  ScriptedLLM,
  type ScriptedRequest,
  type SimulatedCaller,
} from '../../src/testing/index.js';

/** The voice agent under test: answers the caller and delegates with the task tools. */
export class Desk extends voice.Agent {
  constructor(manager: TaskManager, extra: llm.ToolContextLike = {}) {
    super({
      instructions: 'You are the front desk.',
      tools: { ...createDelegationTools(manager), ...(extra as Record<string, never>) },
    });
  }
}

/** A second agent the desk hands the call to; it has no task tools of its own. */
export class Billing extends voice.Agent {
  constructor() {
    super({ instructions: 'You are billing.' });
  }
}

/** A sub-agent model that plays `steps` in order for every run (it is not bound to a session). */
export function subModel(steps: ScriptEntry[]): ScriptedLLM {
  return new ScriptedLLM().for('*', steps);
}

/**
 * Counts lookups that have started waiting on the clock, so a test advances time only
 * once the timer it means to fire exists.
 */
export class Lookups {
  count = 0;
  #waiters: Array<{ n: number; resolve: () => void }> = [];

  /** Records one more lookup (called right before it sleeps on the clock). */
  readonly hit = (): void => {
    this.count += 1;
    this.#waiters = this.#waiters.filter((w) => {
      if (w.n > this.count) return true;
      w.resolve();
      return false;
    });
  };

  /** Resolves once `n` lookups have started. */
  reached(n = 1): Promise<void> {
    if (this.count >= n) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ n, resolve }));
  }
}

/**
 * A researcher whose `lookup` tool takes `delayMs` on the manager's clock (so a test
 * controls when it finishes) and answers `answer`.
 */
export function researcher(
  manager: () => TaskManager,
  options: { delayMs?: number; answer?: string; lookups?: Lookups } = {},
): SubAgentSpec {
  return defineSubAgent({
    name: 'researcher',
    description: 'Looks things up in the document store.',
    instructions: 'You research questions in the documents and answer briefly.',
    tools: {
      lookup: llm.tool({
        description: 'Look something up.',
        parameters: z.object({ query: z.string() }),
        execute: async ({ query }, { abortSignal }) => {
          options.lookups?.hit();
          if (options.delayMs) await manager().clock.sleep(options.delayMs, abortSignal);
          return options.answer ?? `notes about ${query}`;
        },
      }),
    },
  });
}

/**
 * A researcher model for any number of concurrent runs: it looks up first, and answers
 * `answer` once it has a lookup result.
 */
export function researchModel(answer: string | ((req: ScriptedRequest) => string)): ScriptedLLM {
  return new ScriptedLLM({
    respond: (req) =>
      req.lastToolOutput
        ? { say: typeof answer === 'string' ? answer : answer(req) }
        : { toolCalls: [{ name: 'lookup', args: { query: req.lastUserText ?? '' } }] },
  });
}

/** Scripted researcher runs: look up, then answer with `answer`. */
export function lookupThenAnswer(answer: string, runs = 1): ScriptEntry[] {
  const steps: ScriptEntry[] = [];
  for (let i = 0; i < runs; i++) {
    steps.push({ toolCalls: [{ name: 'lookup', args: { query: 'q' } }] }, { say: answer });
  }
  return steps;
}

/** Resolves with the first event matching `match`. */
export function nextEvent(
  manager: TaskManager,
  match: (event: TaskEvent) => boolean,
): Promise<TaskEvent> {
  return new Promise((resolve) => {
    const off = manager.subscribe((event) => {
      if (match(event)) {
        off();
        resolve(event);
      }
    });
  });
}

/** Collects every event for assertions. */
export function recordEvents(manager: TaskManager): TaskEvent[] {
  const events: TaskEvent[] = [];
  manager.subscribe((e) => events.push(e));
  return events;
}

/** Delivered events of one task. */
export function deliveries(events: readonly TaskEvent[], id: string): TaskEvent[] {
  return events.filter((e) => e.type === 'delivered' && e.task.id === id);
}

/** The delivery text the voice model saw in a deferred reply's instructions, if any. */
export function systemText(request: { messages: { role: string; text: string }[] }): string {
  return request.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.text)
    .join('\n');
}

/** A task call step for the voice model. */
export function taskCall(args: Record<string, unknown>): ScriptEntry {
  return { toolCalls: [{ name: 'task', args }] };
}

/** The snapshot inside an event. */
export function taskOf(event: TaskEvent): TaskSnapshot | undefined {
  return 'task' in event ? event.task : undefined;
}

/**
 * Runs `action`, waits until task `id` has finished, lets the delivery window pass on the
 * call's clock, waits until the result was delivered (its reply generated, which may have
 * happened already), then lets the call settle so the spoken line is in the transcript.
 */
export async function whenSpoken(
  caller: SimulatedCaller,
  manager: TaskManager,
  id: string,
  action: () => Promise<unknown> = async () => undefined,
): Promise<void> {
  const delivered = nextEvent(manager, (e) => e.type === 'delivered' && e.task.id === id);
  const finished = nextEvent(manager, (e) => e.type === 'finished' && e.task.id === id);
  await action();
  const status = manager.get(id)?.status;
  if (status === undefined || status === 'queued' || status === 'running') await finished;
  await caller.clock.advance(DEFAULT_COALESCE_MS, () => caller.settle());
  // A single result is handed over without waiting out the window: it may be spoken already.
  if (manager.get(id)?.delivery !== 'spoken') await delivered;
  await caller.settle();
}
