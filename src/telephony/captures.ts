/**
 * The call's capture log, for the IVR kit's users (transfer summaries, call reports): every
 * capture records what it accepted there. It lives with the capture engine in ../tasks.
 */
export {
  type CaptureEntry,
  CaptureLog,
  capturesOf,
  MAX_CAPTURES,
  recordCapture,
} from '../tasks/captures.js';
