import { voice } from '@livekit/agents';
import { callOf } from '../core/call.js';
import type { TimerHandle } from '../core/clock.js';
import { TasklineError } from '../core/errors.js';
import { checkOptions, millis, type OptionTable } from '../core/options.js';
import { logCall } from './log.js';

/** Who picked up an outbound call. */
export type AnsweredBy = 'human' | 'machine' | 'unknown';

/** The answering-machine verdict, reduced to what a flow branches on. */
export interface AnsweringMachineResult {
  answeredBy: AnsweredBy;
  /** True for a voicemail greeting that takes a message (upstream's `machine-vm`). */
  canLeaveMessage: boolean;
  /** Upstream's category (human, machine-ivr, machine-vm, machine-unavailable, uncertain). */
  category: string;
  /** What the greeting said, when transcribed. */
  transcript: string;
  /** Why upstream settled on it (llm, short_greeting, no_speech_timeout, …). */
  reason: string;
}

/** Anything that settles one AMD verdict: upstream's `voice.AMD`, or a fake in tests. */
export interface AmdSource {
  execute(): Promise<voice.AMDPredictionEvent>;
  aclose?(): Promise<void>;
}

/** Options for {@link detectAnsweringMachine}. */
export interface DetectAnsweringMachineOptions {
  /** The detector; default `new voice.AMD(session, amd)`. */
  detector?: AmdSource;
  /** Options for upstream's AMD when no detector is given. */
  amd?: voice.AMDOptions;
  /** Upper bound on the wait, on the call's clock: 1,000 to 120,000 ms (default 30,000 ms). */
  timeoutMs?: number;
}

/** The wait of {@link DetectAnsweringMachineOptions}, with its accepted range and default. */
const AMD_WAIT = {
  timeoutMs: { range: millis(1_000, 120_000), default: 30_000 },
} as const satisfies OptionTable;

/** Maps an upstream AMD prediction to {@link AnsweringMachineResult}. */
export function toAnsweringMachineResult(ev: voice.AMDPredictionEvent): AnsweringMachineResult {
  const category = String(ev.category);
  const answeredBy: AnsweredBy =
    category === voice.AMDCategory.HUMAN ? 'human' : ev.isMachine ? 'machine' : 'unknown';
  return {
    answeredBy,
    canLeaveMessage: category === voice.AMDCategory.MACHINE_VM,
    category,
    transcript: ev.transcript,
    reason: ev.reason,
  };
}

/**
 * Runs answering-machine detection (upstream `voice.AMD`) on an outbound call and resolves
 * `'human' | 'machine' | 'unknown'`. Bounded: a hang-up, a detector error or `timeoutMs`
 * resolve `unknown` with the reason instead of throwing. A `timeoutMs` outside its range is
 * refused (`invalid_argument`) before detection starts.
 */
export async function detectAnsweringMachine(
  session: voice.AgentSession,
  options: DetectAnsweringMachineOptions = {},
): Promise<AnsweringMachineResult> {
  const { timeoutMs } = checkOptions(AMD_WAIT, options, { owner: 'detectAnsweringMachine' });
  const call = callOf(session);
  const unknown = (reason: string): AnsweringMachineResult => ({
    answeredBy: 'unknown',
    canLeaveMessage: false,
    category: voice.AMDCategory.UNCERTAIN,
    transcript: '',
    reason,
  });
  if (call.hungUp) return unknown('hangup');
  const detector = options.detector ?? new voice.AMD(session, options.amd);
  // Detection listens to whoever answered: the call waits on the far end meanwhile.
  const release = call.waitForCaller();
  let timer: TimerHandle | undefined;
  let offHangup: (() => void) | undefined;
  const stop = new Promise<AnsweringMachineResult>((resolve) => {
    timer = call.clock.setTimer(timeoutMs, () => resolve(unknown('timeout')));
    offHangup = call.on('hangup', () => resolve(unknown('hangup')));
  });
  try {
    const result = await Promise.race([
      detector
        .execute()
        .then(toAnsweringMachineResult, (error: unknown) =>
          unknown(`detector failed: ${error instanceof Error ? error.message : String(error)}`),
        ),
      stop,
    ]);
    logCall(call, 'info', `answered by ${result.answeredBy}`, {
      category: result.category,
      reason: result.reason,
    });
    return result;
  } finally {
    release();
    timer?.cancel();
    offHangup?.();
    if (!options.detector) await detector.aclose?.().catch(() => undefined);
  }
}

/** Fills `{name}` placeholders; a missing variable is a TasklineError, not a silent gap. */
export function renderTemplate(
  template: string,
  vars: Readonly<Record<string, string | number>>,
): string {
  return template.replace(/\{(\w+)\}/g, (_m, key: string) => {
    const v = vars[key];
    if (v === undefined) {
      throw new TasklineError(
        'invalid_argument',
        `The voicemail template uses {${key}} but no value was given for it.`,
      );
    }
    return String(v);
  });
}
