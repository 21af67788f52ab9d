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

/** The most audio kept for the line (a line longer than this is spoken through the TTS). */
const MAX_FRAMES = 400;

/** One session's acknowledgement line, with its audio prepared ahead. */
export class Acknowledgement {
  private frames: AudioFrame[] | undefined;

  constructor(
    private readonly session: voice.AgentSession,
    readonly text: string,
  ) {}

  /**
   * Synthesises the line's audio with the session's TTS (in the background; never throws).
   * The request is never cut short: closing a chunked stream while its request is in flight
   * makes upstream's plugins write into the closed stream and emit a non-recoverable
   * `tts_error` (which ends the process when no activity listens). A slow request just leaves
   * the line to the TTS until it is ready; a line too long to keep is read to its end and
   * dropped.
   */
  prepare(): void {
    const tts = this.session.tts;
    if (!tts) return;
    const frames: AudioFrame[] = [];
    let tooLong = false;
    let stream: ReturnType<typeof tts.synthesize>;
    // A failed request is also emitted as the TTS's `error` event: this background request
    // listens for it itself, so it is never an unhandled 'error' event (the session may not
    // be listening yet, or any more).
    const onError = () => {};
    tts.on('error', onError);
    try {
      stream = tts.synthesize(this.text);
    } catch {
      tts.off('error', onError);
      return;
    }
    void (async () => {
      try {
        for await (const audio of stream) {
          if (frames.length >= MAX_FRAMES) tooLong = true;
          else frames.push(audio.frame);
        }
        // Ready late (a loaded machine) is still ready: only the first answers miss it.
        if (!tooLong && frames.length > 0) this.frames = frames;
      } catch {
        // Spoken through the TTS each time instead.
      } finally {
        tts.off('error', onError);
      }
    })();
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
