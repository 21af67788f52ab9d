// The console's link to the server: the API key (asked once, kept in sessionStorage for this
// tab only), JSON calls in the API's envelope, and the WebSocket of live changes.

const KEY = 'taskline.console.key';

/** The stored key, if the person already entered one in this tab. */
export function storedKey(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

/** Keeps (or forgets) the key for this tab. */
export function storeKey(key: string | undefined): void {
  if (key === undefined) sessionStorage.removeItem(KEY);
  else sessionStorage.setItem(KEY, key);
}

/** A refusal or failure from the API, with its envelope's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Calls the API with the key; resolves `data`, or rejects with the envelope's message. */
export async function call<T>(
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 10_000);
  try {
    const response = await fetch(path, {
      method,
      signal: controller.signal,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const envelope = (await response.json().catch(() => ({}))) as {
      success?: boolean;
      data?: T;
      message?: string;
      code?: string;
    };
    if (!response.ok || envelope.success !== true) {
      throw new ApiError(
        response.status,
        envelope.code ?? 'error',
        envelope.message ?? `HTTP ${response.status}`,
      );
    }
    return envelope.data as T;
  } catch (error) {
    if (error instanceof ApiError) throw error;
    const timedOut = controller.signal.aborted;
    throw new ApiError(
      0,
      'network',
      timedOut ? 'The server did not answer within 10 s.' : String(error),
    );
  } finally {
    clearTimeout(timer);
  }
}

/** A message pushed on the WebSocket. */
export type LiveMessage = { type: string; data: unknown };

/**
 * Keeps a WebSocket to `/delegations/events` open, reconnecting with capped backoff; calls
 * `onOpen` after each (re)connect so the caller reloads what it may have missed.
 */
export function live(
  key: string,
  handlers: {
    onMessage(m: LiveMessage): void;
    onOpen(): void;
    onStatus(text: string, ok: boolean): void;
  },
): () => void {
  let socket: WebSocket | undefined;
  let stopped = false;
  let delay = 500;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const connect = () => {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    socket = new WebSocket(
      `${scheme}://${location.host}/delegations/events?access_token=${encodeURIComponent(key)}`,
    );
    socket.onmessage = (event) => {
      const message = JSON.parse(String(event.data)) as LiveMessage;
      if (message.type === 'ready') {
        delay = 500;
        handlers.onStatus('live', true);
        handlers.onOpen();
      } else handlers.onMessage(message);
    };
    socket.onclose = () => {
      if (stopped) return;
      handlers.onStatus(`reconnecting in ${Math.round(delay / 1000)} s`, false);
      retry = setTimeout(connect, delay);
      delay = Math.min(delay * 2, 15_000);
    };
  };
  connect();
  return () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    socket?.close();
  };
}

/** Creates an element with text content and attributes (never parses HTML). */
export function el(
  tag: string,
  text?: string | number,
  attrs: Record<string, string> = {},
): HTMLElement {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = String(text);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

/** "in 4m 05s" / "3m 10s overdue" for an epoch-second deadline. */
export function countdown(
  deadline: number,
  nowMs = Date.now(),
): { text: string; overdue: boolean } {
  const left = deadline - Math.floor(nowMs / 1000);
  const abs = Math.abs(left);
  const h = Math.floor(abs / 3600);
  const m = Math.floor((abs % 3600) / 60);
  const s = String(abs % 60).padStart(2, '0');
  const span = h > 0 ? `${h}h ${String(m).padStart(2, '0')}m` : `${m}m ${s}s`;
  return left >= 0
    ? { text: `in ${span}`, overdue: false }
    : { text: `${span} overdue`, overdue: true };
}

/** Local time of an epoch-second timestamp. */
export function clockTime(seconds: number): string {
  return new Date(seconds * 1000).toLocaleTimeString();
}
