// Pins what skipTranscriptWaitOnClose relies on: upstream 1.9's session close commits the
// caller's turn through AudioRecognition.commitUserTurn, which waits for a last transcript
// unless `lastFinalTranscriptTime` is recent; the session's private `closeImpl` runs first.
import { voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { skipTranscriptWaitOnClose } from '../../src/upstream/internals.js';

interface Recognition {
  lastFinalTranscriptTime: number;
  commitUserTurn: (audioDetached: boolean) => void;
}

function recognitionOf(session: voice.AgentSession): Recognition | undefined {
  const agent = session.currentAgent as unknown as {
    _agentActivity?: { audioRecognition?: Recognition };
  };
  return agent._agentActivity?.audioRecognition;
}

describe('upstream session close without audio (skipTranscriptWaitOnClose)', () => {
  it('commits the turn through a recogniser whose wait depends on lastFinalTranscriptTime', async () => {
    const session = new voice.AgentSession({ llm: new ScriptedLLM() });
    expect(skipTranscriptWaitOnClose(session)).toBe(true);
    await session.start({ agent: new voice.Agent({ id: 'a', instructions: 'a' }) });
    const recognition = recognitionOf(session);
    expect(recognition).toBeDefined();
    expect(typeof recognition!.lastFinalTranscriptTime).toBe('number');
    // The condition the wait is skipped on (compiled source of upstream's method).
    const source = Object.getPrototypeOf(recognition).commitUserTurn.toString();
    expect(source).toMatch(/lastFinalTranscriptTime/);
    expect(source).toMatch(/delayDuration/);
    const before = Date.now();
    const seen: number[] = [];
    const commit = recognition!.commitUserTurn;
    recognition!.commitUserTurn = function (this: Recognition, audioDetached: boolean) {
      seen.push(this.lastFinalTranscriptTime);
      return commit.call(this, audioDetached);
    };
    const closed = new Promise<void>((resolve) =>
      session.once(voice.AgentSessionEventTypes.Close, () => resolve()),
    );
    await session.close();
    await closed;
    // The close committed the turn once, with a transcript marked as just heard when the close
    // began: upstream had no transcript to wait for.
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeGreaterThanOrEqual(before);
  });
});
