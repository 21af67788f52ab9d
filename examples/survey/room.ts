/**
 * The survey in a LiveKit room (phone callers through LiveKit SIP, dispatched by name:
 * `taskline-survey`):
 *
 *   OPENAI_API_KEY=... LIVEKIT_URL=... LIVEKIT_API_KEY=... LIVEKIT_API_SECRET=... \
 *     npx tsx examples/survey/room.ts start      # production worker; development: see the README
 *
 * Answers are checkpointed in SQLite (TASKLINE_CHECKPOINTS, default
 * .taskline/checkpoints.db) under the caller's number when their trunk presents a valid one
 * (E.164), so a dropped call resumes where it stopped; a withheld or anonymous caller is not
 * checkpointed and always starts fresh. The call ends after the last step.
 */
import { cli } from '@livekit/agents';
import { type CallModule, type CallSetup, defineCallModule } from 'taskline';
import { isMainModule, type RoomAgentOptions, roomAgent, roomServerOptions } from 'taskline/app';
import { type CheckpointStore, DEFAULT_CHECKPOINT_PATH, openCheckpointStore } from 'taskline/flows';
import { endCall } from 'taskline/telephony';
import { SurveyCall, type SurveyOutcome, surveyModule } from './index.js';

/** The name SIP dispatch rules dispatch this worker by. */
export const AGENT_NAME = 'taskline-survey';

/**
 * The checkpoint key of a call: the caller's verified number, so a caller who dials back
 * resumes. None for anyone else: their call is not checkpointed at all (nobody could
 * resume it, and a withheld number must never key a shared checkpoint).
 */
export function resumeKey(setup: CallSetup | undefined): string | undefined {
  return setup?.callerNumber ? `tel:${setup.callerNumber}` : undefined;
}

/** The survey agent of a room call: runs the flow, then ends the call. */
export class SurveyRoomCall extends SurveyCall {
  override async onEnter(): Promise<void> {
    try {
      await super.onEnter();
    } finally {
      await endCall(this.session);
    }
  }
}

/** The survey module for rooms: resumable per verified caller number in `checkpoints`. */
export function surveyRoomModule(checkpoints: CheckpointStore): CallModule<SurveyOutcome> {
  return defineCallModule<SurveyOutcome>({
    ...surveyModule,
    createCall(setup) {
      const callId = resumeKey(setup);
      const agent = new SurveyRoomCall(callId ? { checkpoints, callId } : {});
      return { agent, result: () => agent.outcome };
    },
  });
}

let store: Promise<CheckpointStore> | undefined;

/** The worker process's checkpoint store, opened on the first call. */
function processStore(): Promise<CheckpointStore> {
  store ??= openCheckpointStore({
    kind: 'sqlite',
    path: process.env.TASKLINE_CHECKPOINTS ?? DEFAULT_CHECKPOINT_PATH,
  });
  return store;
}

/** The survey's room entry; tests pass their store and a text session. */
export function surveyRoomAgent(
  options: RoomAgentOptions & { checkpoints?: () => Promise<CheckpointStore> } = {},
) {
  const { checkpoints = processStore, ...roomOptions } = options;
  return roomAgent(async () => surveyRoomModule(await checkpoints()), roomOptions);
}

/** The LiveKit worker entry: one survey call per room. */
export default surveyRoomAgent();

/** The worker's options: this file's default export, dispatched by name only. */
export const serverOptions = () => roomServerOptions(import.meta.url, { agentName: AGENT_NAME });

if (isMainModule(import.meta.url)) cli.runApp(serverOptions());
