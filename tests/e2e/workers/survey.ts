/**
 * examples/survey as a real worker (see session.ts for what differs from room.ts): the
 * room's own survey module (resumable per verified caller number, ends the call after the
 * last step) over the SQLite checkpoint store at TASKLINE_CHECKPOINTS, as room.ts opens it.
 */
import { cli } from '@livekit/agents';
import { surveyModule } from '../../../examples/survey/index.js';
import { AGENT_NAME, surveyRoomModule } from '../../../examples/survey/room.js';
import { isMainModule, roomAgent } from '../../../src/app/room.js';
import { DEFAULT_CHECKPOINT_PATH, openCheckpointStore } from '../../../src/flows/index.js';
import { e2eModule, e2eServerOptions, e2eSessionOptions } from './session.js';

export default roomAgent(
  async () =>
    e2eModule(
      surveyRoomModule(
        await openCheckpointStore({
          kind: 'sqlite',
          path: process.env.TASKLINE_CHECKPOINTS ?? DEFAULT_CHECKPOINT_PATH,
        }),
      ),
    ),
  e2eSessionOptions(surveyModule),
);

if (isMainModule(import.meta.url)) cli.runApp(e2eServerOptions(import.meta.url, AGENT_NAME));
