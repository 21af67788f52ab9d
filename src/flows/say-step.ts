/**
 * A speak-only step (an `announce`) said by the flow itself: one more turn of the agent that
 * runs the flow, with no task switch for one sentence (a switch pauses one activity and starts
 * another, twice, before the next question can be asked).
 */
import type { voice } from '@livekit/agents';
import type { CallContext } from '../core/call.js';
import type { Outcome } from '../outcome.js';
import { isSessionClosing } from '../upstream/internals.js';

/** What saying a line needs of the running flow. */
export interface SayStepRun {
  readonly session: voice.AgentSession;
  readonly call: CallContext;
  /** The step's own bound (`timeoutMs`); the line is cut when it passes. */
  readonly timeoutMs: number | undefined;
}

/**
 * Runs `before` (the flow's greeting), then says `lines` in turn and waits until they have
 * played (or were interrupted by the caller, as any spoken line may be). The step ends `ok`, `timeout` when its bound passed first, or
 * `hangup`/`cancelled` when the call ended under it.
 */
export async function saySteps(
  run: SayStepRun,
  lines: readonly string[],
  before?: () => Promise<void>,
): Promise<Outcome<void>> {
  let timedOut = false;
  let speaking: voice.SpeechHandle | undefined;
  const timer =
    run.timeoutMs === undefined
      ? undefined
      : run.call.clock.setTimer(run.timeoutMs, () => {
          timedOut = true;
          speaking?.interrupt(true);
        });
  try {
    await before?.();
    for (const line of lines) {
      if (timedOut || run.call.hungUp) break;
      speaking = run.session.say(line);
      await speaking.waitForPlayout();
    }
  } catch (error) {
    const hungUp = run.call.hungUp;
    return {
      status: hungUp ? 'hangup' : 'cancelled',
      attempts: 0,
      reason: hungUp?.reason ?? (error instanceof Error ? error.message : String(error)),
    };
  } finally {
    timer?.cancel();
  }
  // A line cut by the call ending was not heard; one that played whole was.
  const cut = speaking === undefined || speaking.interrupted;
  const hungUp = run.call.hungUp;
  if (hungUp && cut) return { status: 'hangup', attempts: 0, reason: hungUp.reason };
  if (cut && isSessionClosing(run.session)) {
    return { status: 'cancelled', attempts: 0, reason: 'the session closed during the line' };
  }
  if (timedOut) {
    return { status: 'timeout', attempts: 0, reason: `no result within ${run.timeoutMs} ms` };
  }
  return { status: 'ok', value: undefined, attempts: 1 };
}
