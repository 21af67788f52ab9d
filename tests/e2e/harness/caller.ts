/**
 * The e2e suite's caller: a real @livekit/rtc-node participant in a room of the real server.
 * It publishes a microphone track that carries silence, like an open phone line, and the
 * caller's speech (espeak-ng, registered with the suite's oracle first) when it speaks; it
 * presses keys with `publishDtmf`, reads the agent's transcription stream (`lk.transcription`)
 * and listens to the agent's audio track. A caller may present as a phone line (participant
 * kind SIP and `sip.phoneNumber`, through its token's claims), as LiveKit SIP presents one.
 */
import {
  AudioFrame,
  AudioSource,
  AudioStream,
  DisconnectReason,
  LocalAudioTrack,
  type RemoteParticipant,
  type RemoteTrack,
  Room,
  RoomEvent,
  TrackKind,
  TrackPublishOptions,
  TrackSource,
} from '@livekit/rtc-node';
import { AccessToken } from 'livekit-server-sdk';
import { synthesize } from '../../../src/testing/espeak.js';
import type { CodecSurvivingOracle } from './fingerprint.js';
import type { LiveKitServer } from './server.js';
import { waitFor } from './wait.js';

const RATE = 48_000;
const FRAME = RATE / 100; // 10 ms
/** Agent audio louder than this (16-bit peak) counts as the agent speaking. */
const SPEAKING_PEAK = 800;
const DTMF_CODES: Record<string, number> = { '*': 10, '#': 11, A: 12, B: 13, C: 14, D: 15 };

/** How the caller appears in the room. */
export interface CallerOptions {
  identity: string;
  /** Present as a phone line: participant kind SIP with this `sip.phoneNumber`. */
  phoneNumber?: string;
  /** Extra participant attributes. */
  attributes?: Record<string, string>;
  /**
   * Only watch: a hidden participant that publishes nothing (reads what the agent says to
   * a phone caller who joined through LiveKit SIP).
   */
  observe?: boolean;
}

/** A line the agent said, as its transcription stream delivered it. */
export interface AgentLine {
  text: string;
  from: string;
  at: number;
}

/** A join token for `identity` in `room`. */
export async function joinToken(
  server: LiveKitServer,
  room: string,
  options: CallerOptions,
): Promise<string> {
  const token = new AccessToken(server.apiKey, server.apiSecret, {
    identity: options.identity,
    attributes: {
      ...options.attributes,
      ...(options.phoneNumber
        ? { 'sip.phoneNumber': options.phoneNumber, 'sip.callStatus': 'active' }
        : {}),
    },
    ttl: '10m',
  });
  if (options.phoneNumber) token.kind = 'sip';
  token.addGrant({
    roomJoin: true,
    room,
    hidden: options.observe === true,
    canPublish: options.observe !== true,
    canSubscribe: true,
    canPublishData: true,
  });
  return token.toJwt();
}

/** A caller connected to a room. */
export class TestCaller {
  readonly room = new Room();
  /** What the agent said (one entry per transcription stream: a line of speech). */
  readonly agentLines: AgentLine[] = [];
  /** Milliseconds of agent audio heard above the speaking threshold. */
  agentAudioMs = 0;
  /** The agent's state as it publishes it (participant attribute `lk.agent.state`). */
  agentState: string | undefined;
  /** When the agent last spoke, was thinking, or finished a line (performance.now()). */
  private lastAgentActivity = 0;
  /** Why the room disconnected us, once it did. */
  disconnectReason: DisconnectReason | undefined;
  /**
   * A second of audio queued ahead in the native source: a test process stalled by a busy
   * machine must not starve the track (a gap mid-word changes what reaches the agent).
   */
  private readonly source = new AudioSource(RATE, 1, 1_000);
  private readonly listeners = new Set<() => void>();
  private pending: Int16Array[] = [];
  private pumping = false;
  private ownTrackSid: string | undefined;
  private readonly readers: Promise<void>[] = [];

  private constructor(
    private readonly server: LiveKitServer,
    readonly roomName: string,
    readonly options: CallerOptions,
    private readonly oracle: CodecSurvivingOracle,
  ) {}

  /** Joins `room` as `options` describes and starts the open line (silence). */
  static async join(
    server: LiveKitServer,
    roomName: string,
    options: CallerOptions,
    oracle: CodecSurvivingOracle,
  ): Promise<TestCaller> {
    const caller = new TestCaller(server, roomName, options, oracle);
    await caller.connect();
    return caller;
  }

  private async connect(): Promise<void> {
    const room = this.room;
    room.registerTextStreamHandler('lk.transcription', (reader, participant) => {
      const transcribed = reader.info.attributes?.['lk.transcribed_track_id'];
      const read = reader.readAll().then((text) => {
        // Our own speech transcribed by the agent comes back on the same topic: skip it.
        if (transcribed && transcribed === this.ownTrackSid) return;
        if (text.trim()) {
          this.agentLines.push({ text: text.trim(), from: participant.identity, at: Date.now() });
          this.lastAgentActivity = performance.now();
          this.changed();
        }
      });
      this.readers.push(read.catch(() => undefined));
    });
    // Upstream's session events for agent consoles: not what a caller hears; drained quietly.
    room.registerByteStreamHandler('lk.agent.session', (reader) => {
      this.readers.push(
        reader.readAll().then(
          () => undefined,
          () => undefined,
        ),
      );
    });
    room.on(RoomEvent.TrackSubscribed, (track: RemoteTrack, _pub, who: RemoteParticipant) => {
      if (track.kind === TrackKind.KIND_AUDIO) void this.listen(track, who);
    });
    room.on(RoomEvent.Disconnected, (reason: DisconnectReason) => {
      this.disconnectReason = reason;
      this.pumping = false;
      this.changed();
    });
    room.on(
      RoomEvent.ParticipantAttributesChanged,
      (changed: Record<string, string>, who: { identity: string }) => {
        const state = changed['lk.agent.state'];
        if (state === undefined || who.identity === this.options.identity) return;
        this.agentState = state;
        this.lastAgentActivity = performance.now();
        this.changed();
      },
    );
    room.on(RoomEvent.ParticipantConnected, () => this.changed());
    room.on(RoomEvent.ParticipantDisconnected, () => this.changed());
    const token = await joinToken(this.server, this.roomName, this.options);
    await room.connect(this.server.url, token, { autoSubscribe: true, dynacast: false });
    if (this.options.observe) return;
    const track = LocalAudioTrack.createAudioTrack('microphone', this.source);
    const publication = await room.localParticipant!.publishTrack(
      track,
      new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
    );
    this.ownTrackSid = publication.sid;
    this.pumping = true;
    void this.pump();
  }

  /** Feeds the track in real time: queued speech, else silence (an open line). */
  private async pump(): Promise<void> {
    const silence = new Int16Array(FRAME);
    while (this.pumping) {
      const chunk = this.pending.shift() ?? silence;
      try {
        await this.source.captureFrame(new AudioFrame(chunk, RATE, 1, FRAME));
      } catch {
        break;
      }
      if (chunk !== silence && this.pending.length === 0) this.changed();
    }
  }

  private async listen(track: RemoteTrack, _who: RemoteParticipant): Promise<void> {
    const stream = new AudioStream(track, { sampleRate: RATE, numChannels: 1 });
    try {
      for await (const frame of stream) {
        let peak = 0;
        for (const s of frame.data) if (Math.abs(s) > peak) peak = Math.abs(s);
        if (peak >= SPEAKING_PEAK) {
          this.agentAudioMs += (frame.samplesPerChannel / frame.sampleRate) * 1000;
          this.lastAgentActivity = performance.now();
          this.changed();
        }
      }
    } catch {
      // the track ended with the room
    }
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  /** True once the server disconnected us because the room was deleted. */
  get roomDeleted(): boolean {
    return this.disconnectReason === DisconnectReason.ROOM_DELETED;
  }

  /** Says `text`: registered with the oracle, then spoken into the track; resolves when sent. */
  async say(text: string, timeoutMs = 30_000): Promise<void> {
    const pcm = await synthesize(text, { sampleRate: RATE });
    this.oracle.register(text, pcm);
    for (let at = 0; at < pcm.samples.length; at += FRAME) {
      const frame = new Int16Array(FRAME);
      frame.set(pcm.samples.subarray(at, Math.min(at + FRAME, pcm.samples.length)));
      this.pending.push(frame);
    }
    await this.until(
      () => this.pending.length === 0 || !this.pumping,
      timeoutMs,
      `"${text}" to be spoken`,
    );
  }

  /** Presses `keys` one after another, `gapMs` apart (RFC 2833 events through the server). */
  async press(keys: string, gapMs = 200): Promise<void> {
    const chars = [...keys];
    for (let i = 0; i < chars.length; i++) {
      const key = chars[i]!;
      const code = /[0-9]/.test(key) ? Number(key) : DTMF_CODES[key];
      if (code === undefined) throw new Error(`"${key}" is not a DTMF key`);
      await this.room.localParticipant!.publishDtmf(code, key);
      if (i < chars.length - 1) await new Promise((r) => setTimeout(r, gapMs));
    }
  }

  /** Waits until the agent said a line matching `pattern` (after the first `from` lines). */
  async heard(
    pattern: RegExp | { test(line: string): boolean; source: string },
    timeoutMs = 60_000,
    from = 0,
  ): Promise<AgentLine> {
    return this.until(
      () => this.agentLines.slice(from).find((l) => pattern.test(l.text)),
      timeoutMs,
      `the agent to say ${pattern.source} (it said: ${JSON.stringify(this.agentLines.map((l) => l.text))})`,
    );
  }

  /**
   * Waits until the agent has been listening, silent and without a new line for `quietMs`
   * (or the call ended): the moment a caller would answer. Bounded by `timeoutMs`.
   */
  async quiet(quietMs = 1_000, timeoutMs = 60_000): Promise<void> {
    const tick = setInterval(() => this.changed(), 100);
    try {
      await this.until(
        () =>
          this.disconnectReason !== undefined ||
          ((this.agentState === 'listening' || this.agentState === 'idle') &&
            performance.now() - this.lastAgentActivity >= quietMs) ||
          undefined,
        timeoutMs,
        `the agent to go quiet (state ${this.agentState})`,
      );
    } finally {
      clearInterval(tick);
    }
  }

  /**
   * After the caller's turn: waits (at most `answerWithinMs`, without failing) for the agent
   * to react — think, speak or say a line — then for it to go quiet. A turn may get no
   * answer (a key the agent collects silently), so the first wait is a bound, not a check.
   */
  async afterTurn(answerWithinMs = 30_000): Promise<void> {
    const since = performance.now();
    try {
      await this.until(
        () => this.disconnectReason !== undefined || this.lastAgentActivity > since || undefined,
        answerWithinMs,
        'the agent to react',
      );
    } catch {
      // no reaction within the bound: the turn needed none
    }
    await this.quiet();
  }

  /** Waits until the agent starts speaking (its state turns to `speaking`). */
  async speaking(timeoutMs = 60_000): Promise<void> {
    await this.until(
      () => this.agentState === 'speaking' || undefined,
      timeoutMs,
      'the agent to start speaking',
    );
  }

  /** Waits until the server removed us from the room (deleted, or the agent hung up). */
  async disconnected(timeoutMs = 30_000): Promise<DisconnectReason> {
    return this.until(() => this.disconnectReason, timeoutMs, 'the room to disconnect the caller');
  }

  /** Waits until a participant with `identity` is (or, with `present` false, is not) in the room. */
  async participant(identity: string | RegExp, present = true, timeoutMs = 30_000): Promise<true> {
    const match = (id: string) =>
      typeof identity === 'string' ? id === identity : identity.test(id);
    return this.until(
      () =>
        [...this.room.remoteParticipants.values()].some((p) => match(p.identity)) === present ||
        undefined,
      timeoutMs,
      `${identity} to ${present ? 'join' : 'leave'} the room`,
    );
  }

  /**
   * Hangs up: leaves the room. Bounded: a track reader that never sees its stream end (seen
   * on a loaded machine: a test hung here until its 10-minute timeout) is left behind after
   * `timeoutMs`, since the caller has left either way.
   */
  async leave(timeoutMs = 15_000): Promise<void> {
    this.pumping = false;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    try {
      if (this.room.isConnected) await Promise.race([this.room.disconnect(), bound]);
      await Promise.race([Promise.all(this.readers), bound]);
    } finally {
      clearTimeout(timer);
    }
  }

  private until<T>(check: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return waitFor(check, this.listeners, timeoutMs, what);
  }
}
