import { vi } from 'vitest';

/**
 * What was written to stdout (where upstream's logger writes) while `body` ran, one entry per
 * write; stdout is restored afterwards, whatever `body` did.
 */
export async function stdoutDuring(body: () => unknown): Promise<string[]> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  }) as never);
  try {
    await body();
  } finally {
    spy.mockRestore();
  }
  return lines;
}
