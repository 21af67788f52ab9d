/**
 * Telephony — taskline's IVR kit: inbound DTMF from a LiveKit room, `collectDigits`, `menu`,
 * cold and warm transfer, calling out (`callOut`: dial with a typed outcome, who answered),
 * voicemail after the beep, far-end IVR navigation (`navigateIvr`), ending the call, the
 * per-call capture log, and PII masking for logs. Import it as `taskline/telephony`, or use
 * the `telephony` namespace of `taskline`.
 *
 * @packageDocumentation
 */

export { type DtmfDigit, type DtmfEvent, isDtmfDigit } from '../core/call.js';
export { clearSecrets, maskFields, maskPII, registerSecret } from '../core/pii.js';
export { type CallerIdSource, callerNumber } from './caller-id.js';
export { type CaptureEntry, CaptureLog, capturesOf } from './captures.js';
export {
  type CollectDigitsOptions,
  collectDigits,
  type DigitsDefinition,
  DigitsTask,
} from './digits.js';
export { type EndCallToolOptions, endCall, endCallTool } from './end-call.js';
export {
  BACK,
  type MenuConfig,
  type MenuDefinition,
  type MenuOption,
  type MenuOverrides,
  MenuTask,
  menu,
} from './menu.js';
export {
  type AnsweredCall,
  type CallOutOptions,
  type CallOutOutcome,
  callOut,
} from './outbound/call-out.js';
export {
  type Dialer,
  type DialRequest,
  type DialResult,
  RecordingDialer,
  type SipDialClient,
  SipDialer,
  type SipDialerOptions,
} from './outbound/dialer.js';
export {
  FarEnd,
  type FarEndEvents,
  farEndOf,
  type SoundHeard,
  type ToneHeard,
} from './outbound/far-end.js';
export { type GreetingKind, type GreetingReading, readGreeting } from './outbound/greeting.js';
export {
  type DtmfRoom,
  dtmfCode,
  type KeySender,
  RecordingKeySender,
  type RoomKeySenderOptions,
  roomKeySender,
} from './outbound/key-sender.js';
export {
  type IvrAnswer,
  type IvrGoal,
  type IvrOutcome,
  type IvrStep,
  type NavigateIvrOptions,
  navigateIvr,
  type StuckReason,
  type TextMatcher,
} from './outbound/navigator.js';
export {
  type InputRequest,
  type MenuChoice,
  type PromptReading,
  readPrompt,
} from './outbound/prompt.js';
export { promptSimilarity } from './outbound/similarity.js';
export {
  type DialFailure,
  type DialFailureStatus,
  dialFailureFromError,
  dialFailureFromSip,
} from './outbound/sip-status.js';
export {
  ToneDetector,
  type ToneDetectorOptions,
  type ToneEvent,
  type ToneWindow,
} from './outbound/tone.js';
export {
  type BeepOptions,
  leaveVoicemail,
  type VoicemailOptions,
  type VoicemailResult,
} from './outbound/voicemail-drop.js';
export {
  type BindRoomOptions,
  bindRoom,
  type ParticipantLike,
  type RoomLike,
  type WaitForCallerOptions,
  waitForCaller,
} from './room.js';
export {
  ColdSipTransferer,
  type ColdSipTransfererOptions,
  type SipTransferClient,
} from './sip-transfer.js';
export { type DtmfStreamOptions, dtmfStream } from './stream.js';
export {
  RecordingTransferer,
  type TransferCallOptions,
  type Transferer,
  type TransferMode,
  type TransferRequest,
  type TransferResult,
  transferCall,
  transferOnExhausted,
} from './transfer.js';
export {
  type AmdSource,
  type AnsweredBy,
  type AnsweringMachineResult,
  type DetectAnsweringMachineOptions,
  detectAnsweringMachine,
  renderTemplate,
} from './voicemail.js';
export { WarmTransferer, type WarmTransfererOptions } from './warm-transfer.js';
