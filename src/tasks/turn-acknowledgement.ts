/**
 * The short line ("Okay.") the agent says the moment a caller's answer is complete, while
 * the caller's turn is still open: it answers at once, and anything the caller adds while
 * it plays ("yes … but only after six", "five… no, six") stops it (upstream's interruption)
 * and joins the same utterance, so the capture parses the whole of it. The line's audio is
 * synthesised once per session, ahead of the first answer, so saying it costs no TTS
 * round trip; until that audio is ready the session's TTS speaks it.
 */
import { ReadableStream } from 'node:stream/web';
import type { voice } from '@livekit/agents';
import type { AudioFrame } from '@livekit/rtc-node';

/** Longest wait for the line's audio to be synthesised ahead of time. */
const PREPARE_TIMEOUT_MS = 5_000;
/** The most audio kept for the line (a line longer than this is spoken through the TTS). */
const MAX_FRAMES = 400;

/** One session's acknowledgement line, with its audio prepared ahead. */
export class Acknowledgement {
  private frames: AudioFrame[] | undefined;

  constructor(
    private readonly session: voice.AgentSession,
    readonly text: string,
  ) {}

  /** Synthesises the line's audio with the session's TTS (in the background; never throws). */
  prepare(): void {
    const tts = this.session.tts;
    if (!tts) return;
    const frames: AudioFrame[] = [];
    let timer: NodeJS.Timeout | undefined;
    const stream = tts.synthesize(this.text);
    const read = (async () => {
      for await (const audio of stream) {
        frames.push(audio.frame);
        if (frames.length > MAX_FRAMES) throw new Error('acknowledgement too long to keep');
      }
    })();
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), PREPARE_TIMEOUT_MS);
    });
    Promise.race([read, limit])
      .then(() => {
        if (frames.length > 0) this.frames = frames;
      })
      .catch(() => {
        // Spoken through the TTS each time instead.
        try {
          stream.close();
        } catch {
          // already closed
        }
      })
      .finally(() => clearTimeout(timer));
  }

  /** True once the line's audio is ready to play without a TTS request. */
  get prepared(): boolean {
    return this.frames !== undefined;
  }

  /** Says the line (interruptible, kept out of the model's context). */
  say(): voice.SpeechHandle {
    const frames = this.frames;
    const audio = frames
      ? new ReadableStream<AudioFrame>({
          start(controller) {
            for (const frame of frames) controller.enqueue(frame);
            controller.close();
          },
        })
      : undefined;
    return this.session.say(this.text, {
      ...(audio ? { audio } : {}),
      allowInterruptions: true,
      addToChatCtx: false,
    });
  }
}
