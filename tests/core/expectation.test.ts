// The call's expectation stack: nested captures (a capture whose tool runs another) publish on
// top of each other; releasing the inner one restores the outer; a capture that replaces its
// own expectation (a read-back starts) is one change for listeners.
import { voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { attachCall } from '../../src/core/call.js';
import type { Expectation } from '../../src/core/expectation.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';

const expecting = (task: string, kind: Expectation['kind']): Expectation => ({
  task,
  kind,
  phrases: [],
  judge: () => 'unknown',
});

describe('call.expect', () => {
  it('stacks nested expectations and tells listeners only when the current one changes', () => {
    const call = attachCall(new voice.AgentSession({ llm: new ScriptedLLM() }));
    const seen: Array<string | undefined> = [];
    call.on('expecting', (e) => seen.push(e?.task));
    const releaseOuter = call.expect(expecting('account', 'digits'));
    const releaseInner = call.expect(expecting('pin', 'digits'));
    expect(call.expectation?.task).toBe('pin');
    releaseInner();
    expect(call.expectation?.task).toBe('account');
    // The outer task starts a read-back: publish the new one, then release the old one.
    const releaseReadBack = call.expect(expecting('account', 'yesNo'));
    releaseOuter();
    expect(call.expectation?.kind).toBe('yesNo');
    releaseReadBack();
    releaseReadBack();
    expect(call.expectation).toBeUndefined();
    expect(seen).toEqual(['account', 'pin', 'account', 'account', undefined]);
  });
});
