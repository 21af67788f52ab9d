/**
 * The pharmacy line in a LiveKit room (phone callers through LiveKit SIP, dispatched by name:
 * `taskline-pharmacy`):
 *
 *   OPENAI_API_KEY=... LIVEKIT_URL=... LIVEKIT_API_KEY=... LIVEKIT_API_SECRET=... \
 *     npx tsx examples/pharmacy/room.ts start
 *
 * The refill is checkpointed in SQLite (TASKLINE_CHECKPOINTS, default
 * .taskline/checkpoints.db) under the caller's verified number, so a dropped call resumes at
 * the question it stopped on; a withheld number is not checkpointed and starts fresh.
 */
import { cli } from '@livekit/agents';
import { defineCallModule } from 'taskline';
import { isMainModule, roomAgent, roomServerOptions } from 'taskline/app';
import { type CheckpointStore, DEFAULT_CHECKPOINT_PATH, openCheckpointStore } from 'taskline/flows';
import { createPharmacyCall, pharmacy } from './index.js';

/** The name SIP dispatch rules dispatch this worker by. */
export const AGENT_NAME = 'taskline-pharmacy';

let store: Promise<CheckpointStore> | undefined;

/** The worker process's SQLite store, opened by the first call that needs it. */
function processStore(): Promise<CheckpointStore> {
  store ??= openCheckpointStore({
    kind: 'sqlite',
    path: process.env.TASKLINE_CHECKPOINTS ?? DEFAULT_CHECKPOINT_PATH,
  });
  return store;
}

export default roomAgent(
  defineCallModule({
    ...pharmacy,
    createCall: (setup) =>
      createPharmacyCall({
        transferer: setup?.transferer,
        ...(setup?.callerNumber
          ? { checkpoints: { open: processStore, callId: `tel:${setup.callerNumber}` } }
          : {}),
      }),
  }),
);

/** The worker's options: this file's default export, dispatched by name only. */
export const serverOptions = () => roomServerOptions(import.meta.url, { agentName: AGENT_NAME });

if (isMainModule(import.meta.url)) cli.runApp(serverOptions());
