/**
 * The one escalation path of every capture: when a cap is reached, `retry.onExhausted` runs
 * inside a tool call of the task's own (a synthetic call of {@link ESCALATE_TOOL}, started with
 * `generateReply()`), because upstream only lets an inline AgentTask — a warm transfer — run
 * inside a tool or `onEnter`, and a cap may be reached from a timer or a key.
 */
import type { ReadableStream } from 'node:stream/web';
import { type FlushSentinel, llm, type voice } from '@livekit/agents';
import { z } from 'zod/v4';
import type { FailedOutcome, Outcome } from '../outcome.js';
import { EXHAUSTED_STATUSES } from './capture.js';
import { emptyStream, toolCallStream } from './chunks.js';
import type { OnExhausted } from './policy.js';
import { ESCALATE_TOOL } from './typed-task-spec.js';

const NO_PARAMETERS = z.object({});

/** A capture's escalation, from the reached cap to the outcome it settles with. */
export class Escalation<T> {
  private outcome: FailedOutcome | undefined;
  private calls = 0;
  /** The internal tool the escalation runs in (never offered to a model). */
  readonly tool: llm.FunctionTool;

  constructor(
    private readonly name: string,
    private readonly onExhausted: OnExhausted<T>,
    /** Completes the task with the escalation's outcome (unless it is done already). */
    private readonly settle: (outcome: Outcome<T>) => void,
  ) {
    this.tool = llm.tool({
      name: ESCALATE_TOOL,
      description: 'Internal to taskline; never call it.',
      parameters: NO_PARAMETERS,
      execute: async () => this.run(),
    }) as unknown as llm.FunctionTool;
  }

  /** True when `outcome` is a reached cap that this policy escalates. */
  handles(outcome: Outcome<T>): outcome is FailedOutcome {
    return (
      outcome.status !== 'ok' &&
      EXHAUSTED_STATUSES.has(outcome.status) &&
      this.onExhausted !== 'return'
    );
  }

  /** True from the reached cap until the escalation has started. */
  get waiting(): boolean {
    return this.outcome !== undefined;
  }

  /** Starts the escalation: the session's next reply of the task is its tool call. */
  start(outcome: FailedOutcome, session: () => voice.AgentSession): void {
    this.outcome = outcome;
    try {
      session().generateReply();
    } catch {
      // The task's activity is gone (the session is closing): run it here, as far as it can.
      void this.run();
    }
  }

  /** The reply that calls the escalation tool (once; any later reply says nothing). */
  reply(): ReadableStream<llm.ChatChunk | string | FlushSentinel> {
    this.calls += 1;
    if (this.calls > 1) return emptyStream();
    return toolCallStream(`${ESCALATE_TOOL}_${this.name}`, ESCALATE_TOOL, {});
  }

  private async run(): Promise<undefined> {
    const outcome = this.outcome;
    const onExhausted = this.onExhausted;
    if (!outcome || onExhausted === 'return') return undefined;
    this.outcome = undefined;
    let result: Outcome<T>;
    try {
      result = await onExhausted(outcome);
    } catch (error) {
      result = {
        status: 'cancelled',
        attempts: outcome.attempts,
        reason: `escalation failed: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    this.settle(result);
    return undefined;
  }
}
