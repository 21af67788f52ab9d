import { initializeLogger } from '@livekit/agents';
import { vi } from 'vitest';

/** Captures what upstream's logger (and so taskline) writes, at the most verbose level. */
export function captureLogs(): { lines: string[]; stop(): void } {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  }) as never);
  initializeLogger({ pretty: false, level: 'trace' });
  return {
    lines,
    stop() {
      initializeLogger({ pretty: false, level: 'silent' });
      spy.mockRestore();
    },
  };
}

/** A log line's text without fields that are numbers by nature (time, pid, host). */
export function logText(line: string): string {
  try {
    const record = JSON.parse(line) as Record<string, unknown>;
    delete record.time;
    delete record.pid;
    delete record.hostname;
    return JSON.stringify(record);
  } catch {
    return line;
  }
}
