/**
 * When a finished task's result may be spoken: never between a question and its answer
 * (unless the host asks for that). A question is open while a capture is running — the
 * current agent is an inline `AgentTask` that has not completed (a typed task, digits, a
 * menu, a flow between its steps, a voice specialist) — or while anything declares that it
 * waits on the caller (`call.waitForCaller()`) or listens for an answer (`call.expect()`).
 * Held results are spoken at the first safe moment, synchronously, so nothing asked later
 * can get in between: the speech is scheduled in the activity current at that moment and
 * the next question waits for it.
 */
import { voice } from '@livekit/agents';
import type { CallContext } from '../core/call.js';
import type { TimerHandle } from '../core/clock.js';
import { isSessionClosing } from '../upstream/internals.js';

/**
 * When results are spoken (`TaskManagerOptions.deliverAt`):
 * - `step` (default): at the next safe moment — a step boundary (a capture has its answer
 *   and the next question is not asked yet) or the line going idle with no question open;
 * - `idle`: only once the line is idle, no question is open and no step is in progress
 *   (in a flow: after the flow);
 * - `interrupt`: as soon as the line is idle, even while a question waits for its answer;
 *   the open question is asked again right after, so it still has its answer coming.
 */
export type DeliverAt = 'step' | 'idle' | 'interrupt';

/** The delivery modes, for checking options. */
export const DELIVER_AT: readonly DeliverAt[] = ['step', 'idle', 'interrupt'];

/** What the floor says through (see DeliveryChannel). */
export interface FloorSpeaker<E> {
  /** Speaks `held` now in the current activity; returns the ones it could not speak. */
  speak(held: E[], moment: FloorMoment): E[];
}

/** The moment the floor found: a step boundary, an idle line, or (interrupt) an open question. */
export interface FloorMoment {
  kind: 'boundary' | 'idle' | 'interrupt';
  /** The agent current at that moment (the closing capture, at a boundary). */
  agent: voice.Agent | undefined;
  /** In interrupt mode, the question that was open, to be asked again after the results. */
  question?: string;
}

const IDLE = new Set<voice.AgentState>(['listening', 'idle']);

/** Event-loop rounds a handoff may take before its agent runs (it takes a few; bounded). */
const HANDOFF_ROUNDS = 50;

/**
 * Longest a caller's finished speech keeps the floor before its turn is answered (end-of-turn
 * detection waits up to 3 s by default upstream); speech that never becomes words releases it.
 */
const CALLER_TURN_MS = 4_000;

/**
 * True when the agent's activity accepts speech. Reaches into upstream 1.9's
 * `Agent._agentActivity.schedulingPaused` (no event marks the end of a handoff); pinned by
 * tests/upstream/handoff_resume.test.ts.
 */
export function activityRunning(agent: voice.Agent | undefined): boolean {
  const activity = (agent as { _agentActivity?: { schedulingPaused: boolean } } | undefined)
    ?._agentActivity;
  return activity !== undefined && !activity.schedulingPaused;
}

/** The session's current agent, or undefined when it has none (starting, closed). */
export function currentAgent(session: voice.AgentSession): voice.Agent | undefined {
  try {
    return session.currentAgent;
  } catch {
    return undefined;
  }
}

/** True while a question waits for its answer (see the module comment). */
export function questionOpen(session: voice.AgentSession, call: CallContext): boolean {
  if (call.expectation !== undefined || call.isWaitingForCaller) return true;
  const agent = currentAgent(session);
  return agent instanceof voice.AgentTask && !agent.done;
}

/** True while nothing is said, generated or worked on, and the caller is not speaking. */
export function lineIdle(session: voice.AgentSession, call: CallContext): boolean {
  return !call.isBusy && IDLE.has(session.agentState) && session.userState !== 'speaking';
}

/** The last thing the current agent said (an open question), if anything. */
function lastAgentLine(agent: voice.Agent | undefined): string | undefined {
  if (!agent) return undefined;
  const items = agent.chatCtx.items;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.type === 'message' && item.role === 'assistant') return item.textContent;
  }
  return undefined;
}

/**
 * Holds results until a safe moment of one call and speaks them then. Event-driven: it looks
 * again whenever the agent, the caller, a capture or a step changes state.
 */
export class Floor<E> {
  readonly #held: E[] = [];
  readonly #offs: Array<() => void> = [];
  /** Replies still in progress, with the agent each is for (a tool call runs until its reply is done). */
  readonly #replies = new Map<voice.SpeechHandle, voice.Agent | undefined>();
  #closed = false;
  #speaking = false;
  /** The caller stopped speaking and their turn is not answered yet (audio: end of turn). */
  #callerTurn = false;
  #callerTurnTimer: TimerHandle | undefined;

  constructor(
    private readonly session: voice.AgentSession,
    private readonly call: CallContext,
    private readonly mode: DeliverAt,
    private readonly speaker: FloorSpeaker<E>,
  ) {
    const look = () => this.#look();
    const onStep = () => this.#look(true);
    session.on(voice.AgentSessionEventTypes.AgentStateChanged, this.#onAgentState);
    session.on(voice.AgentSessionEventTypes.UserStateChanged, this.#onUserState);
    this.#offs.push(
      () => session.off(voice.AgentSessionEventTypes.AgentStateChanged, this.#onAgentState),
      () => session.off(voice.AgentSessionEventTypes.UserStateChanged, this.#onUserState),
      () => this.#endCallerTurn(),
    );
    // A reply is in progress until its handle is done — tool calls included, which run
    // while the agent looks idle: a result never cuts in before a tool's answer.
    const onSpeech = (ev: voice.SpeechCreatedEvent) => {
      const handle = ev.speechHandle;
      if (handle.done()) return;
      this.#replies.set(handle, currentAgent(session));
      handle.addDoneCallback(() => {
        this.#replies.delete(handle);
        look();
      });
    };
    session.on(voice.AgentSessionEventTypes.SpeechCreated, onSpeech);
    this.#offs.push(() => session.off(voice.AgentSessionEventTypes.SpeechCreated, onSpeech));
    // A handoff (a capture or a flow handing back) is announced before the next agent runs:
    // look again once that agent's activity runs and the line is idle under it. Until then
    // the call is marked busy, so a simulated caller does not take its turn first.
    const onItem = (ev: voice.ConversationItemAddedEvent) => {
      const item = ev.item;
      // The caller's words are in: their turn is being answered (a reply follows).
      if (item.type === 'message' && item.role === 'user') this.#endCallerTurn(false);
      if (item.type !== 'agent_handoff' || this.#held.length === 0) return;
      const release = call.beginWork();
      this.#offs.push(release);
      void this.#afterHandoff().then(release, release);
    };
    session.on(voice.AgentSessionEventTypes.ConversationItemAdded, onItem);
    this.#offs.push(() => session.off(voice.AgentSessionEventTypes.ConversationItemAdded, onItem));
    this.#offs.push(
      call.on('waiting', look),
      call.on('expecting', look),
      call.on('busy', look),
      call.on('stepEnded', onStep),
    );
  }

  /**
   * Resolves once the agent handed to runs: upstream announces the handoff before it resumes
   * or starts that agent's activity, and says nothing when it has. (Not upstream's
   * `waitForIdle()`: each call leaves abort listeners on the activity until it closes, and
   * while the caller speaks it adds more every turn of the event loop — the
   * MaxListenersExceededWarning of long audio calls.)
   */
  async #afterHandoff(): Promise<void> {
    for (let i = 0; i < HANDOFF_ROUNDS && !this.#closed; i++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (activityRunning(currentAgent(this.session))) break;
    }
  }

  readonly #onAgentState = (ev: voice.AgentStateChangedEvent): void => {
    // A reply is under way: the caller's turn is being answered.
    if (ev.newState === 'thinking' || ev.newState === 'speaking') this.#endCallerTurn(false);
    this.#look();
  };

  readonly #onUserState = (ev: voice.UserStateChangedEvent): void => {
    if (ev.newState === 'speaking') {
      this.#callerTurnTimer?.cancel();
      this.#callerTurnTimer = undefined;
      this.#callerTurn = true;
    } else if (ev.oldState === 'speaking') {
      // End of speech: the turn is detected, transcribed and answered after it. Bounded: a
      // sound that never becomes words releases the floor after CALLER_TURN_MS.
      this.#callerTurnTimer?.cancel();
      this.#callerTurnTimer = this.call.clock.setTimer(CALLER_TURN_MS, () => this.#endCallerTurn());
    }
    this.#look();
  };

  #endCallerTurn(look = true): void {
    this.#callerTurnTimer?.cancel();
    this.#callerTurnTimer = undefined;
    if (!this.#callerTurn) return;
    this.#callerTurn = false;
    if (look) this.#look();
  }

  /**
   * True while a reply of the current agent is still in progress (its handle not done). A
   * parent whose tool awaits an inline task has one too; it counts once the parent is back.
   */
  #pendingReply(): boolean {
    const agent = currentAgent(this.session);
    for (const [handle, owner] of this.#replies) {
      if (handle.done()) this.#replies.delete(handle);
      else if (owner === agent) return true;
    }
    return false;
  }

  /** Results waiting for their moment. */
  get held(): readonly E[] {
    return this.#held;
  }

  /** Holds results and speaks them at once if this is a safe moment. */
  hold(results: readonly E[]): void {
    if (this.#closed) return;
    this.#held.push(...results);
    this.#look();
  }

  /** Stops listening; results still held are returned (never spoken). */
  close(): E[] {
    this.#closed = true;
    for (const off of this.#offs.splice(0)) off();
    return this.#held.splice(0);
  }

  #look(boundary = false): void {
    if (this.#closed || this.#speaking || this.#held.length === 0) return;
    if (isSessionClosing(this.session) || this.call.hungUp) return;
    const moment = this.#moment(boundary);
    if (!moment) return;
    const batch = this.#held.splice(0);
    // Speaking emits session events synchronously; they must not re-enter this batch.
    this.#speaking = true;
    try {
      this.#held.unshift(...this.speaker.speak(batch, moment));
    } finally {
      this.#speaking = false;
    }
  }

  #moment(boundary: boolean): FloorMoment | undefined {
    const agent = currentAgent(this.session);
    if (boundary && this.mode === 'step') return { kind: 'boundary', agent };
    if (!lineIdle(this.session, this.call) || this.#callerTurn || this.#pendingReply()) {
      return undefined;
    }
    if (!questionOpen(this.session, this.call)) {
      // `idle` waits for the end of every step, a closing capture included.
      if (this.mode === 'idle' && agent instanceof voice.AgentTask) return undefined;
      return { kind: 'idle', agent };
    }
    if (this.mode !== 'interrupt') return undefined;
    const question = lastAgentLine(agent);
    return { kind: 'interrupt', agent, ...(question ? { question } : {}) };
  }
}
