/**
 * App — how a bot becomes a running call: `defineCallModule` (one file that `taskline run`,
 * `taskline test` and a LiveKit room all load), and the room entry (`roomAgent`,
 * `roomServerOptions`, `isMainModule`) with its room-aware transferer. Import it as
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
  type RoomModule,
  type RoomServerOptions,
  RoomTransferer,
  type RoomTransferOptions,
  roomAgent,
  roomServerOptions,
} from './room.js';
