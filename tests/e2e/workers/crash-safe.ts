/**
 * A crash-safe survey as a real worker, for the guardian's e2e suite: examples/survey's room
 * agent checkpointed under the call's key (the room's sid, the same for every job dispatched
 * into the room) in the SQLite file at TASKLINE_CHECKPOINTS, shared by every worker of the
 * test; a job the guardian re-dispatched resumes the flow with one apology line
 * (`canResume`: only while the flow is unfinished). Each job keeps a lifeline to the guardian
 * at TASKLINE_GUARDIAN_URL (the room entry opens it). Speech and model: see session.ts.
 */
import { cli } from '@livekit/agents';
import type { SurveyOutcome } from '../../../examples/survey/index.js';
import { surveyFlow, surveyModule } from '../../../examples/survey/index.js';
import { SurveyRoomCall } from '../../../examples/survey/room.js';
import { hasUnfinishedFlow, resumeApology } from '../../../src/app/continuity.js';
import { type CallModule, defineCallModule } from '../../../src/app/module.js';
import { isMainModule, roomAgent } from '../../../src/app/room.js';
import { type CheckpointStore, openCheckpointStore } from '../../../src/flows/index.js';
import { e2eModule, e2eServerOptions, e2eSessionOptions } from './session.js';

/** The agent name the suite dispatches (and the guardian re-dispatches). */
export const CRASH_SAFE_AGENT = 'taskline-crash-safe';

function checkpointPath(): string {
  const path = process.env.TASKLINE_CHECKPOINTS;
  if (!path) throw new Error('TASKLINE_CHECKPOINTS is not set: start workers with the suite');
  return path;
}

/** The survey, checkpointed under the call's key and resumable after a crash. */
export function crashSafeSurvey(checkpoints: CheckpointStore): CallModule<SurveyOutcome> {
  return defineCallModule<SurveyOutcome>({
    ...surveyModule,
    name: 'crash-safe-survey',
    createCall(setup) {
      const agent = new SurveyRoomCall({
        checkpoints,
        ...(setup?.callKey ? { callId: setup.callKey } : {}),
        ...(setup?.resumed ? { resumeLine: resumeApology } : {}),
      });
      return { agent, result: () => agent.outcome };
    },
    canResume: (setup) =>
      hasUnfinishedFlow(checkpoints, { flow: surveyFlow.name, callId: setup.callKey }),
  });
}

export default roomAgent(
  async () =>
    e2eModule(
      crashSafeSurvey(await openCheckpointStore({ kind: 'sqlite', path: checkpointPath() })),
    ),
  e2eSessionOptions(surveyModule),
);

if (isMainModule(import.meta.url)) {
  cli.runApp(e2eServerOptions(import.meta.url, CRASH_SAFE_AGENT));
}
