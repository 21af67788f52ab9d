import type { voice } from '@livekit/agents';
import { type CallContext, callOf } from '../core/call.js';
import { logLine } from '../core/log.js';
import { maskValue } from '../core/pii.js';
import type { Outcome } from '../outcome.js';

/** One value captured during a call, in the form that may be shown or spoken. */
export interface CaptureEntry {
  /** The task that captured it ("pin", "main_menu"). */
  name: string;
  /** What may be shown: the value, its label, or "****" when masked. */
  display: string;
  /** True when the real value is a secret and `display` hides it. */
  masked: boolean;
  /** Call clock time of the capture. */
  at: number;
}

/** Most entries one call keeps; the oldest are dropped first. */
export const MAX_CAPTURES = 200;

/**
 * What a call has captured so far, safe to show: every capture (typed tasks, digits, menus)
 * records the value it accepted here (masked ones only as "****"), so a transfer summary or a
 * report after a hang-up still has it.
 */
export class CaptureLog {
  private readonly items: CaptureEntry[] = [];

  /** Records a value; with `masked`, only its masked form is kept. */
  record(name: string, value: string, options: { masked?: boolean; at?: number } = {}): void {
    const masked = options.masked === true;
    this.items.push({
      name,
      display: masked ? maskValue(value) : value,
      masked,
      at: options.at ?? Date.now(),
    });
    if (this.items.length > MAX_CAPTURES) this.items.shift();
  }

  /** Everything recorded, oldest first. */
  get entries(): readonly CaptureEntry[] {
    return this.items;
  }

  /** The latest entry for `name`. */
  get(name: string): CaptureEntry | undefined {
    return this.items.findLast((e) => e.name === name);
  }

  /** One line for a human agent: "main menu: Balance; pin: ****" (latest value per name). */
  describe(): string {
    const latest = new Map<string, string>();
    for (const e of this.items) {
      latest.delete(e.name);
      latest.set(e.name, e.display);
    }
    return [...latest]
      .map(([name, display]) => `${name.replace(/_/g, ' ')}: ${display}`)
      .join('; ');
  }
}

const logs = new WeakMap<voice.AgentSession, CaptureLog>();

/** The capture log of a session's call (created on first use). */
export function capturesOf(session: voice.AgentSession): CaptureLog {
  let captures = logs.get(session);
  if (!captures) {
    captures = new CaptureLog();
    logs.set(session, captures);
  }
  return captures;
}

/** Records a capture on the session's call, stamped with the call's clock. */
export function recordCapture(
  session: voice.AgentSession,
  name: string,
  value: string,
  options: { masked?: boolean } = {},
): void {
  capturesOf(session).record(name, value, { ...options, at: callOf(session).clock.now() });
}

/**
 * What a capture leaves behind when it ends: a log line ("pin ended: ok", reasons and masked
 * values masked) and, for an accepted value, an entry in the call's capture log in the form
 * `display` gives it (masked when the capture is).
 */
export function noteEnd<T>(
  session: voice.AgentSession | undefined,
  call: CallContext | undefined,
  task: { name: string; masked?: boolean; logComponent?: string },
  outcome: Outcome<T>,
  display: (value: T) => string,
): void {
  const ok = outcome.status === 'ok';
  logLine(task.logComponent ?? 'taskline.tasks', 'info', `${task.name} ended: ${outcome.status}`, {
    task: task.name,
    status: outcome.status,
    attempts: outcome.attempts,
    reason: ok ? undefined : outcome.reason,
    modality: ok ? outcome.modality : undefined,
    callId: call?.callId,
  });
  if (outcome.status === 'ok' && session) {
    recordCapture(session, task.name, display(outcome.value), { masked: task.masked });
  }
}
