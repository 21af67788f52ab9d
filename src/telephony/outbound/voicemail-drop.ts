/**
 * `leaveVoicemail`: waits for the beep after a voicemail greeting — a steady 400–2,000 Hz
 * tone of at least 200 ms, found in the far end's audio — or, when there is none, for the
 * greeting to end (quiet on the line), then speaks the message once, uninterruptible, and
 * hangs up. A mailbox that says it is full gets no message. Typed result: left after the
 * beep, left after silence (no beep), mailbox full, or hung up.
 */
import { voice } from '@livekit/agents';
import { callOf } from '../../core/call.js';
import { TasklineError } from '../../core/errors.js';
import { checkOptions, millis, type OptionTable } from '../../core/options.js';
import { logCall } from '../log.js';
import { renderTemplate } from '../voicemail.js';
import { farEndOf, type ToneHeard } from './far-end.js';
import { FarEndTask } from './far-end-task.js';
import { readGreeting } from './greeting.js';

/** How leaving a voicemail ended. */
export type VoicemailResult =
  /** Spoken after the beep. */
  | { status: 'left'; message: string; beep: ToneHeard }
  /** No beep came: spoken once the greeting had ended (quiet on the line). */
  | { status: 'no_beep'; message: string; reason: string }
  /** The mailbox takes no message (full, not set up): nothing was said. */
  | { status: 'mailbox_full'; heard: string }
  /** The far end hung up; `spoken` tells whether the message had started. */
  | { status: 'hangup'; reason: string; spoken: boolean }
  /** The session closed for another reason (or speaking failed). */
  | { status: 'cancelled'; reason: string; spoken: boolean };

/** Which tones count as the beep. */
export interface BeepOptions {
  /** Default 400 Hz (50–8,000, at most `maxHz`). */
  minHz?: number;
  /** Default 2,000 Hz (50–8,000). */
  maxHz?: number;
  /** Shortest beep (default 200 ms; 200–10,000, at most `maxMs`). */
  minMs?: number;
  /** Longest beep (default 4,000 ms, 200–60,000; a longer tone is not a beep). */
  maxMs?: number;
}

/** Options for {@link leaveVoicemail}. */
export interface VoicemailOptions {
  /** What the far end said so far (callOut's `greeting`): a full mailbox there is seen at once. */
  greeting?: string;
  /** With no beep, speak after this much quiet once the greeting stopped (default 2,500 ms). */
  quietMs?: number;
  /** Longest wait for the beep or the end of the greeting; then speak anyway (default 45,000 ms). */
  maxWaitMs?: number;
  /** Which tones are the beep. */
  beep?: BeepOptions;
  /**
   * A beep heard since this call-clock time counts (default: when `callOut` saw the answer,
   * else when leaveVoicemail starts): the beep may come before the greeting is transcribed.
   */
  since?: number;
  /** Hang up once the message has played (default true). */
  endCall?: boolean;
}

/** The waits of {@link VoicemailOptions}, with their accepted range. */
const WAITS = {
  quietMs: { range: millis(100, 60_000) },
  maxWaitMs: { range: millis(1_000, 600_000) },
} as const satisfies OptionTable;

/**
 * What counts as a beep, with its accepted range: the far end's tone detector reports tones
 * of 200 ms and more, so a shorter bound would change nothing.
 */
const BEEP = {
  minHz: { range: { min: 50, max: 8_000 } },
  maxHz: { range: { min: 50, max: 8_000 } },
  minMs: { range: millis(200, 10_000) },
  maxMs: { range: millis(200, 60_000) },
} as const satisfies OptionTable;

/** Refuses a beep band no tone can fall in (a lower bound above its upper one). */
function checkBeepBand(beep: BeepOptions | undefined): void {
  for (const [low, high] of [
    ['minHz', 'maxHz'],
    ['minMs', 'maxMs'],
  ] as const) {
    const lo = beep?.[low];
    const hi = beep?.[high];
    if (lo !== undefined && hi !== undefined && lo > hi) {
      throw new TasklineError(
        'invalid_argument',
        `leaveVoicemail: beep.${low} (${lo}) is above beep.${high} (${hi}), so no tone would count as the beep.`,
        { option: `beep.${low}` },
      );
    }
  }
}

class VoicemailTask extends FarEndTask<VoicemailResult> {
  private readonly message: string;
  private readonly options: VoicemailOptions;
  private heard: string;
  private quiet: { cancel(): void } | undefined;
  private speaking = false;

  constructor(message: string, options: VoicemailOptions) {
    super({
      id: 'voicemail',
      instructions: 'You are leaving a voicemail message. Say nothing; taskline speaks it.',
    });
    this.message = message;
    this.options = options;
    this.heard = options.greeting ?? '';
  }

  protected unwound(status: 'hangup' | 'cancelled', reason: string): VoicemailResult {
    return { status, reason, spoken: this.speaking };
  }

  protected begin(): void {
    const call = this.call!;
    const session = this.agentSession!;
    if (readGreeting(this.heard).kind === 'mailbox_full') {
      this.mailboxFull();
      return;
    }
    const farEnd = farEndOf(session);
    farEnd.listenToAudio();
    const since = this.options.since ?? farEnd.answeredAt ?? call.clock.now();
    const last = farEnd.lastTone;
    if (last && last.at >= since && this.isBeep(last)) {
      this.speak('beep', last);
      return;
    }
    this.onEnd(
      farEnd.on('tone', (tone) => {
        if (this.isBeep(tone)) this.speak('beep', tone);
      }),
    );
    const onState = (ev: voice.UserStateChangedEvent) => {
      if (ev.newState === 'speaking') this.quiet?.cancel();
      else if (ev.oldState === 'speaking') this.armQuiet();
    };
    session.on(voice.AgentSessionEventTypes.UserStateChanged, onState);
    this.onEnd(() => session.off(voice.AgentSessionEventTypes.UserStateChanged, onState));
    const maxWaitMs = this.options.maxWaitMs ?? 45_000;
    this.timer(maxWaitMs, () =>
      this.speak('silence', undefined, `the greeting had not ended after ${maxWaitMs} ms`),
    );
    this.armQuiet();
  }

  protected hear(text: string): void {
    if (this.speaking) return;
    this.heard = `${this.heard} ${text}`.trim();
    if (readGreeting(this.heard).kind === 'mailbox_full') {
      this.mailboxFull();
      return;
    }
    this.armQuiet();
  }

  private isBeep(tone: ToneHeard): boolean {
    const b = this.options.beep ?? {};
    return (
      tone.hz >= (b.minHz ?? 400) &&
      tone.hz <= (b.maxHz ?? 2000) &&
      tone.durationMs >= (b.minMs ?? 200) &&
      tone.durationMs <= (b.maxMs ?? 4000)
    );
  }

  private armQuiet(): void {
    this.quiet?.cancel();
    if (this.speaking || this.agentSession?.userState === 'speaking') return;
    const quietMs = this.options.quietMs ?? 2_500;
    this.quiet = this.timer(quietMs, () =>
      this.speak('silence', undefined, `no beep; the line was quiet for ${quietMs} ms`),
    );
  }

  private mailboxFull(): void {
    logCall(this.call, 'info', 'voicemail: the mailbox takes no message');
    this.finish({ status: 'mailbox_full', heard: this.heard });
  }

  private speak(after: 'beep' | 'silence', beep?: ToneHeard, reason = ''): void {
    if (this.speaking || this.finished) return;
    this.speaking = true;
    this.quiet?.cancel();
    logCall(this.call, 'info', `voicemail: speaking after ${after}`, { hz: beep?.hz, reason });
    const handle = this.say(this.message, { allowInterruptions: false });
    handle.waitForPlayout().then(
      () => {
        if (this.finished) return;
        const call = this.call!;
        if (call.hungUp) {
          this.finish({ status: 'hangup', reason: call.hungUp.reason, spoken: true });
        } else if (handle.interrupted) {
          this.finish({ status: 'cancelled', reason: 'the message was cut off', spoken: true });
        } else if (beep) {
          this.finish({ status: 'left', message: this.message, beep });
        } else {
          this.finish({ status: 'no_beep', message: this.message, reason });
        }
      },
      (error: unknown) => {
        const call = this.call!;
        this.finish(
          call.hungUp
            ? { status: 'hangup', reason: call.hungUp.reason, spoken: true }
            : {
                status: 'cancelled',
                reason: error instanceof Error ? error.message : String(error),
                spoken: true,
              },
        );
      },
    );
  }
}

/**
 * Leaves a message on an answering machine: after the beep, or after the greeting when
 * there is no beep; never on a full mailbox. Run it inside `onEnter` or a tool (an inline
 * task). `{name}` placeholders in `template` are filled from `vars`.
 *
 * @example
 * const answered = await callOut(this.session, { dialer, to });
 * if (answered.status === 'voicemail' && answered.canLeaveMessage)
 *   await leaveVoicemail(this.session, 'Hi {name}, this is Riverside Clinic…', { name }, { greeting: answered.greeting });
 */
export async function leaveVoicemail(
  session: voice.AgentSession,
  template: string,
  vars: Readonly<Record<string, string | number>> = {},
  options: VoicemailOptions = {},
): Promise<VoicemailResult> {
  // A bad option is refused before the call waits on it (an unchecked wait could end at once).
  checkOptions(WAITS, options, { owner: 'leaveVoicemail' });
  checkOptions(BEEP, options.beep, { owner: 'leaveVoicemail', prefix: 'beep.' });
  checkBeepBand(options.beep);
  const message = renderTemplate(template, vars);
  const result = await new VoicemailTask(message, options).run();
  const call = callOf(session);
  logCall(call, 'info', `voicemail: ${result.status}`);
  const spoke = result.status === 'left' || result.status === 'no_beep';
  if ((spoke || result.status === 'mailbox_full') && options.endCall !== false) {
    await call.end({ reason: `voicemail ${result.status}` });
  }
  return result;
}
