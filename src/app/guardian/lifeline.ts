/**
 * The job's side of a lifeline (see ./protocol.ts): opened by the room entry for each call
 * when a guardian is configured, kept open (reconnecting after a drop) until the job leaves
 * the call on purpose and says `done`. Never in the way of the call: a guardian that cannot
 * be reached is logged once and retried in the background.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { TasklineError } from '../../core/errors.js';
import { logLine } from '../../core/log.js';
import { loadOptional } from '../../core/optional.js';
import { LineReader, writeLine } from './lines.js';
import {
  BEAT_INTERVAL_MS,
  GuardianLine,
  type Hello,
  LIFELINE_PATH,
  LIFELINE_PROTOCOL,
} from './protocol.js';

/** Options for {@link openLifeline}. */
export interface LifelineOptions {
  /** The guardian's base URL (`http://127.0.0.1:7890`). */
  url: string;
  /** LiveKit API key and secret: the lifeline's token is signed with them. */
  apiKey: string;
  apiSecret: string;
  /** The call this job serves. */
  call: Omit<Hello, 'type'>;
  /** Longest wait for the guardian's `bye` after `done` (default 2,000 ms). */
  doneTimeoutMs?: number;
  /** Called each time the guardian greets the lifeline (first connect and every reconnect). */
  onConnected?: () => void;
}

/** A job's open lifeline. */
export interface Lifeline {
  /** True while connected and greeted by the guardian. */
  readonly connected: boolean;
  /**
   * Tells the guardian the job leaves the call on purpose (the call ended, was transferred,
   * the worker is draining), waits for its `bye` (bounded) and closes. Safe to call twice.
   */
  done(reason: string): Promise<void>;
}

/** Waits between reconnect attempts: 0.5 s doubling, capped at 5 s. */
function backoffMs(attempt: number): number {
  return Math.min(500 * 2 ** Math.min(attempt, 4), 5_000);
}

/** Checks a guardian URL; throws `invalid_argument` for anything but http(s). */
export function checkGuardianUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TasklineError(
      'invalid_argument',
      `The guardian URL ${JSON.stringify(url)} is not a URL; use http://host:port.`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TasklineError(
      'invalid_argument',
      `The guardian URL must be http:// or https:// (got ${parsed.protocol}).`,
    );
  }
  return parsed;
}

/**
 * Opens the call's lifeline to the guardian at `options.url` and keeps it open until
 * `done()`. Returns at once; connecting happens in the background.
 */
export function openLifeline(options: LifelineOptions): Lifeline {
  const base = checkGuardianUrl(options.url);
  const target = new URL(LIFELINE_PATH, base);
  const call = options.call;
  let socket: Socket | undefined;
  let greeted = false;
  let finished = false;
  let attempt = 0;
  let warned = false;
  let retry: NodeJS.Timeout | undefined;
  let beat: NodeJS.Timeout | undefined;
  let onBye: (() => void) | undefined;

  const log = (level: 'info' | 'warn' | 'debug', message: string, fields = {}) =>
    logLine('taskline.lifeline', level, message, { room: call.room, jobId: call.jobId, ...fields });

  const scheduleRetry = (why: string) => {
    socket = undefined;
    greeted = false;
    clearInterval(beat);
    if (finished) return;
    if (!warned) {
      warned = true;
      log('warn', 'the guardian cannot be reached: retrying in the background', { reason: why });
    }
    retry = setTimeout(connect, backoffMs(attempt++));
    retry.unref();
  };

  const adopt = (s: Socket, head: Buffer) => {
    socket = s;
    s.setNoDelay(true);
    const reader = new LineReader(
      (value) => {
        const line = GuardianLine.safeParse(value);
        if (!line.success) return;
        if (line.data.type === 'welcome') {
          greeted = true;
          attempt = 0;
          if (warned) log('info', 'lifeline to the guardian restored');
          warned = false;
          options.onConnected?.();
        } else {
          onBye?.();
        }
      },
      () => s.destroy(),
    );
    if (head.length > 0) reader.push(head);
    s.on('data', (chunk: Buffer) => reader.push(chunk));
    s.on('error', () => undefined);
    s.on('close', () => {
      reader.stop();
      onBye?.();
      if (socket === s) scheduleRetry('the guardian closed the lifeline');
    });
    writeLine(s, { type: 'hello', ...call } satisfies Hello);
    beat = setInterval(() => writeLine(s, { type: 'beat' }), BEAT_INTERVAL_MS);
    beat.unref();
  };

  const connect = () => {
    if (finished) return;
    void bearer(options, call).then(
      (token) => {
        if (finished) return;
        const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
        const req = send(target, {
          method: 'GET',
          headers: {
            Connection: 'Upgrade',
            Upgrade: LIFELINE_PROTOCOL,
            Authorization: `Bearer ${token}`,
          },
          timeout: 10_000,
        });
        req.on('upgrade', (_res: IncomingMessage, s: Socket, head: Buffer) => {
          if (finished) {
            s.destroy();
            return;
          }
          adopt(s, head);
        });
        req.on('response', (res: IncomingMessage) => {
          res.resume();
          scheduleRetry(`the guardian answered ${res.statusCode}`);
        });
        req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
        req.on('error', (error) => scheduleRetry(error.message));
        req.end();
      },
      (error: unknown) => {
        finished = true;
        log('warn', 'no lifeline for this call', {
          reason: error instanceof Error ? error.message : String(error),
        });
      },
    );
  };

  connect();

  return {
    get connected() {
      return greeted && socket !== undefined;
    },
    async done(reason) {
      if (finished) return;
      finished = true;
      clearTimeout(retry);
      clearInterval(beat);
      const s = socket;
      if (!s || !greeted) {
        s?.destroy();
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.doneTimeoutMs ?? 2_000);
        onBye = () => {
          clearTimeout(timer);
          resolve();
        };
        if (!writeLine(s, { type: 'done', reason: reason.slice(0, 512) })) onBye();
      });
      s.end();
    },
  };
}

/** A short-lived token naming the job and its room, signed with the LiveKit API secret. */
async function bearer(options: LifelineOptions, call: LifelineOptions['call']): Promise<string> {
  const { AccessToken } = await loadOptional(
    () => import('livekit-server-sdk'),
    'livekit-server-sdk',
    'the lifeline to the guardian',
  );
  const token = new AccessToken(options.apiKey, options.apiSecret, {
    identity: call.jobId,
    ttl: 60,
  });
  token.addGrant({ room: call.room, agent: true });
  return token.toJwt();
}
