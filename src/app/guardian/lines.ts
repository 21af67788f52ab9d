/**
 * Newline-delimited JSON over a socket, bounded: each side of a lifeline reads lines with
 * {@link LineReader} and writes them with {@link writeLine}.
 */
import type { Socket } from 'node:net';
import { MAX_LINE_BYTES } from './protocol.js';

/**
 * Splits a socket's bytes into lines of at most {@link MAX_LINE_BYTES}; calls `onLine` with
 * each parsed JSON value (or `undefined` for a line that is not JSON) and `onTooLong` once
 * when a line passes the bound (the reader then stops).
 */
export class LineReader {
  #buffer = '';
  #stopped = false;

  constructor(
    private readonly onLine: (value: unknown) => void,
    private readonly onTooLong: () => void,
  ) {}

  /** Feeds received bytes. */
  push(chunk: Buffer | string): void {
    if (this.#stopped) return;
    this.#buffer += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    for (;;) {
      const end = this.#buffer.indexOf('\n');
      if (end < 0) break;
      const line = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 1);
      if (Buffer.byteLength(line) >= MAX_LINE_BYTES) {
        this.#tooLong();
        return;
      }
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        value = undefined;
      }
      this.onLine(value);
      if (this.#stopped) return;
    }
    if (Buffer.byteLength(this.#buffer) >= MAX_LINE_BYTES) this.#tooLong();
  }

  /** Stops reading (nothing more is reported). */
  stop(): void {
    this.#stopped = true;
    this.#buffer = '';
  }

  #tooLong(): void {
    this.stop();
    this.onTooLong();
  }
}

/** Writes one JSON line; false when the socket can no longer be written. */
export function writeLine(socket: Socket, value: unknown): boolean {
  if (socket.destroyed || !socket.writable) return false;
  socket.write(`${JSON.stringify(value)}\n`);
  return true;
}
