/**
 * Two agents on one call, in text: the caller's agent dials (`linked.dialer`), which starts
 * the callee's agent, and from then on each hears what the other says (an assistant line of
 * one is a user turn of the other), the caller's keys reach the callee's call as DTMF, and
 * either side ending the call hangs up the other. Both run on one virtual clock, so a
 * navigator calling an IVR bot runs in milliseconds, timeouts included. For outbound bots:
 * a navigator against a real IVR bot (examples/ivr-bank), a reminder against a person bot.
 */
import { type llm, voice } from '@livekit/agents';
import { attachCall, type CallContext } from '../core/call.js';
import { TasklineError } from '../core/errors.js';
import { ensureLogger } from '../core/log.js';
import type { Dialer, DialResult } from '../telephony/outbound/dialer.js';
import { farEndOf } from '../telephony/outbound/far-end.js';
import { checkKeys } from '../telephony/outbound/key-sender.js';
import { isSessionClosing } from '../upstream/internals.js';
import { ScriptedLLM } from './scripted-llm.js';
import { installRunResultWorkaround } from './upstream-workarounds.js';
import { flushAsync, VirtualClock } from './virtual-clock.js';

/** One side of a linked call. */
export interface LinkedSide {
  agent: voice.Agent;
  llm: llm.LLM;
  /** Its participant identity (default "caller" / "callee"). */
  identity?: string;
  /** Extra session options (no audio is used). */
  sessionOptions?: Omit<voice.AgentSessionOptions, 'llm'>;
}

/** One line of a linked call. */
export interface LinkedLine {
  from: 'caller' | 'callee';
  text: string;
  via: 'speech' | 'dtmf' | 'hangup';
  /** Virtual-clock time. */
  at: number;
}

/** Options for {@link LinkedCall.start}. */
export interface LinkedCallOptions {
  /** The side that dials, built with the dialer its agent passes to `callOut`. */
  caller: (dialer: Dialer) => LinkedSide;
  /** The side that answers, built when it is dialled. */
  callee: () => LinkedSide;
  /** How the dial ends instead of answering (busy, no answer…), for tests of those paths. */
  answer?: (to: string) => DialResult | undefined;
  /** Time between two keys the caller sends (default 250 ms). */
  keyGapMs?: number;
  /** Real-time guard on one settle of both sessions (default 30 s): a bug trips it, not a test. */
  guardMs?: number;
}

const IDLE = new Set<voice.AgentState>(['listening', 'idle']);

interface Party {
  session: voice.AgentSession;
  call: CallContext;
  identity: string;
  closed: boolean;
}

/** A caller agent and a callee agent talking to each other (see the module comment). */
export class LinkedCall {
  readonly clock = new VirtualClock();
  readonly transcript: LinkedLine[] = [];
  /** The dialer the caller's agent uses: dialling starts the callee. */
  readonly dialer: Dialer;
  private callerParty: Party | undefined;
  private calleeParty: Party | undefined;
  private readonly options: LinkedCallOptions;
  private activity = 0;
  private readonly deliveries: Array<() => void> = [];
  private readonly guardMs: number;

  private constructor(options: LinkedCallOptions) {
    this.options = options;
    this.guardMs = options.guardMs ?? 30_000;
    this.dialer = { dial: (request) => this.ring(request.to) };
  }

  /** Starts the caller's session; its agent dials when it is ready. */
  static async start(options: LinkedCallOptions): Promise<LinkedCall> {
    ensureLogger();
    installRunResultWorkaround();
    const linked = new LinkedCall(options);
    const side = options.caller(linked.dialer);
    const party = linked.party(side, side.identity ?? 'caller', undefined);
    linked.callerParty = party;
    await party.session.start({ agent: side.agent });
    await linked.settle();
    return linked;
  }

  /** The caller's session. */
  get caller(): voice.AgentSession {
    return this.callerParty!.session;
  }

  /** The callee's session, once dialled. */
  get callee(): voice.AgentSession | undefined {
    return this.calleeParty?.session;
  }

  /** The transcript as "caller: …" / "callee: [keys 1]" lines. */
  get lines(): string[] {
    return this.transcript.map(
      (l) => `${l.from}: ${l.via === 'dtmf' ? `[keys ${l.text}]` : l.text}`,
    );
  }

  /**
   * Lets the call run: settles both sides, then moves the virtual clock to the next timer,
   * until `done()` holds, both sessions closed, or nothing is left to happen. Throws a
   * TasklineError (`timeout`) after `maxMs` of virtual time.
   */
  async runUntil(done: () => boolean = () => false, maxMs = 300_000): Promise<void> {
    const start = this.clock.now();
    for (;;) {
      await this.settle();
      if (done() || this.bothClosed()) return;
      const next = this.clock.nextTimerAt();
      if (next === undefined) return;
      if (next - start > maxMs) {
        throw new TasklineError('timeout', `The linked call was still running after ${maxMs} ms.`);
      }
      await this.clock.advance(Math.max(0, next - this.clock.now()), () => this.settle());
    }
  }

  /** Closes both sessions (idempotent). */
  async close(): Promise<void> {
    for (const p of [this.calleeParty, this.callerParty]) {
      if (p && !p.closed) await this.bounded(p.session.close(), 'a session to close');
    }
  }

  private async ring(to: string): Promise<DialResult> {
    const instead = this.options.answer?.(to);
    if (instead) return instead;
    if (this.calleeParty) {
      return { status: 'busy', to, sipStatusCode: 486, sipStatus: 'Busy Here', reason: 'busy' };
    }
    const side = this.options.callee();
    const caller = this.callerParty!;
    const party = this.party(side, side.identity ?? 'callee', caller.identity);
    this.calleeParty = party;
    this.link(caller, party);
    await party.session.start({ agent: side.agent });
    return { status: 'answered', to, participantIdentity: party.identity };
  }

  private party(side: LinkedSide, identity: string, remote: string | undefined): Party {
    const session = new voice.AgentSession({ ...side.sessionOptions, llm: side.llm });
    const call = attachCall(session, {
      clock: this.clock,
      ...(remote !== undefined ? { callerIdentity: remote } : {}),
    });
    if (side.llm instanceof ScriptedLLM) side.llm.bind(session);
    const party: Party = { session, call, identity, closed: false };
    const bump = () => {
      this.activity += 1;
    };
    session.on(voice.AgentSessionEventTypes.SpeechCreated, bump);
    session.on(voice.AgentSessionEventTypes.AgentStateChanged, bump);
    session.on(voice.AgentSessionEventTypes.FunctionToolsExecuted, bump);
    session.on(voice.AgentSessionEventTypes.ConversationItemAdded, bump);
    session.once(voice.AgentSessionEventTypes.Close, () => {
      party.closed = true;
      bump();
    });
    return party;
  }

  /** Wires words, keys and hang-ups between the two sides. */
  private link(caller: Party, callee: Party): void {
    const say = (from: Party, to: Party, role: LinkedLine['from']) => {
      from.session.on(voice.AgentSessionEventTypes.ConversationItemAdded, (ev) => {
        const item = ev.item;
        if (item.type !== 'message' || item.role !== 'assistant') return;
        const text = item.textContent?.trim();
        if (!text) return;
        this.transcript.push({ from: role, text, via: 'speech', at: this.clock.now() });
        this.deliver(() => {
          if (to.closed || isSessionClosing(to.session) || to.call.hungUp) return;
          to.call.noteInput('speech');
          to.session.generateReply({ userInput: text });
        });
      });
    };
    say(caller, callee, 'caller');
    say(callee, caller, 'callee');
    const gapMs = this.options.keyGapMs ?? 250;
    farEndOf(caller.session).keys = {
      send: async (keys) => {
        const list = checkKeys(keys);
        const shown = callee.call.expectsSecret ? '*'.repeat(list.length) : keys;
        this.transcript.push({ from: 'caller', text: shown, via: 'dtmf', at: this.clock.now() });
        for (let i = 0; i < list.length; i++) {
          callee.call.pushDtmf(list[i]!, caller.identity);
          this.activity += 1;
          if (i < list.length - 1 && gapMs > 0) await this.clock.sleep(gapMs);
        }
      },
    };
    const hangUp = (from: Party, to: Party, role: LinkedLine['from']) => {
      from.call.on('ended', (end) => {
        if (end.by === 'bot') {
          this.transcript.push({ from: role, text: '(hangs up)', via: 'hangup', at: end.at });
        }
        this.deliver(() => to.call.hangup(`the ${role} hung up`));
      });
    };
    hangUp(caller, callee, 'caller');
    hangUp(callee, caller, 'callee');
  }

  /**
   * Queues what one side does to the other (words, a hang-up). Deliveries run one at a time,
   * each once both sides have settled after the one before: words said before a hang-up are
   * heard before it, as on a phone line.
   */
  private deliver(fn: () => void): void {
    this.deliveries.push(fn);
    this.activity += 1;
  }

  private runDelivery(): void {
    const fn = this.deliveries.shift();
    if (!fn) return;
    this.activity += 1;
    try {
      fn();
    } catch {
      // the receiving session is closing: the line is gone
    }
  }

  private bothClosed(): boolean {
    return (this.callerParty?.closed ?? true) && (this.calleeParty?.closed ?? true);
  }

  private quiet(p: Party | undefined): boolean {
    if (!p || p.closed || isSessionClosing(p.session)) return true;
    return p.call.isWaitingForCaller || (!p.call.isBusy && IDLE.has(p.session.agentState));
  }

  /** Waits until both sides are quiet and nothing new happens. */
  private async settle(): Promise<void> {
    const limit = Date.now() + this.guardMs;
    for (let round = 0; ; round++) {
      const before = this.activity;
      await flushAsync(3);
      if (this.quiet(this.callerParty) && this.quiet(this.calleeParty)) {
        if (this.deliveries.length > 0) {
          this.runDelivery();
          continue;
        }
        if (this.activity === before) return;
      }
      if (Date.now() > limit) {
        throw new TasklineError(
          'timeout',
          `The linked call did not settle within ${this.guardMs} ms (round ${round}): is something looping?`,
        );
      }
      if (round > 50) await new Promise((r) => setTimeout(r, 5));
    }
  }

  private async bounded<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new TasklineError('timeout', `Gave up waiting for ${what}.`)),
        this.guardMs,
      );
    });
    try {
      return await Promise.race([promise, limit]);
    } finally {
      clearTimeout(timer);
    }
  }
}
