import type { ReadableStream } from 'node:stream/web';
import { type FlushSentinel, type llm, voice } from '@livekit/agents';
import type { Outcome } from '../outcome.js';
import { emptyStream } from '../tasks/chunks.js';
import type { StepMeta, TaskFactory } from './types.js';

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

/**
 * A speak-only step ("Thank you, goodbye!"): it never waits for the caller and adds no
 * key to the flow's result.
 *
 * @example
 * flow('survey').step('thanks', announce('Thanks for your time. Goodbye!'))
 */
export function announce(text: string, id?: string): TaskFactory<void> & { meta: StepMeta } {
  const factory = () => new AnnounceTask(text, id);
  return Object.assign(factory, { meta: { listens: false, handlesNoInput: true } });
}
