/**
 * Two agents on one call, by audio: each side is a session with upstream's real voice
 * pipeline (Silero VAD, openai STT and TTS on the local speech server), and what one side's
 * TTS plays is streamed in real time into the other side's audio input, 16 kHz, as on a
 * line. Keys go across as DTMF through the call context (out of band, as LiveKit SIP sends
 * them), hang-ups end the other side. The transcription oracle hears each side's speech:
 * every stretch of agent audio is registered with the words it was spoken from (the text
 * the session sent to its transcription output). For outbound tests: a navigator calling an
 * IVR bot, in audio.
 */
import { voice } from '@livekit/agents';
import type { AudioFrame } from '@livekit/rtc-node';
import { attachCall, type CallContext } from '../../core/call.js';
import { TasklineError } from '../../core/errors.js';
import type { Dialer, DialResult } from '../../telephony/outbound/dialer.js';
import { farEndOf } from '../../telephony/outbound/far-end.js';
import { checkKeys } from '../../telephony/outbound/key-sender.js';
import type { LinkedLine, LinkedSide } from '../../testing/linked-call.js';
import { ScriptedLLM } from '../../testing/scripted-llm.js';
import type { CallerSpeech } from '../../testing/speech-endpoints.js';
import { AgentSpeaker } from './agent-speaker.js';
import { CallerLine } from './caller-line.js';

/** Options for {@link AudioLink.start}. */
export interface AudioLinkOptions {
  /** The side that dials, built with the dialer its agent passes to `callOut`. */
  caller: (dialer: Dialer) => LinkedSide;
  /** The side that answers, built when it is dialled. */
  callee: () => LinkedSide;
  /** Session options with the audio pipeline (VAD, STT, TTS) for each side. */
  sessionOptions: () => Promise<Omit<voice.AgentSessionOptions, 'llm'>>;
  /** The transcription oracle the local speech server answers from. */
  speech: CallerSpeech;
  /** Time between two keys (default 250 ms). */
  keyGapMs?: number;
}

/** The transcription sink of a session (upstream's TextOutput, not exported by 1.9.0). */
type TranscriptionSink = NonNullable<voice.AgentSession['output']['transcription']>;

/**
 * Collects what a session sends to its transcription output, one text per speech. It has
 * the shape of upstream's `TextOutput` (captureText, flush, onAttached, onDetached), which
 * @livekit/agents 1.9.0 does not export to subclass.
 */
class SpokenText {
  private current = '';
  private readonly done: string[] = [];
  private waiting: ((text: string) => void) | undefined;

  async captureText(text: string | voice.TimedString): Promise<void> {
    this.current += typeof text === 'string' ? text : text.text;
  }

  onAttached(): void {}

  onDetached(): void {}

  flush(): void {
    const text = this.current.trim();
    this.current = '';
    if (!text) return;
    const w = this.waiting;
    this.waiting = undefined;
    if (w) w(text);
    else this.done.push(text);
  }

  /** The next speech's text (now, or when it is flushed). */
  next(): Promise<string> {
    const text = this.done.shift();
    if (text !== undefined) return Promise.resolve(text);
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }
}

interface Side {
  session: voice.AgentSession;
  call: CallContext;
  line: CallerLine;
  speaker: AgentSpeaker;
  text: SpokenText;
  identity: string;
  closed: boolean;
}

const LINE_RATE = 16_000;

/** A caller agent and a callee agent talking by audio (see the module comment). */
export class AudioLink {
  readonly transcript: LinkedLine[] = [];
  readonly dialer: Dialer;
  private callerSide: Side | undefined;
  private calleeSide: Side | undefined;
  private readonly options: AudioLinkOptions;
  private readonly closedWaiters: Array<() => void> = [];

  private constructor(options: AudioLinkOptions) {
    this.options = options;
    this.dialer = { dial: (request) => this.ring(request.to) };
  }

  /** Starts the caller's session; its agent dials when it is ready. */
  static async start(options: AudioLinkOptions): Promise<AudioLink> {
    const link = new AudioLink(options);
    const spec = options.caller(link.dialer);
    const side = await link.side(spec, spec.identity ?? 'caller', undefined);
    link.callerSide = side;
    await side.session.start({ agent: spec.agent });
    side.line.start();
    return link;
  }

  /** The caller's session. */
  get caller(): voice.AgentSession {
    return this.callerSide!.session;
  }

  /** The transcript as "caller: …" / "callee: [keys 1]" lines. */
  get lines(): string[] {
    return this.transcript.map(
      (l) => `${l.from}: ${l.via === 'dtmf' ? `[keys ${l.text}]` : l.text}`,
    );
  }

  /** Resolves when both sessions have closed, or rejects after `ms` (a TasklineError). */
  async ended(ms: number): Promise<void> {
    const both = new Promise<void>((resolve) => {
      const check = () => {
        if ((this.callerSide?.closed ?? true) && (this.calleeSide?.closed ?? true)) resolve();
      };
      this.closedWaiters.push(check);
      check();
    });
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new TasklineError('timeout', `The call was still going after ${ms} ms.`)),
        ms,
      );
    });
    try {
      await Promise.race([both, limit]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes both sessions and lines (idempotent). */
  async close(): Promise<void> {
    for (const side of [this.calleeSide, this.callerSide]) {
      if (!side) continue;
      if (!side.closed) await side.session.close().catch(() => undefined);
      await side.line.close();
    }
  }

  /**
   * Resolves once `to` has heard what is still on the line: its line played out, and the
   * user turn that audio makes is committed (or after HEAR_LAST_WORDS_MS). A real BYE can
   * beat the last transcript; this harness lets the words land first, so a test checks the
   * navigator, not that race (docs/outbound.md lists it as not handled).
   */
  private afterHeard(to: Side): Promise<void> {
    return new Promise((resolve) => {
      const started = Date.now();
      let sawSpeech = false;
      const onItem = (ev: voice.ConversationItemAddedEvent) => {
        if (ev.item.type === 'message' && ev.item.role === 'user') finish();
      };
      const onState = (ev: voice.UserStateChangedEvent) => {
        if (ev.newState === 'speaking') sawSpeech = true;
      };
      const poll = setInterval(() => {
        const waited = Date.now() - started;
        if (waited > HEAR_LAST_WORDS_MS || to.closed) finish();
        // Nothing was left to hear: the line is quiet and no speech was picked up.
        else if (
          !to.line.speaking &&
          !sawSpeech &&
          to.session.userState !== 'speaking' &&
          waited > 800
        )
          finish();
      }, 50);
      to.session.on(voice.AgentSessionEventTypes.ConversationItemAdded, onItem);
      to.session.on(voice.AgentSessionEventTypes.UserStateChanged, onState);
      function finish() {
        clearInterval(poll);
        to.session.off(voice.AgentSessionEventTypes.ConversationItemAdded, onItem);
        to.session.off(voice.AgentSessionEventTypes.UserStateChanged, onState);
        resolve();
      }
    });
  }

  private async ring(to: string): Promise<DialResult> {
    if (this.calleeSide) {
      return { status: 'busy', to, sipStatusCode: 486, sipStatus: 'Busy Here', reason: 'busy' };
    }
    const spec = this.options.callee();
    const caller = this.callerSide!;
    const side = await this.side(spec, spec.identity ?? 'callee', caller.identity);
    this.calleeSide = side;
    this.link(caller, side);
    const ready = this.readyToBeHeard(side);
    await side.session.start({ agent: spec.agent });
    side.line.start();
    await ready;
    return { status: 'answered', to, participantIdentity: side.identity };
  }

  /**
   * Resolves when the far end is ready to be heard, as a phone is when it answers: its first
   * audio plays, or it made no speech and stays quiet for {@link QUIET_ANSWER_MS}. Bounded by
   * {@link ANSWER_WITHIN_MS}. On a loaded machine a bot's first TTS can take seconds after its
   * session started; answering before then would count the machine's delay as the far end's
   * silence after the answer.
   */
  private readyToBeHeard(side: Side): Promise<void> {
    return new Promise((resolve) => {
      const started = Date.now();
      let speech = false;
      const onSpeech = () => {
        speech = true;
      };
      const finish = () => {
        clearInterval(poll);
        side.speaker.events.off('start', finish);
        side.session.off(voice.AgentSessionEventTypes.SpeechCreated, onSpeech);
        resolve();
      };
      side.speaker.events.once('start', finish);
      side.session.on(voice.AgentSessionEventTypes.SpeechCreated, onSpeech);
      const poll = setInterval(() => {
        const waited = Date.now() - started;
        if (waited > ANSWER_WITHIN_MS || side.closed) finish();
        else if (!speech && waited > QUIET_ANSWER_MS) finish();
      }, 50);
    });
  }

  private async side(
    spec: LinkedSide,
    identity: string,
    remote: string | undefined,
  ): Promise<Side> {
    const session = new voice.AgentSession({
      ...(await this.options.sessionOptions()),
      ...spec.sessionOptions,
      llm: spec.llm,
    });
    const call = attachCall(session, remote !== undefined ? { callerIdentity: remote } : {});
    if (spec.llm instanceof ScriptedLLM) spec.llm.bind(session);
    const line = new CallerLine();
    const speaker = new AgentSpeaker(LINE_RATE);
    const text = new SpokenText();
    session.input.audio = line;
    session.output.audio = speaker;
    session.output.transcription = text as unknown as TranscriptionSink;
    const side: Side = { session, call, line, speaker, text, identity, closed: false };
    session.once(voice.AgentSessionEventTypes.Close, () => {
      side.closed = true;
      for (const w of this.closedWaiters) w();
    });
    return side;
  }

  /** Wires audio, keys and hang-ups between the two sides. */
  private link(caller: Side, callee: Side): void {
    const play = (from: Side, to: Side, role: LinkedLine['from']) => {
      let frames: Int16Array[] = [];
      from.speaker.events.on('frame', (frame: AudioFrame) => {
        const samples = frame.data.slice(0, frame.samplesPerChannel);
        frames.push(samples);
        if (!to.closed) void to.line.speak({ samples, sampleRate: frame.sampleRate });
      });
      from.speaker.events.on('end', () => {
        const pcm = join(frames);
        frames = [];
        void from.text.next().then((words) => {
          this.options.speech.register(words, pcm);
          this.transcript.push({ from: role, text: words, via: 'speech', at: Date.now() });
        });
      });
    };
    play(caller, callee, 'caller');
    play(callee, caller, 'callee');
    const gapMs = this.options.keyGapMs ?? 250;
    farEndOf(caller.session).keys = {
      send: async (keys) => {
        const list = checkKeys(keys);
        const shown = callee.call.expectsSecret ? '*'.repeat(list.length) : keys;
        this.transcript.push({ from: 'caller', text: shown, via: 'dtmf', at: Date.now() });
        for (let i = 0; i < list.length; i++) {
          callee.call.pushDtmf(list[i]!, caller.identity);
          if (i < list.length - 1 && gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
        }
      },
    };
    const hangUp = (from: Side, to: Side, role: LinkedLine['from']) => {
      from.call.on('ended', (end) => {
        if (end.by === 'bot') {
          this.transcript.push({ from: role, text: '(hangs up)', via: 'hangup', at: end.at });
        }
        void this.afterHeard(to).then(() => to.call.hangup(`the ${role} hung up`));
      });
    };
    hangUp(caller, callee, 'caller');
    hangUp(callee, caller, 'callee');
  }
}

/** A far end that made no speech this long after it started answers as a quiet line. */
const QUIET_ANSWER_MS = 1_500;
/** Longest a far end takes to answer (its first audio) before the dial resolves anyway. */
const ANSWER_WITHIN_MS = 30_000;

/** Longest a hang-up waits for the other side to hear the last words (see `afterHeard`). */
const HEAR_LAST_WORDS_MS = 15_000;

function join(frames: readonly Int16Array[]): { samples: Int16Array; sampleRate: number } {
  const total = frames.reduce((n, f) => n + f.length, 0);
  const samples = new Int16Array(total);
  let at = 0;
  for (const f of frames) {
    samples.set(f, at);
    at += f.length;
  }
  return { samples, sampleRate: LINE_RATE };
}
