import { describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/deep-agent/tools/files/backends/memory.js';
import { describeBackendSuite, errorCode } from './backend-suite.js';

describeBackendSuite('memory', (caps) => new MemoryBackend(caps));

describe('MemoryBackend', () => {
  it('keeps each session separate', async () => {
    const a = new MemoryBackend();
    const b = new MemoryBackend();
    await a.write('/notes.md', 'mine');
    expect(await errorCode(b.read('/notes.md'))).toBe('not_found');
  });

  it('tracks used bytes across writes and deletes', async () => {
    const m = new MemoryBackend();
    await m.write('/a.txt', 'ééé');
    await m.write('/b.txt', 'xy');
    expect(m.usedBytes).toBe(8);
    await m.delete('/a.txt');
    expect(m.usedBytes).toBe(2);
  });

  it('stamps modification times from the given clock', async () => {
    let now = 1000;
    const m = new MemoryBackend({ clock: { now: () => now } });
    await m.write('/a.txt', 'x');
    now = 2000;
    await m.write('/b.txt', 'y');
    expect((await m.stat('/a.txt'))?.modifiedAt).toBe(1000);
    expect((await m.stat('/b.txt'))?.modifiedAt).toBe(2000);
  });
});
