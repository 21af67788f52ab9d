import { defineAgent, type JobContext, type JobProcess, voice } from '@livekit/agents';
import type { TTSVoices } from '@livekit/agents-plugin-openai';
import type { Room } from '@livekit/rtc-node';
import { attachCall } from '../core/call.js';
import type { CallModule } from './module.js';

/** Options for {@link roomAgent}. */
export interface RoomAgentOptions {
  /** OpenAI chat model (default `OPENAI_MODEL` or gpt-4o-mini). */
  model?: string;
  /** OpenAI TTS voice (default "alloy"). */
  voice?: TTSVoices;
  /** Runs after the session started in the room (e.g. bind DTMF: `bindRoom(session, room)`). */
  onSessionStarted?: (session: voice.AgentSession, room: Room) => void | Promise<void>;
}

/**
 * A LiveKit agent that answers each room with a fresh call of `module`: Silero VAD
 * (loaded once per worker process), OpenAI speech-to-text, chat model and text-to-speech,
 * and taskline's call context keyed by the room name. Export it as the default of the
 * worker file and start the worker with `cli.runApp` (`dev` / `start`).
 */
export function roomAgent(module: CallModule, options: RoomAgentOptions = {}) {
  return defineAgent({
    prewarm: async (proc: JobProcess) => {
      const silero = await import('@livekit/agents-plugin-silero');
      proc.userData.vad = await silero.VAD.load();
    },
    entry: async (ctx: JobContext) => {
      const openai = await import('@livekit/agents-plugin-openai');
      await ctx.connect();
      const session = new voice.AgentSession({
        vad: ctx.proc.userData.vad as voice.AgentSessionOptions['vad'],
        stt: new openai.STT(),
        llm: new openai.LLM({ model: options.model ?? process.env.OPENAI_MODEL ?? 'gpt-4o-mini' }),
        tts: new openai.TTS({ voice: options.voice ?? 'alloy' }),
      });
      attachCall(session, { callId: ctx.room.name || undefined });
      const call = module.createCall();
      await session.start({ agent: call.agent, room: ctx.room });
      await options.onSessionStarted?.(session, ctx.room);
    },
  });
}
