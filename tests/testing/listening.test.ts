// The testing kit knows when the agent listens instead of guessing from a pause: an agent
// whose onEnter is still working (opening a store before its flow starts) is not listening
// yet, so the simulated caller's first words reach the flow's first question, not the
// tool-less agent around it. Nothing in the bot has to declare anything.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { flow } from '../../src/flows/builder.js';
import { yesNo } from '../../src/tasks/prebuilt.js';
import { ScriptedLLM, SimulatedCaller } from '../../src/testing/index.js';
import { agentListening } from '../../src/testing/listening.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

const consent = flow('consent').step('ok', yesNo({ name: 'ok', question: 'May we go on?' }));

/** Greets, then does real asynchronous work (a store opening) before its flow asks anything. */
class SlowStart extends voice.Agent {
  answers: unknown;
  constructor(private readonly workMs: number) {
    super({ instructions: 'You greet the caller, then run a flow.' });
  }

  override async onEnter(): Promise<void> {
    this.session.say('Welcome to the pharmacy.');
    await new Promise((resolve) => setTimeout(resolve, this.workMs)); // e.g. opening SQLite
    const result = await consent.run();
    this.answers = result.answers;
  }
}

describe('the simulated caller knows when the agent listens', () => {
  it('waits for an onEnter still working before the first question, then answers that question', async () => {
    const agent = new SlowStart(200);
    const model = new ScriptedLLM();
    caller = await SimulatedCaller.start({ agent, llm: model });
    expect(caller.agentLines).toEqual(['Welcome to the pharmacy.', 'May we go on?']);
    await caller.say('yes');
    expect(agent.answers).toEqual({ ok: true });
    // The outer agent's model was never asked: the words went to the question.
    expect(model.requests.map((r) => r.agentId)).toEqual([]);
  });

  it('agentListening: not while onEnter works, yes once a capture waits', async () => {
    const agent = new SlowStart(200);
    const session = new voice.AgentSession({ llm: new ScriptedLLM() });
    caller = new SimulatedCaller(session);
    const states: boolean[] = [];
    session.on(voice.AgentSessionEventTypes.AgentStateChanged, () => {
      states.push(agentListening(session, caller!.call));
    });
    await session.start({ agent });
    await caller.settle();
    expect(agentListening(session, caller.call)).toBe(true);
    // While the greeting had played and onEnter was still working, it was not listening.
    expect(states).toContain(false);
  });
});
