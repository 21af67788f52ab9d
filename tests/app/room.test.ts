import { isAgent } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import roomEntry from '../../examples/callback/room.js';

describe('roomAgent', () => {
  it('turns a call module into a LiveKit agent definition with a VAD prewarm', async () => {
    expect(isAgent(roomEntry)).toBe(true);
    expect(typeof roomEntry.entry).toBe('function');
    const proc = { userData: {} as Record<string, unknown> };
    await roomEntry.prewarm?.(proc as never);
    // The Silero model ships inside its package: it loads offline.
    expect(proc.userData.vad).toBeDefined();
    expect((proc.userData.vad as { label: string }).label).toBe('silero.VAD');
  });
});
