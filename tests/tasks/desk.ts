// A front desk whose `capture` tool runs one typed task and keeps its outcomes, and a call
// started with it: the harness the typed-task tests share.
import { llm, voice } from '@livekit/agents';
import { expect } from 'vitest';
import type { Outcome } from '../../src/outcome.js';
import type { TaskDefinition } from '../../src/tasks/define.js';
import { type ScriptEntry, ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

/** An agent whose `capture` tool awaits the task and records each outcome. */
export class Desk extends voice.Agent {
  outcomes: Outcome<unknown>[] = [];
  constructor(task: TaskDefinition<unknown>) {
    super({
      instructions: 'Front desk.',
      tools: {
        capture: llm.tool({
          description: 'Capture the value.',
          execute: async () => {
            this.outcomes.push(await task.run());
            return 'done';
          },
        }),
      },
    });
  }
}

/**
 * Starts a call whose desk runs `def` after the caller's "hello" (the task's prompt is the last
 * line then); `taskScript` is what the task's model says if it is asked.
 */
export async function startTask<T>(def: TaskDefinition<T>, taskScript: ScriptEntry[] = []) {
  const model = new ScriptedLLM()
    .for(Desk, [{ toolCalls: [{ name: 'capture' }] }, { say: 'Thank you.' }])
    .for(def.name, taskScript);
  const desk = new Desk(def as TaskDefinition<unknown>);
  const caller = await SimulatedCaller.start({ agent: desk, llm: model });
  await caller.say('hello');
  expect(caller.agentLines.at(-1)).toBe(def.spec.prompt);
  return { desk, caller, model };
}
