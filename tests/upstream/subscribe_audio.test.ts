// Pins the upstream internal taskline's far-end audio reader relies on
// (src/telephony/outbound/far-end.ts): `AgentSession._subscribeAudioStream()` returns a branch
// of the running activity's input audio — every frame the session's audio input delivers,
// unchanged — and an inline task runs in a new activity whose audio is a new branch. If this
// test fails after an upgrade, the beep and hold detection of outbound calls hear nothing.
import { ReadableStream, type ReadableStreamDefaultController } from 'node:stream/web';
import { voice } from '@livekit/agents';
import { AudioFrame } from '@livekit/rtc-node';
import { afterEach, describe, expect, it } from 'vitest';

class PushInput extends voice.AudioInput {
  private controller: ReadableStreamDefaultController<AudioFrame> | undefined;
  constructor() {
    super();
    this.multiStream.addInputStream(
      new ReadableStream<AudioFrame>({
        start: (c) => {
          this.controller = c;
        },
      }),
    );
  }
  push(value: number): void {
    const data = new Int16Array(160).fill(value);
    this.controller?.enqueue(new AudioFrame(data, 16_000, 1, 160));
  }
}

let session: voice.AgentSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

async function firstFrames(stream: ReadableStream<AudioFrame>, n: number): Promise<number[]> {
  const reader = stream.getReader();
  const out: number[] = [];
  while (out.length < n) {
    const { done, value } = await reader.read();
    if (done) break;
    out.push(value.data[0]!);
  }
  await reader.cancel();
  return out;
}

describe('AgentSession._subscribeAudioStream (upstream internal)', () => {
  it("is a branch of the running activity's input audio, frames unchanged", async () => {
    session = new voice.AgentSession({ llm: new voice.testing.FakeLLM([]) });
    const input = new PushInput();
    session.input.audio = input;
    await session.start({ agent: new voice.Agent({ instructions: 'x' }) });
    const branch = session._subscribeAudioStream();
    expect(branch).toBeDefined();
    const reading = firstFrames(branch!, 3);
    for (const v of [11, 22, 33]) input.push(v);
    expect(await reading).toEqual([11, 22, 33]);
  });

  it('gives an inline task its own branch, the task activity being `session._activity`', async () => {
    session = new voice.AgentSession({ llm: new voice.testing.FakeLLM([]) });
    const input = new PushInput();
    session.input.audio = input;
    let inTask: number[] | undefined;
    class Listen extends voice.AgentTask<void> {
      override async onEnter() {
        const s = this.session;
        expect(s._activity?.agent).toBe(this);
        const reading = firstFrames(s._subscribeAudioStream()!, 2);
        input.push(7);
        input.push(8);
        inTask = await reading;
        this.complete();
      }
    }
    class Parent extends voice.Agent {
      override async onEnter() {
        await new Listen({ instructions: 'x' }).run();
      }
    }
    await session.start({ agent: new Parent({ instructions: 'x' }) });
    for (let i = 0; i < 100 && inTask === undefined; i++) await new Promise((r) => setImmediate(r));
    expect(inTask).toEqual([7, 8]);
  });
});
