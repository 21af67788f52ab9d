/**
 * taskline's IVR kit: inbound DTMF from a LiveKit room, collectDigits, menu, transfer,
 * answering-machine detection and voicemail, ending the call, and PII masking.
 *
 * @packageDocumentation
 */

export * from '../core/pii.js';
export * from './caller-id.js';
export * from './captures.js';
export * from './digits.js';
export * from './end-call.js';
export {
  ESCALATE_TOOL,
  type FailureKind,
  KeypadTask,
  type KeypadTaskConfig,
} from './keypad-task.js';
export { checkKey, dtmfFromEvent, spokenKey } from './keys.js';
export * from './log.js';
export * from './menu.js';
export * from './room.js';
export * from './sip-address.js';
export * from './sip-transfer.js';
export * from './stream.js';
export * from './transfer.js';
export * from './voicemail.js';
export * from './warm-transfer.js';
