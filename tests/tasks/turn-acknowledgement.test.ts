// The acknowledgement's audio is prepared ahead with the session's TTS. A slow TTS (a loaded
// machine) must not be cut off: closing a chunked stream while its request is in flight makes
// upstream's plugins write into the closed stream and emit a non-recoverable tts_error, which
// ended audio-mode worker processes when no activity listened.
import { type APIConnectOptions, tts, type voice } from '@livekit/agents';
import { AudioFrame } from '@livekit/rtc-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Acknowledgement } from '../../src/tasks/turn-acknowledgement.js';

/** A TTS whose one request answers when the test says so, like the openai plugin's run(). */
class SlowTts extends tts.TTS {
  label = 'slow';
  answer!: () => void;
  constructor() {
    super(16_000, 1, { streaming: false });
  }
  synthesize(text: string, connOptions?: APIConnectOptions): tts.ChunkedStream {
    const answered = new Promise<void>((resolve) => {
      this.answer = resolve;
    });
    return new (class extends tts.ChunkedStream {
      label = 'slow';
      protected async run(): Promise<void> {
        await answered;
        const frame = new AudioFrame(new Int16Array(160), 16_000, 1, 160);
        this.queue.put({ requestId: 'r', segmentId: 's', frame, final: true });
        this.queue.close();
      }
    })(text, this, connOptions);
  }
  stream(): tts.SynthesizeStream {
    throw new Error('not used');
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the acknowledgement line', () => {
  it('a TTS slower than any wait is read to its end: no tts_error, the audio is kept', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const slow = new SlowTts();
    const errors: unknown[] = [];
    slow.on('error', (e) => errors.push(e));
    const ack = new Acknowledgement({ tts: slow } as unknown as voice.AgentSession, 'Okay.');
    ack.prepare();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(ack.prepared).toBe(false);
    slow.answer();
    await vi.waitFor(() => expect(ack.prepared).toBe(true));
    expect(errors).toEqual([]);
  });
});
