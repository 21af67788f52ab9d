/**
 * App — how a bot becomes a running call: `defineCallModule` (one file that `taskline run`,
 * `taskline test` and a LiveKit room all load), and the room entry (`roomAgent`,
 * `roomServerOptions`, `isMainModule`) with its room-aware transferer, and what lets a call
 * outlive its worker (the guardian, `hasUnfinishedFlow`, `resumeApology`). Import it as
 * `taskline/app`, or use the `app` namespace of `taskline`.
 *
 * @packageDocumentation
 */

export {
  type CallEvent,
  CallReporter,
  type CallReporterOptions,
  reportCalls,
} from './call-reporter.js';
export {
  DEFAULT_UNRESUMABLE_LINE,
  GUARDIAN_URL_ENV,
  hasUnfinishedFlow,
  resumeApology,
} from './continuity.js';
export type { GuardianDecision } from './guardian/guardian.js';
export type { Redispatch } from './guardian/protocol.js';
export {
  type RunningGuardian,
  type StartGuardianOptions,
  startGuardian,
} from './guardian/server.js';
export {
  type CallDemo,
  type CallerAction,
  type CallerTurn,
  type CallInstance,
  type CallModule,
  type CallSetup,
  defineCallModule,
} from './module.js';
export {
  isMainModule,
  phoneLineOptions,
  type RoomAgentOptions,
  RoomDialer,
  type RoomDialOptions,
  type RoomModule,
  type RoomServerOptions,
  RoomTransferer,
  type RoomTransferOptions,
  roomAgent,
  roomServerOptions,
} from './room.js';
