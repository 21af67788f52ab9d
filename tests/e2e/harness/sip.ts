/**
 * A real phone line for the e2e suite: `livekit-sip` (built by scripts/livekit-tools.sh
 * --sip) beside the suite's livekit-server, both talking through Redis, with an inbound
 * trunk and a dispatch rule made with livekit-server-sdk; and Debian's `baresip` as the
 * phone, driven through its ctrl_tcp (commands and call events) and cons (key presses:
 * RFC 2833 telephone-events during a call) modules. Reusable for dialling out: a phone with
 * `answer: true` picks up calls made to it.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { SipClient } from 'livekit-server-sdk';
import { afterAll, beforeAll, inject } from 'vitest';
import { encodeWav, synthesize } from '../../../src/testing/espeak.js';
import { logChild } from './child-log.js';
import type { LiveKitSuite } from './index.js';
import { redisProblem } from './redis.js';
import type { ScenarioLine } from './scenario.js';
import { E2E_DIR, type LiveKitServer } from './server.js';
import { waitFor } from './wait.js';

/** The SIP side's ports (override with TASKLINE_SIP_PORT / TASKLINE_SIP_RTP). */
export const SIP_PORTS = {
  signalling: Number(process.env.TASKLINE_SIP_PORT ?? 15060),
  rtp: process.env.TASKLINE_SIP_RTP ?? '16000-16100',
};

/**
 * The ports of the suite's SIP phones: phone `i` (0-4) takes four from
 * TASKLINE_SIP_PHONE_PORTS (default 15070) + 4i: SIP, TLS (baresip's next port), control
 * and keys.
 */
export function phonePorts(index: number): Pick<PhoneOptions, 'port' | 'ctrlPort' | 'keyPort'> {
  const base = Number(process.env.TASKLINE_SIP_PHONE_PORTS ?? 15070) + 4 * index;
  return { port: base, ctrlPort: base + 2, keyPort: base + 3 };
}

/** Why the SIP tests cannot run here (a sentence saying how to fix it), or undefined. */
export async function sipUnavailable(): Promise<string | undefined> {
  const problem = await sipProblem();
  if (!problem) return undefined;
  if (process.env.CI === 'true')
    throw new Error(`CI=true and the SIP e2e tests cannot run: ${problem}`);
  console.warn(`[skipped: needs a SIP service] ${problem}`);
  return problem;
}

/** What is missing for a SIP call here (livekit-sip, baresip, redis-server), or undefined. */
export async function sipProblem(): Promise<string | undefined> {
  let problem: string | undefined;
  let binary = '';
  try {
    binary = execFileSync('bash', ['scripts/livekit-tools.sh', '--path', 'sip'], {
      encoding: 'utf8',
    }).trim();
  } catch {
    // not built
  }
  if (!binary)
    problem = 'livekit-sip is not built; build it with `bash scripts/livekit-tools.sh --sip`';
  else if (!existsSync('/usr/bin/baresip'))
    problem = 'baresip (the SIP phone) is not installed; `apt-get install baresip`';
  else problem = redisProblem();
  return problem;
}

/** A running livekit-sip. */
export interface SipService {
  pid: number;
  log: string;
  stop(): Promise<void>;
}

/** Starts livekit-sip on loopback beside `server`, through the Redis `server` routes through. */
export async function startSipService(server: LiveKitServer, redis: string): Promise<SipService> {
  const binary = execFileSync('bash', ['scripts/livekit-tools.sh', '--path', 'sip'], {
    encoding: 'utf8',
  }).trim();
  mkdirSync(E2E_DIR, { recursive: true });
  const config = join(E2E_DIR, 'livekit-sip.yaml');
  const log = join(E2E_DIR, 'livekit-sip.log');
  writeFileSync(
    config,
    [
      `api_key: ${server.apiKey}`,
      `api_secret: ${server.apiSecret}`,
      `ws_url: ${server.url}`,
      'redis:',
      `  address: ${redis}`,
      `sip_port: ${SIP_PORTS.signalling}`,
      'sip_hostname: 127.0.0.1',
      'listen_ip: 127.0.0.1',
      'nat_1_to_1_ip: 127.0.0.1',
      'use_external_ip: false',
      `rtp_port: ${SIP_PORTS.rtp}`,
      // Calls are refused when the machine's CPU is above this share: a shared test
      // machine is often busy, and a refused call here would be a flaky test.
      'max_cpu_utilization: 1',
      'logging:',
      '  level: debug',
      '',
    ].join('\n'),
  );
  const child = spawn(binary, ['--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  logChild(child, log, (line) => {
    lines.push(line);
    for (const l of listeners) l();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitFor(
      () => lines.some((l) => l.includes('service ready')),
      listeners,
      30_000,
      `livekit-sip to start (log: ${log})`,
      () => (child.exitCode !== null ? `it exited with code ${child.exitCode}` : undefined),
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    pid: child.pid!,
    log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * The SIP service a file's calls go through: the suite's shared livekit-sip (started by the
 * global setup beside the shared server), or — when the file has a server of its own — one
 * started for the file and stopped after it. Call at the top of the file, after liveKitSuite.
 */
export function sipServiceFor(lk: LiveKitSuite): void {
  let own: SipService | undefined;
  beforeAll(async () => {
    const shared = inject('liveKitShared');
    if (lk.shared && shared?.sip) return;
    if (lk.shared) throw new Error('the shared livekit-server runs, but no livekit-sip beside it');
    if (!lk.redis)
      throw new Error('liveKitSuite({ sip: true }) gives the server the Redis livekit-sip needs');
    own = await startSipService(lk.server, lk.redis);
  }, 60_000);
  afterAll(async () => {
    await own?.stop();
  });
}

/** The trunk number callers dial (the To user), unless a file gives its own. */
export const TRUNK_NUMBER = '+15550001';

/**
 * An inbound trunk for calls from loopback to `number` (default {@link TRUNK_NUMBER}; each
 * file that takes calls at the same time needs its own) and an individual dispatch rule:
 * each call in its own room `<roomPrefix>…`, with `agentName` dispatched.
 */
export async function inboundRoute(
  server: LiveKitServer,
  agentName: string,
  roomPrefix: string,
  number = TRUNK_NUMBER,
): Promise<{ trunkId: string; ruleId: string; remove(): Promise<void> }> {
  const sip = new SipClient(server.httpUrl, server.apiKey, server.apiSecret);
  const trunk = await sip.createSipInboundTrunk(`taskline-e2e-${number}`, [number], {
    allowedAddresses: ['127.0.0.1/32'],
  });
  const rule = await sip.createSipDispatchRule(
    { type: 'individual', roomPrefix },
    {
      name: `taskline-e2e-${agentName}`,
      trunkIds: [trunk.sipTrunkId],
      roomConfig: { agents: [{ agentName }] } as never,
    },
  );
  return {
    trunkId: trunk.sipTrunkId,
    ruleId: rule.sipDispatchRuleId,
    async remove() {
      await sip.deleteSipDispatchRule(rule.sipDispatchRuleId).catch(() => undefined);
      await sip.deleteSipTrunk(trunk.sipTrunkId).catch(() => undefined);
    },
  };
}

/** A baresip event (ctrl_tcp), e.g. CALL_ESTABLISHED, CALL_CLOSED, CALL_INCOMING. */
export interface PhoneEvent {
  type: string;
  param?: string;
  peeruri?: string;
  [key: string]: unknown;
}

/** Options for {@link SipPhone.start}. */
export interface PhoneOptions {
  /** The phone's number (its From user: LiveKit SIP presents it as `sip.phoneNumber`). */
  number: string;
  /** SIP port (baresip also takes the next one, for TLS). */
  port: number;
  /** Its control port (ctrl_tcp: commands and call events). */
  ctrlPort: number;
  /** Its key port (cons: a key pressed during a call is sent as an RFC 2833 event). */
  keyPort: number;
  /** Pick up incoming calls at once. */
  answer?: boolean;
}

/** A baresip phone on loopback. */
export class SipPhone {
  readonly events: PhoneEvent[] = [];
  private readonly listeners = new Set<() => void>();
  private ctrl!: Socket;
  private buffer = '';
  private stopping = false;

  private constructor(
    private readonly child: ChildProcess,
    readonly dir: string,
    readonly options: PhoneOptions,
  ) {}

  /** Starts baresip with its own config directory under E2E_DIR. */
  static async start(options: PhoneOptions): Promise<SipPhone> {
    const dir = join(E2E_DIR, `phone-${options.port}`);
    mkdirSync(dir, { recursive: true });
    const silence = join(dir, 'silence.wav');
    // baresip hangs up when its audio file ends: the open line is ten minutes of silence.
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', silence, 'trim', '0', '600']);
    writeFileSync(
      join(dir, 'config'),
      [
        'poll_method epoll',
        `sip_listen 127.0.0.1:${options.port}`,
        `audio_player aufile,${join(dir, 'heard.wav')}`,
        `audio_source aufile,${silence}`,
        'audio_alert aufile,/dev/null',
        'module_path /usr/lib/baresip/modules',
        'module g711.so',
        'module aufile.so',
        'module account.so',
        'module menu.so',
        'module ctrl_tcp.so',
        'module cons.so',
        `ctrl_tcp_listen 127.0.0.1:${options.ctrlPort}`,
        `cons_listen 127.0.0.1:${options.keyPort}`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'accounts'),
      `<sip:${options.number}@127.0.0.1:${options.port}>;regint=0${options.answer ? ';answermode=auto' : ''}\n`,
    );
    const child = spawn('baresip', ['-f', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    logChild(child, join(dir, 'baresip.log'));
    const phone = new SipPhone(child, dir, options);
    await phone.connectCtrl();
    return phone;
  }

  private async connectCtrl(): Promise<void> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        this.ctrl = await new Promise<Socket>((resolve, reject) => {
          const s = connect({ host: '127.0.0.1', port: this.options.ctrlPort });
          s.once('connect', () => resolve(s));
          s.once('error', reject);
        });
        break;
      } catch (error) {
        if (Date.now() > deadline || this.child.exitCode !== null) {
          throw new Error(
            `baresip did not open its control port (see ${this.dir}/baresip.log): ${(error as Error).message}`,
          );
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    this.ctrl.on('data', (chunk) => this.read(chunk.toString()));
    // baresip may drop an idle control connection: reconnect while the phone runs.
    this.ctrl.once('close', () => {
      if (!this.stopping && this.child.exitCode === null) {
        this.buffer = '';
        this.connectCtrl().catch(() => undefined);
      }
    });
  }

  /** Netstrings: `len:json,`. */
  private read(text: string): void {
    this.buffer += text;
    for (;;) {
      const colon = this.buffer.indexOf(':');
      if (colon < 0) return;
      const length = Number(this.buffer.slice(0, colon));
      if (this.buffer.length < colon + 1 + length + 1) return;
      const body = this.buffer.slice(colon + 1, colon + 1 + length);
      this.buffer = this.buffer.slice(colon + 1 + length + 1);
      try {
        const message = JSON.parse(body) as { event?: boolean } & PhoneEvent;
        if (message.event) this.events.push(message);
      } catch {
        // not JSON: ignore
      }
      for (const l of this.listeners) l();
    }
  }

  private command(command: string, params = ''): void {
    const body = JSON.stringify({ command, params, token: command });
    this.ctrl.write(`${Buffer.byteLength(body)}:${body},`);
  }

  /** Dials `uri` (e.g. sip:+15550001@127.0.0.1:15060). */
  dial(uri: string): void {
    this.command('dial', uri);
  }

  /** Hangs up the current call (a BYE); a call still ringing is rejected (486 Busy Here). */
  hangup(): void {
    this.command('hangup');
  }

  /** True while a call of this phone has not closed (by its last call event). */
  get inCall(): boolean {
    const last = this.events.filter((e) => /^CALL_(?!DTMF)/.test(e.type)).at(-1);
    return last !== undefined && last.type !== 'CALL_CLOSED';
  }

  /**
   * Hangs up what a failed test left open (a call, or the one a REFER made), so the next
   * test starts on an idle phone. Bounded; never throws.
   */
  async hangUpOpenCalls(timeoutMs = 15_000): Promise<void> {
    for (let i = 0; i < 3 && this.inCall; i++) {
      const from = this.events.length;
      this.hangup();
      await this.event('CALL_CLOSED', timeoutMs, from).catch(() => undefined);
    }
  }

  /** Answers the call ringing now (for a phone without `answer: true`). */
  accept(): void {
    this.command('accept');
  }

  /**
   * Plays `wav` into the call as the phone's microphone, from now, then silence (baresip
   * hangs up when its audio file ends, so the file is padded: `padded` names the copy).
   */
  play(wav: string): void {
    const padded = wav.replace(/\.wav$/, '') + '-line.wav';
    execFileSync('sox', [wav, '-r', '8000', '-c', '1', '-b', '16', padded, 'pad', '0', '300']);
    this.command('ausrc', `aufile,${padded}`);
  }

  /** Presses keys during the call (RFC 2833 telephone-events), `gapMs` apart. */
  async press(keys: string, gapMs = 300): Promise<void> {
    const socket = createSocket('udp4');
    try {
      for (const key of keys) {
        await new Promise<void>((resolve, reject) =>
          socket.send(key, this.options.keyPort, '127.0.0.1', (e) => (e ? reject(e) : resolve())),
        );
        await new Promise((r) => setTimeout(r, gapMs));
      }
    } finally {
      socket.close();
    }
  }

  /** Waits for an event of `type` (after the first `from` events); bounded. */
  event(type: string, timeoutMs = 30_000, from = 0): Promise<PhoneEvent> {
    return waitFor(
      () => this.events.slice(from).find((e) => e.type === type),
      this.listeners,
      timeoutMs,
      `phone ${this.options.number} to report ${type} (events: ${this.events.map((e) => e.type).join(', ')}; log ${this.dir}/baresip.log)`,
    );
  }

  /** Stops baresip. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.ctrl?.destroy();
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * `phone` says `text` into its call (espeak-ng speech at 8 kHz from a WAV named `name` in
 * E2E_DIR, registered with the suite's ears first); resolves once the words have been played.
 */
export async function phoneSays(
  lk: LiveKitSuite,
  phone: SipPhone,
  text: string,
  name: string,
): Promise<void> {
  const wav = join(E2E_DIR, `${name}.wav`);
  const pcm = await synthesize(text, { sampleRate: 8_000 });
  writeFileSync(wav, encodeWav(pcm));
  lk.oracle.register(text, pcm);
  phone.play(wav);
  // The phone is talking for as long as the words take.
  const ms = (pcm.samples.length / pcm.sampleRate) * 1000;
  await new Promise((r) => setTimeout(r, ms + 100));
}

/**
 * A scenario line on a SIP phone: `phone` dials `dial` (livekit-sip's inbound trunk), the
 * dispatch rule makes the call's room (named `<roomPrefix>…`), and a hidden observer joins
 * it to read the agent. The phone speaks (a WAV of espeak-ng speech, 8 kHz, registered with
 * the suite's ears first), keys (RFC 2833) and hangs up (BYE).
 */
export function phoneLine(
  lk: LiveKitSuite,
  phone: SipPhone,
  dial: string,
  roomPrefix: string,
): () => Promise<ScenarioLine> {
  return async () => {
    const from = phone.events.length;
    const before = new Set((await lk.rooms.listRooms()).map((r) => r.name));
    phone.dial(dial);
    await phone.event('CALL_ESTABLISHED', 120_000, from);
    // The server has no event a non-participant can wait on for a new room: ask it.
    let room: string | undefined;
    const deadline = Date.now() + 30_000;
    while (!room && Date.now() < deadline) {
      room = (await lk.rooms.listRooms())
        .map((r) => r.name)
        .find((r) => r.startsWith(roomPrefix) && !before.has(r));
      if (!room) await new Promise((r) => setTimeout(r, 200));
    }
    if (!room) throw new Error(`the call made no room ${roomPrefix}… within 30 s`);
    const ears = await lk.observe(room);
    const closed = () => phone.events.slice(from).some((e) => e.type === 'CALL_CLOSED');
    let said = 0;
    return {
      room,
      ears,
      async say(text) {
        said += 1;
        await phoneSays(lk, phone, text, `${room}-${said}`);
      },
      press: (keys, gapMs) => phone.press(keys, gapMs),
      async hangup() {
        if (closed()) return;
        phone.hangup();
        await phone.event('CALL_CLOSED', 30_000, from);
      },
      get ended() {
        return closed() || ears.disconnectReason !== undefined;
      },
      async endedByBot(timeoutMs) {
        await phone.event('CALL_CLOSED', timeoutMs, from);
      },
    };
  };
}
