/**
 * Deprecation notices for words and forms taskline still reads but no longer writes (a
 * renamed status in a scenario file, say): one Node `DeprecationWarning` per distinct message
 * per process, so a file run many times says it once, and `--no-deprecation` silences it as it
 * does Node's own.
 */

const said = new Set<string>();

/** Emits `message` as a `DeprecationWarning` with `code`, once per process. */
export function noticeDeprecation(code: string, message: string): void {
  if (said.has(message)) return;
  said.add(message);
  process.emitWarning(message, { type: 'DeprecationWarning', code });
}
