/**
 * The survey in a LiveKit room (or a SIP call routed to one):
 *
 *   OPENAI_API_KEY=... LIVEKIT_URL=... LIVEKIT_API_KEY=... LIVEKIT_API_SECRET=... \
 *     npx tsx examples/survey/room.ts dev
 *
 * Answers are checkpointed in SQLite (TASKLINE_CHECKPOINTS, default
 * .taskline/checkpoints.db) under the caller's phone number, so a dropped call that
 * dials back continues where it stopped.
 */
import { fileURLToPath } from 'node:url';
import {
  cli,
  defineAgent,
  type JobContext,
  type JobProcess,
  ServerOptions,
  voice,
} from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import * as silero from '@livekit/agents-plugin-silero';
import { RoomEvent } from '@livekit/rtc-node';
import { attachCall, DEFAULT_CHECKPOINT_PATH, openCheckpointStore } from 'taskline';
import { SurveyCall } from './index.js';

export default defineAgent({
  prewarm: async (proc: JobProcess) => {
    proc.userData.vad = await silero.VAD.load();
  },
  entry: async (ctx: JobContext) => {
    await ctx.connect();
    const caller = await ctx.waitForParticipant();
    const checkpoints = await openCheckpointStore({
      kind: 'sqlite',
      path: process.env.TASKLINE_CHECKPOINTS ?? DEFAULT_CHECKPOINT_PATH,
    });
    ctx.addShutdownCallback(() => checkpoints.close());

    const session = new voice.AgentSession({
      vad: ctx.proc.userData.vad as silero.VAD,
      stt: new openai.STT(),
      llm: new openai.LLM({ model: 'gpt-4o-mini' }),
      tts: new openai.TTS(),
    });
    // The same caller dialling back gets the same call id, so the survey resumes.
    const callId = caller.attributes['sip.phoneNumber'] ?? ctx.room.name ?? caller.identity;
    const call = attachCall(session, { callId, callerIdentity: caller.identity });
    ctx.room.on(RoomEvent.DtmfReceived, (_code, digit, participant) => {
      call.pushDtmf(digit, participant.identity);
    });
    ctx.room.on(RoomEvent.ParticipantDisconnected, (participant) => {
      if (participant.identity === caller.identity) call.hangup('caller left the room');
    });

    await session.start({ agent: new SurveyCall({ checkpoints }), room: ctx.room });
  },
});

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  cli.runApp(new ServerOptions({ agent: fileURLToPath(import.meta.url) }));
}
