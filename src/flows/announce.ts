import type { ReadableStream } from 'node:stream/web';
import { type FlushSentinel, type llm, voice } from '@livekit/agents';
import type { Outcome } from '../outcome.js';
import { emptyStream } from '../tasks/chunks.js';
import type { AnswersSoFar, StepContext, StepMeta, TaskFactory } from './types.js';

/** A line to speak: fixed text, or made from the answers given so far. */
export type AnnounceLine<A = AnswersSoFar> = string | ((answers: A) => string);

/** A task that speaks one line (no model) and completes once it has been played. */
export class AnnounceTask extends voice.AgentTask<Outcome<void>> {
  readonly text: string;

  constructor(text: string, id = 'announce') {
    super({ id, instructions: 'Say the given line; nothing else.' });
    this.text = text;
  }

  override async onEnter(): Promise<void> {
    const handle = this.session.say(this.text);
    await handle.waitForPlayout();
    if (!this.done) this.complete({ status: 'ok', value: undefined, attempts: 1 });
  }

  override async llmNode(): Promise<ReadableStream<llm.ChatChunk | string | FlushSentinel>> {
    return emptyStream();
  }
}

/** A task that could not build its line: it says nothing and fails its step. */
class FailedAnnounce extends voice.AgentTask<Outcome<void>> {
  constructor(
    id: string,
    private readonly reason: string,
  ) {
    super({ id, instructions: 'Say nothing.' });
  }

  override async onEnter(): Promise<void> {
    if (!this.done) this.complete({ status: 'invalid', attempts: 0, reason: this.reason });
  }

  override async llmNode(): Promise<ReadableStream<llm.ChatChunk | string | FlushSentinel>> {
    return emptyStream();
  }
}

/** The line an announce step says, made from the answers so far, or why there is none. */
export type AnnounceText = { readonly text: string } | { readonly reason: string };

/** What an announce factory shows of itself: it only speaks, and what it says. */
export interface AnnounceFactory extends TaskFactory<void> {
  meta: StepMeta;
  /** The line as given: fixed text or a function of the answers. */
  readonly line: AnnounceLine<never>;
  /** The task id it speaks as. */
  readonly taskId: string | undefined;
  /**
   * The line for these answers. A flow speaks it from its own activity (no task switch for one
   * sentence); a `reason` fails the step as `invalid` without speaking.
   */
  readonly textFor: (context?: StepContext) => AnnounceText;
}

/**
 * A speak-only step ("Thank you, goodbye!"): it never waits for the caller and adds no
 * key to the flow's result. The line may be a function of the answers given so far; one
 * that throws (or returns no text) fails the step as `invalid` without speaking. In a flow
 * the line is said by the flow itself, as one more turn of the same agent; called on its
 * own, the factory makes an {@link AnnounceTask}.
 *
 * @example
 * flow('survey').step('thanks', announce('Thanks for your time. Goodbye!'))
 * flow('order').step('recap', announce((a: { size?: string }) => `One ${a.size ?? 'regular'} coffee, coming up.`))
 */
export function announce<A = AnswersSoFar>(line: AnnounceLine<A>, id?: string): AnnounceFactory {
  if (typeof line !== 'string' && typeof line !== 'function') {
    throw new TypeError('announce() takes a line of text or a function of the answers.');
  }
  const textFor = (context?: StepContext): AnnounceText => {
    if (typeof line === 'string') return { text: line };
    let text: unknown;
    try {
      text = line((context?.answers ?? {}) as A);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return { reason: `the announce line could not be made: ${why}` };
    }
    if (typeof text !== 'string' || text.trim() === '') {
      return { reason: 'the announce line was empty' };
    }
    return { text };
  };
  const factory = (context?: StepContext) => {
    const made = textFor(context);
    return 'text' in made
      ? new AnnounceTask(made.text, id)
      : new FailedAnnounce(id ?? 'announce', made.reason);
  };
  return Object.assign(factory, {
    meta: { listens: false, handlesNoInput: true },
    line: line as AnnounceLine<never>,
    taskId: id,
    textFor,
  });
}

/** The announce factory behind a step's source, when it is one (a flow says its line itself). */
export function announceOf(source: unknown): AnnounceFactory | undefined {
  if (typeof source !== 'function') return undefined;
  const f = source as Partial<AnnounceFactory>;
  return typeof f.textFor === 'function' && 'line' in f ? (source as AnnounceFactory) : undefined;
}
