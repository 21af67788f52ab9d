/**
 * Telephony — taskline's IVR kit: inbound DTMF from a LiveKit room, `collectDigits`, `menu`,
 * cold and warm transfer, answering-machine detection and voicemail, ending the call, the
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
  leaveVoicemail,
  type VoicemailOptions,
} from './voicemail.js';
export { WarmTransferer, type WarmTransfererOptions } from './warm-transfer.js';
