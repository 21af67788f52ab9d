import { defineAgent, type JobContext, type JobProcess, voice } from '@livekit/agents';
import type { TTSVoices } from '@livekit/agents-plugin-openai';
import type { Room } from '@livekit/rtc-node';
import { attachCall } from '../core/call.js';
import { loadOptional } from '../core/optional.js';
import { bindRoom } from '../telephony/room.js';
import type { CallModule } from './module.js';

/** Options for {@link roomAgent}. */
export interface RoomAgentOptions {
  /** OpenAI chat model (default `OPENAI_MODEL` or gpt-4o-mini). */
  model?: string;
  /** OpenAI TTS voice (default "alloy"). */
  voice?: TTSVoices;
  /** Delete the room when the call ends, which hangs up a phone (SIP) caller. Default true. */
  endRoomOnClose?: boolean;
  /** Runs after the session started in the room. */
  onSessionStarted?: (session: voice.AgentSession, room: Room) => void | Promise<void>;
}

/**
 * A LiveKit agent that answers each room with a fresh call of `module`: it waits for the
 * caller, binds their key presses and hang-up to the call (`bindRoom`), and talks through
 * Silero VAD (loaded once per worker process, offline), OpenAI transcription over HTTP,
 * the chat model and text-to-speech. Export it as the worker file's default and start the
 * worker with `cli.runApp` (`dev` / `start`).
 */
export function roomAgent(module: CallModule, options: RoomAgentOptions = {}) {
  return defineAgent({
    prewarm: async (proc: JobProcess) => {
      const silero = await loadOptional(
        () => import('@livekit/agents-plugin-silero'),
        '@livekit/agents-plugin-silero',
        'voice activity detection in a room (roomAgent)',
      );
      proc.userData.vad = await silero.VAD.load();
    },
    entry: async (ctx: JobContext) => {
      const openai = await loadOptional(
        () => import('@livekit/agents-plugin-openai'),
        '@livekit/agents-plugin-openai',
        'speech and the model in a room (roomAgent)',
      );
      await ctx.connect();
      const caller = await ctx.waitForParticipant();
      const session = new voice.AgentSession({
        vad: ctx.proc.userData.vad as voice.AgentSessionOptions['vad'],
        stt: new openai.STT({ model: 'gpt-4o-transcribe', useRealtime: false }),
        llm: new openai.LLM({ model: options.model ?? process.env.OPENAI_MODEL ?? 'gpt-4o-mini' }),
        tts: new openai.TTS({ voice: options.voice ?? 'alloy' }),
      });
      attachCall(session, { callId: ctx.room.name || undefined, callerIdentity: caller.identity });
      // Bound before start, so a hang-up reaches the running task before the session closes.
      bindRoom(session, ctx.room, { callerIdentity: caller.identity });
      if (options.endRoomOnClose !== false) {
        session.on(voice.AgentSessionEventTypes.Close, () => {
          ctx.deleteRoom().catch(() => undefined);
        });
      }
      const call = module.createCall();
      await session.start({ agent: call.agent, room: ctx.room });
      await options.onSessionStarted?.(session, ctx.room);
    },
  });
}
