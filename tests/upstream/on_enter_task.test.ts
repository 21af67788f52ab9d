// Pins what the testing kit's `agentListening` (src/testing/listening.ts) reads: upstream 1.9
// keeps the running `onEnter` of an agent's activity as `Agent._agentActivity._onEnterTask`,
// a Task that is not done while onEnter awaits and is done once it returns. No event marks
// its end; when upstream adds one, the kit can listen to it instead.
import { Future, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { runningOnEnter } from '../../src/testing/listening.js';
import { withSession } from './helpers.js';

describe('an agent activity’s onEnter task', () => {
  it('is running while onEnter awaits and done once it returns', async () => {
    const gate = new Future<void>();
    let entered!: () => void;
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    class Slow extends voice.Agent {
      constructor() {
        super({ instructions: 'slow' });
      }
      override async onEnter(): Promise<void> {
        entered();
        await gate.await;
      }
    }
    await withSession({ agent: new Slow(), replies: [] }, async (session) => {
      await inside;
      const task = runningOnEnter(session);
      expect(task?.done).toBe(false);
      gate.resolve();
      await task?.result;
      expect(runningOnEnter(session)).toBeUndefined();
    });
  });
});
