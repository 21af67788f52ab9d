/**
 * examples/concierge: the demo call keeps notes in AGENTS.md, follows the skill, computes in
 * Python, charges the room only after the caller says yes; the next call of the same caller
 * starts with the notes.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import * as demo from '../../examples/concierge/demo.js';
import concierge, { createConcierge, GREETING } from '../../examples/concierge/index.js';
import { SqliteFileStore } from '../../src/deep-agent/tools/files/backends/store-sqlite.js';
import { ScriptedLLM, SimulatedCaller } from '../../src/testing/index.js';

const open: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

describe('examples/concierge', { timeout: 90_000 }, () => {
  it('plays the demo call: notes, skill, Python, and a spoken yes before the charge', async () => {
    const db = new Database(':memory:');
    open.push({ close: () => void db.close() });
    const notes = new SqliteFileStore({ db, tenant: 'harbor-hotel', user: '+15550001234' });
    const call = createConcierge({ notes });
    open.push(call.agent);
    const model = demo.createScriptedModel();
    // The Python turn cold-starts pyodide (~10 s on a loaded 2-core machine): a wider hang guard.
    const caller = await SimulatedCaller.start({ agent: call.agent, llm: model, guardMs: 60_000 });
    open.push(caller);
    await caller.play(demo.demoScript);

    expect(caller.agentLines).toEqual([
      GREETING,
      "Noted, Sam: vegetarian. I'll remember that. How can I help?",
      "With a 20 percent tip that's 144.00 dollars, 36.00 each.",
      "I'm about to charge 144.00 dollars to room 1204. Shall I go ahead?",
      'Done: 144 dollars is on room 1204. Enjoy your evening, Sam.',
      'Good night, Sam!',
    ]);
    expect(await call.result()).toEqual({
      charges: [{ room: '1204', amount: 144, description: 'dinner at the Grill' }],
      notes: demo.DEMO_NOTES,
    });
    // The skill was listed by name only, and its script's output came from Python.
    const first = model.requests[0];
    const system = first?.messages
      .filter((m) => m.role === 'system')
      .map((m) => m.text)
      .join('\n');
    expect(system).toContain('- tip-calculator: Work out the tip');
    expect(system).not.toContain('Never do the arithmetic yourself');
    expect(model.requests[4]?.lastToolOutput?.output).toContain('total with tip: 144.00');
    model.assertComplete();

    // The same caller calls again: the notes are in the new agent's instructions.
    const again = createConcierge({
      notes: new SqliteFileStore({ db, tenant: 'harbor-hotel', user: '+15550001234' }),
    });
    open.push(again.agent);
    const model2 = new ScriptedLLM().for('concierge', [{ say: 'Welcome back, Sam!' }]);
    const caller2 = await SimulatedCaller.start({ agent: again.agent, llm: model2 });
    open.push(caller2);
    await caller2.say('Hello again');
    const system2 = model2.requests[0]?.messages
      .filter((m) => m.role === 'system')
      .map((m) => m.text)
      .join('\n');
    expect(system2).toContain('- Name: Sam, room 1204');
    expect(system2).toContain('- Vegetarian');
  });

  it('is a call module the runners can start', () => {
    expect(concierge.name).toBe('concierge');
    const call = concierge.createCall();
    expect(call.agent.id).toBe('concierge');
    expect(call.result()).toEqual({ charges: [] });
  });
});
