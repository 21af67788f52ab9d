// Pins @livekit/agents 1.9.0: an exception thrown by Agent.onEnter is swallowed. It is not
// emitted as an `error` event, the session does not close, and nothing is logged at error
// level, so a runner cannot tell a crashed agent from a quiet one. taskline's SessionFailures
// (src/core/session-failures.ts) reads the activity's onEnter task to report it; when this
// test fails, upstream surfaces the exception itself and that workaround can go.
import { voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { SessionFailures } from '../../src/core/session-failures.js';

class Crashing extends voice.Agent {
  constructor() {
    super({ id: 'crashing', instructions: 'crash' });
  }

  override async onEnter(): Promise<void> {
    throw new Error('database is down');
  }
}

describe('onEnter exceptions (upstream 1.9.0)', () => {
  it('are neither emitted nor close the session; SessionFailures reports them', async () => {
    const session = new voice.AgentSession({ llm: new voice.testing.FakeLLM([]) });
    const errors: unknown[] = [];
    const closes: voice.CloseEvent[] = [];
    session.on(voice.AgentSessionEventTypes.Error, (ev) => errors.push(ev));
    session.on(voice.AgentSessionEventTypes.Close, (ev) => closes.push(ev));
    let reported!: () => void;
    const failed = new Promise<void>((resolve) => {
      reported = resolve;
    });
    const failures = new SessionFailures(session, () => reported());
    await session.start({ agent: new Crashing() });
    failures.check();
    await failed; // bounded by the test timeout; resolves within a few microtasks

    // Upstream: silent.
    expect(errors).toEqual([]);
    expect(closes).toEqual([]);
    // taskline: one failure naming the agent and the cause.
    expect(failures.failures.map((f) => [f.source, f.message])).toEqual([
      ['agent', 'crashing.onEnter threw: database is down'],
    ]);
    await session.close();
    expect(closes.map((c) => c.reason)).toEqual(['user_initiated']);
    failures.dispose();
  });
});
