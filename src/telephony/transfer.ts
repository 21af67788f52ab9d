import { llm, type voice } from '@livekit/agents';
import { callOf } from '../core/call.js';
import { maskPII } from '../core/pii.js';
import { traceTransfer } from '../observability/transfer.js';
import type { FailedOutcome } from '../outcome.js';
import { capturesOf } from './captures.js';
import { logCall } from './log.js';

/** Cold: hand the call over blind. Warm: brief a human first, then connect them. */
export type TransferMode = 'cold' | 'warm';

/** What to transfer where, and what the human should hear about the call. */
export interface TransferRequest {
  /** Phone number ("+15550100"), "tel:" or "sip:" URI of the destination. */
  to: string;
  mode: TransferMode;
  /** What the human agent is told: why the caller is coming and what was captured. */
  summary: string;
  /**
   * The conversation so far (caller and bot lines, PII masked), for a human who is briefed
   * before taking the call. {@link transferCall} fills it from the session.
   */
  history?: llm.ChatContext;
}

/** How a transfer ended. */
export type TransferResult =
  | {
      ok: true;
      mode: TransferMode;
      to: string /** Identity of the human, when known. */;
      humanIdentity?: string;
    }
  | { ok: false; mode: TransferMode; to: string; reason: string };

/**
 * One interface for every way a call leaves the bot: cold SIP transfer, warm transfer,
 * or a recording fake in tests. Implementations never throw for an expected failure
 * (busy line, declined): they return `{ ok: false, reason }`.
 */
export interface Transferer {
  transfer(request: TransferRequest): Promise<TransferResult>;
}

/**
 * A transferer that records every request and succeeds (or answers with `respond`):
 * for tests, the README demo and `taskline run`.
 */
export class RecordingTransferer implements Transferer {
  /** Every request, in order (destination, mode and summary; the history is left out). */
  readonly requests: TransferRequest[] = [];
  private readonly respond: ((request: TransferRequest) => TransferResult) | undefined;

  constructor(respond?: (request: TransferRequest) => TransferResult) {
    this.respond = respond;
  }

  async transfer(request: TransferRequest): Promise<TransferResult> {
    const { history: _history, ...recorded } = request;
    this.requests.push(recorded);
    return this.respond?.(request) ?? { ok: true, mode: request.mode, to: request.to };
  }
}

/** Options for {@link transferCall} and {@link transferOnExhausted}. */
export interface TransferCallOptions {
  to: string;
  /** Default 'cold'. */
  mode?: TransferMode;
  /** Why the caller is being transferred; captured values and the failure are appended. */
  summary: string | ((outcome?: FailedOutcome) => string);
  /** The call's session: adds its captured values to the summary and speaks `announce`. */
  session?: voice.AgentSession;
  /** Said to the caller before the transfer (needs `session`). */
  announce?: string;
}

const transfers = new WeakMap<voice.AgentSession, Promise<TransferResult>>();

/**
 * Runs one transfer of `session`'s caller and remembers it, so whoever ends the call
 * (the room entry) knows the caller was handed to a person and must not be hung up.
 * A transferer that throws is reported as `{ ok: false, reason }`.
 */
export function trackTransfer(
  session: voice.AgentSession,
  transferer: Transferer,
  request: TransferRequest,
): Promise<TransferResult> {
  const running = safeTransfer(transferer, request);
  transfers.set(session, running);
  return running;
}

function safeTransfer(transferer: Transferer, request: TransferRequest): Promise<TransferResult> {
  return Promise.resolve()
    .then(() => transferer.transfer(request))
    .catch(
      (error: unknown): TransferResult => ({
        ok: false,
        mode: request.mode,
        to: request.to,
        reason: error instanceof Error ? error.message : String(error),
      }),
    );
}

/**
 * The session's last transfer, once it has settled (undefined when none was attempted).
 * The room entry waits on this before deciding what happens to the room.
 */
export async function lastTransfer(
  session: voice.AgentSession,
): Promise<TransferResult | undefined> {
  return transfers.get(session);
}

/**
 * A transferer bound to one session: every transfer through it is remembered by
 * {@link trackTransfer}, however the bot calls it.
 */
export function sessionTransferer(session: voice.AgentSession, inner: Transferer): Transferer {
  return { transfer: (request) => trackTransfer(session, inner, request) };
}

/** The conversation so far as text messages only, PII masked: what a human is briefed on. */
export function maskedHistory(session: voice.AgentSession): llm.ChatContext {
  const out = llm.ChatContext.empty();
  for (const item of session.history.items) {
    if (item.type !== 'message' || (item.role !== 'user' && item.role !== 'assistant')) continue;
    const text = item.textContent;
    if (text) out.addMessage({ role: item.role, content: maskPII(text) });
  }
  return out;
}

/** Builds the summary a human agent hears: reason, captured values (masked stay masked), failure. */
export function transferSummary(options: TransferCallOptions, outcome?: FailedOutcome): string {
  const base = typeof options.summary === 'function' ? options.summary(outcome) : options.summary;
  const parts = [base.trim().replace(/[.]$/, '')];
  const captured = options.session ? capturesOf(options.session).describe() : '';
  if (captured) parts.push(`Captured so far: ${captured}`);
  if (outcome) parts.push(`The automated step ended: ${outcome.reason ?? outcome.status}`);
  return maskPII(`${parts.join('. ')}.`);
}

/**
 * Transfers the call now (e.g. when the caller asks for a person). Resolves a
 * `transferred` outcome, or `cancelled` with the reason when the transfer failed.
 */
export function transferCall(
  transferer: Transferer,
  options: TransferCallOptions,
  outcome?: FailedOutcome,
): Promise<FailedOutcome> {
  const mode = options.mode ?? 'cold';
  return traceTransfer({ to: options.to, mode }, () => transferNow(transferer, options, outcome));
}

async function transferNow(
  transferer: Transferer,
  options: TransferCallOptions,
  outcome?: FailedOutcome,
): Promise<FailedOutcome> {
  const request: TransferRequest = {
    to: options.to,
    mode: options.mode ?? 'cold',
    summary: transferSummary(options, outcome),
  };
  if (options.session) request.history = maskedHistory(options.session);
  const call = options.session ? callOf(options.session) : undefined;
  if (options.session && options.announce && !call?.hungUp) {
    try {
      await options.session.say(options.announce, { allowInterruptions: false }).waitForPlayout();
    } catch {
      // the session is closing: transfer anyway, the caller may still be on the line
    }
  }
  const attempts = outcome?.attempts ?? 0;
  if (call?.hungUp) {
    return { status: 'hangup', attempts, reason: call.hungUp.reason };
  }
  logCall(call, 'info', 'transfer requested', {
    to: request.to,
    mode: request.mode,
    summary: request.summary,
  });
  const result = options.session
    ? await trackTransfer(options.session, transferer, request)
    : await safeTransfer(transferer, request);
  if (result.ok) {
    logCall(call, 'info', 'transfer done', { to: request.to, mode: request.mode });
    return {
      status: 'transferred',
      attempts,
      reason: `transferred to ${request.to} (${request.mode})`,
    };
  }
  logCall(call, 'warn', 'transfer failed', { to: request.to, reason: result.reason });
  if (outcome)
    return {
      ...outcome,
      reason: `${outcome.reason ?? outcome.status}; transfer failed: ${result.reason}`,
    };
  return { status: 'cancelled', attempts, reason: `transfer failed: ${result.reason}` };
}

/**
 * The escalation for `retry.onExhausted` of typed tasks, collectDigits and menus: when a
 * cap is reached the call is transferred and the task resolves `transferred` (or keeps
 * its failure, with the reason, if the transfer failed).
 *
 * @example
 * collectDigits({ prompt, retry: { onExhausted: transferOnExhausted(transferer,
 *   { to: '+15550100', summary: 'Caller could not enter their PIN', session }) } });
 */
export function transferOnExhausted(
  transferer: Transferer,
  options: TransferCallOptions,
): (outcome: FailedOutcome) => Promise<FailedOutcome> {
  return (outcome) => transferCall(transferer, options, outcome);
}
