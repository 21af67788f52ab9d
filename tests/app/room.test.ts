import { isAgent, JobProcess, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import assistantRoom from '../../examples/assistant/room.js';
import callback from '../../examples/callback/index.js';
import callbackRoom from '../../examples/callback/room.js';
import bankRoom from '../../examples/ivr-bank/room.js';
import surveyRoom from '../../examples/survey/room.js';
import { roomAgent } from '../../src/app/room.js';
import { TURN_TIMING } from '../../src/tasks/turn-detector.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';

describe('roomAgent', () => {
  it('turns each example into a LiveKit agent definition', () => {
    for (const entry of [assistantRoom, callbackRoom, bankRoom, surveyRoom]) {
      expect(isAgent(entry)).toBe(true);
      expect(typeof entry.entry).toBe('function');
    }
  });

  it('loads Silero VAD once per worker process in prewarm (offline: the model ships inside its package)', async () => {
    const proc = new JobProcess();
    await callbackRoom.prewarm?.(proc);
    expect((proc.userData.vad as { label: string }).label).toBe('silero.VAD');
    // taskline's short end-of-speech silence (task-aware turns), unless the app opts out.
    expect((proc.userData.vad as { minSilenceDuration: number }).minSilenceDuration).toBe(
      TURN_TIMING.vadMinSilenceMs,
    );
    const upstream = new JobProcess();
    await roomAgent(callback, { turns: false }).prewarm?.(upstream);
    expect((upstream.userData.vad as { minSilenceDuration: number }).minSilenceDuration).toBe(550);
  });

  it('skips the VAD when the sessions come from createSession', async () => {
    const proc = new JobProcess();
    await roomAgent(callback, {
      createSession: () => new voice.AgentSession({ llm: new ScriptedLLM() }),
    }).prewarm?.(proc);
    expect(proc.userData).toEqual({});
  });
});
