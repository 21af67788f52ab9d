/**
 * The LiveKit server's webhooks, as the guardian reads them: each request's body read whole
 * within bounds (size, time), its signature checked (livekit-server-sdk `WebhookReceiver`: a
 * JWT signed with the API secret carrying the body's SHA-256), then turned into what the
 * guardian acts on: an agent joined, an agent left (on purpose, or lost), a room finished.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookEvent, WebhookReceiver } from 'livekit-server-sdk';
import { logLine } from '../../core/log.js';
import { type Guardian, leftOnPurpose } from './guardian.js';
import { AGENT_NAME_ATTRIBUTE, KIND } from './server-api.js';

/** Largest webhook body read (bytes). */
const MAX_BODY_BYTES = 1 << 20;
/** A webhook body must arrive whole within this. */
const BODY_TIMEOUT_MS = 10_000;

/** LiveKit's DisconnectReason names, by number (livekit/protocol `DisconnectReason`). */
const DISCONNECT_REASONS = [
  'UNKNOWN_REASON',
  'CLIENT_INITIATED',
  'DUPLICATE_IDENTITY',
  'SERVER_SHUTDOWN',
  'PARTICIPANT_REMOVED',
  'ROOM_DELETED',
  'STATE_MISMATCH',
  'JOIN_FAILURE',
  'MIGRATION',
  'SIGNAL_CLOSE',
  'ROOM_CLOSED',
  'USER_UNAVAILABLE',
  'USER_REJECTED',
  'SIP_TRUNK_FAILURE',
  'CONNECTION_TIMEOUT',
  'MEDIA_FAILURE',
  'AGENT_ERROR',
];

/** The name of a DisconnectReason number. */
export function disconnectReasonName(reason: number | undefined): string {
  return DISCONNECT_REASONS[reason ?? 0] ?? `REASON_${reason}`;
}

/** Applies one verified webhook event to the guardian. */
export function applyWebhook(guardian: Guardian, event: WebhookEvent): void {
  const room = event.room?.name;
  if (!room) return;
  if (event.event === 'room_finished') {
    guardian.roomFinished(room);
    return;
  }
  const p = event.participant;
  if (!p || p.kind !== KIND.agent) return;
  const agentName = p.attributes?.[AGENT_NAME_ATTRIBUTE];
  if (event.event === 'participant_joined') {
    if (agentName) guardian.agentJoined(room, agentName);
    return;
  }
  if (event.event !== 'participant_left' && event.event !== 'participant_connection_aborted') {
    return;
  }
  const reason = disconnectReasonName(p.disconnectReason);
  if (leftOnPurpose(reason) || !agentName) {
    guardian.agentLeft(room, p.identity);
    return;
  }
  void guardian.agentLost({
    room,
    identity: p.identity,
    agentName,
    source: 'webhook',
    reason: `the server dropped the agent (${reason})`,
  });
}

/**
 * The HTTP handler of the webhook route: 413 for a body over 1 MiB, 408 when it does not
 * arrive within 10 s, 401 when its signature does not verify, else 200 and the event applied.
 */
export function webhookHandler(
  guardian: Guardian,
  receiver: WebhookReceiver,
  onEvent?: (event: WebhookEvent) => void,
) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (status: number, text: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      res.writeHead(status, { 'content-type': 'text/plain' }).end(text);
      if (status >= 400) req.resume();
    };
    const timer = setTimeout(() => {
      finish(408, 'the body did not arrive in time');
      req.destroy();
    }, BODY_TIMEOUT_MS);
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        finish(413, 'body too large');
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', () => finish(400, 'the request broke'));
    req.on('end', () => {
      if (done) return;
      const body = Buffer.concat(chunks).toString('utf8');
      receiver.receive(body, req.headers.authorization).then(
        (event) => {
          finish(200, 'ok');
          applyWebhook(guardian, event);
          onEvent?.(event);
        },
        (error: unknown) => {
          logLine('taskline.guardian', 'warn', 'webhook refused', {
            reason: error instanceof Error ? error.message : String(error),
          });
          finish(401, 'the webhook signature does not verify');
        },
      );
    });
  };
}
