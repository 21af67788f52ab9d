/**
 * `callOut`: places an outbound call and says who answered — a person, a voicemail (that
 * takes a message or not), an IVR, or someone the rules could not place — or why nobody did
 * (busy, no answer, failed, with the SIP status). One awaited, typed outcome; a bad option
 * rejects with `invalid_argument` before anything is dialled.
 */
import { voice } from '@livekit/agents';
import { checkOptions, millis, type OptionTable } from '../../core/options.js';
import { logCall } from '../log.js';
import { RINGING_TIMEOUT } from '../sip-address.js';
import type { AmdSource } from '../voicemail.js';
import type { Dialer, DialRequest } from './dialer.js';
import { farEndOf } from './far-end.js';
import { FarEndTask } from './far-end-task.js';
import { readGreeting } from './greeting.js';
import type { DialFailure } from './sip-status.js';

/** What every answered outcome carries. */
export interface AnsweredCall {
  to: string;
  /** The far end's participant identity. */
  participantIdentity: string;
  sipCallId?: string;
  /** Everything the far end said before the verdict, in order (feed it to the next step). */
  greeting: string;
  /** Why this verdict (the phrase that decided it, or what settled it). */
  reason: string;
}

/** How an outbound call went. */
export type CallOutOutcome =
  /** A person answered. */
  | (AnsweredCall & { status: 'human' })
  /** An answering machine: `canLeaveMessage` is false for a full or unset mailbox. */
  | (AnsweredCall & { status: 'voicemail'; canLeaveMessage: boolean })
  /** An automated menu answered (navigate it with `navigateIvr`). */
  | (AnsweredCall & { status: 'ivr' })
  /** Answered, but nothing said made clear by whom (silence, or an unclear greeting). */
  | (AnsweredCall & { status: 'answered' })
  /** Nobody answered: busy, no answer, failed, with the SIP status when there was one. */
  | (DialFailure & { to: string })
  /** The far end hung up before it was clear who answered, or the session closed. */
  | { status: 'hangup' | 'cancelled'; to: string; greeting: string; reason: string };

/** Options for {@link callOut}: who to call, and how the answer is told apart. */
export interface CallOutOptions extends DialRequest {
  /** How the call is placed: `setup.dialer` in a room, a RecordingDialer in a demo. */
  dialer: Dialer;
  /**
   * Asked when taskline's rules are unsure (upstream's `voice.AMD`, any {@link AmdSource}):
   * started with the answer, its verdict is taken unless the rules decided first.
   */
  detector?: AmdSource;
  /**
   * No words this long after the answer (or after the last sound on the line, bounded by
   * `maxDetectMs`): `answered`. 1,000 to 60,000 ms (default 8,000 ms).
   */
  noSpeechMs?: number;
  /**
   * Quiet this long after a greeting the rules cannot place settles it: 500 to 30,000 ms
   * (default 3,000 ms).
   */
  decideAfterMs?: number;
  /** Longest the verdict may take after the answer: 1,000 to 120,000 ms (default 30,000 ms). */
  maxDetectMs?: number;
}

/** The waits of {@link CallOutOptions} (and the dial's ringing), with their accepted range. */
const CALL_OUT_WAITS = {
  ringingTimeoutMs: { range: RINGING_TIMEOUT },
  noSpeechMs: { range: millis(1_000, 60_000) },
  decideAfterMs: { range: millis(500, 30_000) },
  maxDetectMs: { range: millis(1_000, 120_000) },
} as const satisfies OptionTable;

/** Where the far end's reaction is read: dial, then listen, on the call's clock. */
class CallOutTask extends FarEndTask<CallOutOutcome> {
  private readonly options: CallOutOptions;
  private answered: { participantIdentity: string; sipCallId?: string } | undefined;
  private readonly heard: string[] = [];
  private decide: { cancel(): void } | undefined;
  private waitingForDetector = false;

  constructor(options: CallOutOptions) {
    super({
      id: 'call_out',
      instructions:
        'You placed a phone call and are listening to who answered. Say nothing; taskline decides.',
    });
    this.options = options;
  }

  protected unwound(status: 'hangup' | 'cancelled', reason: string): CallOutOutcome {
    return { status, to: this.options.to, greeting: this.heard.join(' '), reason };
  }

  protected begin(): void {
    const call = this.call!;
    const working = call.beginWork();
    const dialing = call.beginDial();
    const done = () => {
      dialing();
      working();
    };
    const {
      dialer,
      detector: _d,
      noSpeechMs: _n,
      decideAfterMs: _a,
      maxDetectMs: _m,
      ...request
    } = this.options;
    Promise.resolve()
      .then(() => dialer.dial(request))
      .then(
        (result) => {
          done();
          if (this.finished) return;
          if (result.status !== 'answered') {
            logCall(call, 'info', `call out: ${result.status}`, {
              to: result.to,
              sipStatusCode: result.sipStatusCode,
              reason: result.reason,
            });
            this.finish(result);
            return;
          }
          logCall(call, 'info', 'call out: answered', { to: result.to });
          // Listen for tones from the answer on: a beep may come before the verdict does.
          const farEnd = farEndOf(this.agentSession!);
          farEnd.answeredAt = call.clock.now();
          farEnd.listenToAudio();
          if (call.callerIdentity === undefined) call.setCaller(result.participantIdentity);
          this.answered = {
            participantIdentity: result.participantIdentity,
            ...(result.sipCallId ? { sipCallId: result.sipCallId } : {}),
          };
          this.listenForVerdict();
        },
        (error: unknown) => {
          done();
          this.finish({
            status: 'failed',
            to: this.options.to,
            reason: `the dialer failed: ${error instanceof Error ? error.message : String(error)}`,
          });
        },
      );
  }

  private listenForVerdict(): void {
    const noSpeechMs = this.options.noSpeechMs ?? 8_000;
    const maxDetectMs = this.options.maxDetectMs ?? 30_000;
    const quiet = () => this.settle('answered', `no words within ${noSpeechMs} ms of the answer`);
    let noSpeech: { cancel(): void } | undefined = this.timer(noSpeechMs, quiet);
    this.onEnd(() => noSpeech?.cancel());
    this.timer(maxDetectMs, () =>
      this.settle('answered', `no clear verdict within ${maxDetectMs} ms of the answer`),
    );
    const session = this.agentSession!;
    const onState = (ev: voice.UserStateChangedEvent) => {
      if (ev.newState === 'speaking') {
        noSpeech?.cancel();
        noSpeech = undefined;
        this.decide?.cancel();
      } else if (ev.oldState === 'speaking' && this.heard.length > 0) this.armDecide();
    };
    session.on(voice.AgentSessionEventTypes.UserStateChanged, onState);
    this.onEnd(() => session.off(voice.AgentSessionEventTypes.UserStateChanged, onState));
    // Sound on the line that speech detection has not placed yet (it runs behind real time on
    // a loaded machine) is not silence: "no words" counts from the last sound heard.
    this.onEnd(
      farEndOf(session).on('sound', () => {
        if (!noSpeech || this.heard.length > 0) return;
        noSpeech.cancel();
        noSpeech = this.timer(noSpeechMs, quiet);
      }),
    );
    this.runDetector();
    // An utterance heard before the answer was reported (a fast line) is read now.
    if (this.heard.length > 0) this.read();
  }

  private runDetector(): void {
    const detector = this.options.detector;
    if (!detector) return;
    this.onEnd(() => void detector.aclose?.().catch(() => undefined));
    detector.execute().then(
      (ev) => {
        this.waitingForDetector = false;
        if (this.finished) return;
        const category = String(ev.category);
        const transcript = ev.transcript ? [ev.transcript] : [];
        if (category === voice.AMDCategory.HUMAN) this.settle('human', `amd: ${ev.reason}`);
        else if (category === voice.AMDCategory.MACHINE_VM)
          this.settle('voicemail', `amd: ${ev.reason}`, true);
        else if (category === voice.AMDCategory.MACHINE_UNAVAILABLE)
          this.settle('voicemail', `amd: ${ev.reason}`, false);
        else if (category === voice.AMDCategory.MACHINE_IVR)
          this.settle('ivr', `amd: ${ev.reason}`);
        else if (transcript.length && this.heard.length === 0) this.heard.push(...transcript);
      },
      () => {
        this.waitingForDetector = false;
      },
    );
    this.waitingForDetector = true;
  }

  protected hear(text: string): void {
    this.heard.push(text);
    if (this.answered) this.read();
  }

  private read(): void {
    const reading = readGreeting(this.heard.join(' '));
    const why = reading.cue ? `heard "${reading.cue}"` : 'heard the greeting';
    const kind = reading.kind;
    if (kind === 'mailbox_full' || kind === 'voicemail') {
      this.settle('voicemail', why, kind === 'voicemail');
    } else if (kind === 'ivr' || kind === 'human') this.settle(kind, why);
    else this.armDecide();
  }

  private armDecide(): void {
    this.decide?.cancel();
    if (this.agentSession?.userState === 'speaking') return;
    const ms = this.options.decideAfterMs ?? 3_000;
    this.decide = this.timer(ms, () => {
      // Upstream's detector, when given, still has the floor until the overall limit.
      if (this.waitingForDetector) return;
      const reading = readGreeting(this.heard.join(' '));
      this.settle(
        'answered',
        reading.kind === 'machine'
          ? `an automated line ("${reading.cue}"), not clear which kind`
          : 'the greeting did not say who answered',
      );
    });
  }

  private settle(
    status: 'human' | 'voicemail' | 'ivr' | 'answered',
    reason: string,
    canLeaveMessage = false,
  ): void {
    if (this.finished || !this.answered) return;
    const base: AnsweredCall = {
      to: this.options.to,
      ...this.answered,
      greeting: this.heard.join(' '),
      reason,
    };
    logCall(this.call, 'info', `call out: answered by ${status}`, { reason });
    this.finish(
      status === 'voicemail' ? { ...base, status, canLeaveMessage } : { ...base, status },
    );
  }
}

/**
 * Places an outbound call and waits until it is clear who answered. Run it inside an
 * agent's `onEnter` (or a tool): it is an inline task, so the far end's first words are
 * read by taskline's rules ("hello?" is a person; "leave a message after the tone" a
 * voicemail; "the mailbox is full" one that takes no message; "for billing, press 1" an
 * IVR) without a model, and never answered by the agent. Bounded on the call's clock. A
 * wait or ringing timeout outside its range is refused (`invalid_argument`) before dialling.
 *
 * @example
 * const answered = await callOut(this.session, { dialer, to: '+15550100' });
 * if (answered.status === 'voicemail') await leaveVoicemail(this.session, message, {}, { greeting: answered.greeting });
 */
export async function callOut(
  _session: voice.AgentSession,
  options: CallOutOptions,
): Promise<CallOutOutcome> {
  // A bad wait is refused before anything is dialled (an unchecked one could end at once).
  checkOptions(CALL_OUT_WAITS, options, { owner: 'callOut' });
  return new CallOutTask(options).run();
}
