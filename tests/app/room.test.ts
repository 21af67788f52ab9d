import { fileURLToPath } from 'node:url';
import { isAgent, JobProcess, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import assistantRoom from '../../examples/assistant/room.js';
import callback from '../../examples/callback/index.js';
import callbackRoom from '../../examples/callback/room.js';
import bankRoom from '../../examples/ivr-bank/room.js';
import pharmacyRoom from '../../examples/pharmacy/room.js';
import surveyRoom from '../../examples/survey/room.js';
import { missingRoomPlugins, roomAgent } from '../../src/app/room.js';
import { TURN_TIMING } from '../../src/tasks/turn-detector.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';

describe('roomAgent', () => {
  it('turns each example into a LiveKit agent definition', () => {
    for (const entry of [assistantRoom, callbackRoom, bankRoom, surveyRoom, pharmacyRoom]) {
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

describe('a room worker without the speech plugins', () => {
  it('refuses to start before it registers: missing_dependency at error level, exit 1', async () => {
    const { spawnSync } = await import('node:child_process');
    const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
    const env: NodeJS.ProcessEnv = { ...process.env, LIVEKIT_URL: 'ws://127.0.0.1:9' };
    delete env.LOG_LEVEL;
    const r = spawnSync(
      process.execPath,
      [
        '--require',
        `${fixtures}hide-room-plugins.cjs`,
        '--import',
        'tsx',
        `${fixtures}room-worker.ts`,
        'start',
      ],
      { env, encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      'taskline: error: The packages "@livekit/agents-plugin-openai" and "@livekit/agents-plugin-silero" are needed for speech and voice activity detection in a room (roomAgent without createSession) but not installed. Install them in your app: npm install @livekit/agents-plugin-openai@"^1.9.0" @livekit/agents-plugin-silero@"^1.9.0"',
    );
    expect(r.stderr).not.toContain('process exited before initializing');
    expect(r.stdout).not.toMatch(/registered worker/i);
  });

  it('names only the plugin that is missing, and nothing when sessions come from createSession', () => {
    expect(missingRoomPlugins((pkg) => pkg !== '@livekit/agents-plugin-silero')).toEqual([
      '@livekit/agents-plugin-silero',
    ]);
    expect(missingRoomPlugins()).toEqual([]);
  });
});
