/**
 * ivr-bank in a LiveKit room (phone callers arrive through LiveKit SIP), with OpenAI
 * speech-to-text, model and text-to-speech, and Silero voice activity detection.
 *
 *   export LIVEKIT_URL=wss://… LIVEKIT_API_KEY=… LIVEKIT_API_SECRET=… OPENAI_API_KEY=…
 *   npx tsx examples/ivr-bank/room.ts dev      # development worker (or: start)
 *
 * Keys pressed on the phone arrive as `RoomEvent.DtmfReceived` and reach the menu and the
 * PIN entry through `bindRoom`; "talk to someone" is a cold SIP transfer of the caller.
 */
import { fileURLToPath } from 'node:url';
import {
  cli,
  defineAgent,
  type JobContext,
  type JobProcess,
  ServerOptions,
  type VAD,
  voice,
} from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import * as silero from '@livekit/agents-plugin-silero';
import type { Room } from '@livekit/rtc-node';
import { bindRoom, ColdSipTransferer, type RoomLike, type Transferer } from 'taskline';
import { createBankCall } from './index.js';

/** Where the OpenAI plugins connect (the real API unless told otherwise, e.g. in tests). */
export interface OpenAIEndpoint {
  baseURL?: string;
  apiKey?: string;
}

/**
 * A voice session for the bank line: Silero VAD cuts the caller's speech into utterances,
 * each transcribed by OpenAI over HTTP; OpenAI also provides the model and the voice.
 */
export function createBankSession(vad: VAD, endpoint: OpenAIEndpoint = {}): voice.AgentSession {
  return new voice.AgentSession({
    vad,
    stt: new openai.STT({ model: 'gpt-4o-transcribe', useRealtime: false, ...endpoint }),
    llm: new openai.LLM({ model: 'gpt-4.1-mini', ...endpoint }),
    tts: new openai.TTS({ ...endpoint }),
  });
}

/**
 * Starts the bank call on `session` for the caller in `room`. The room binding comes
 * first, so the caller's hang-up reaches the running task before the session closes.
 * `ioRoom` is the real rtc-node Room for audio (omitted when testing on room events only).
 */
export async function startBankCall(
  session: voice.AgentSession,
  room: RoomLike,
  options: { callerIdentity?: string; transferer?: Transferer; ioRoom?: Room } = {},
) {
  bindRoom(session, room, { callerIdentity: options.callerIdentity });
  const call = createBankCall({ transferer: options.transferer });
  await session.start({ agent: call.agent, room: options.ioRoom });
  return call;
}

/** The LiveKit agent: prewarm loads Silero once per process; each job serves one caller. */
export default defineAgent({
  prewarm: async (proc: JobProcess) => {
    proc.userData.vad = await silero.VAD.load();
  },
  entry: async (ctx: JobContext) => {
    await ctx.connect();
    const caller = await ctx.waitForParticipant();
    const session = createBankSession(ctx.proc.userData.vad as VAD);
    // A finished call deletes the room, which hangs up the phone line.
    session.on(voice.AgentSessionEventTypes.Close, () => {
      ctx.deleteRoom().catch(() => undefined);
    });
    await startBankCall(session, ctx.room, {
      callerIdentity: caller.identity,
      ioRoom: ctx.room,
      transferer: new ColdSipTransferer({
        roomName: ctx.room.name ?? '',
        participantIdentity: caller.identity,
      }),
    });
  },
});

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  cli.runApp(new ServerOptions({ agent: fileURLToPath(import.meta.url) }));
}
