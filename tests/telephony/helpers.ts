import { voice } from '@livekit/agents';
import type { Outcome } from '../../src/outcome.js';
import type { TypedTask } from '../../src/tasks/typed-task.js';
import { type ScriptEntry, ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

/** An agent that runs one capture task from onEnter and keeps its outcome. */
export class Runner<T> extends voice.Agent {
  readonly outcomes: Outcome<T>[] = [];
  private readonly make: () => TypedTask<T>;

  constructor(make: () => TypedTask<T>) {
    super({ instructions: 'Runs one task.' });
    this.make = make;
  }

  override async onEnter(): Promise<void> {
    this.outcomes.push(await this.make().run());
  }
}

/** Starts a simulated call whose agent runs `make()` once; `script` answers the task's model. */
export async function runTask<T>(
  make: () => TypedTask<T>,
  script: { key?: string; steps?: ScriptEntry[] } = {},
): Promise<{ caller: SimulatedCaller; runner: Runner<T>; model: ScriptedLLM }> {
  const model = new ScriptedLLM();
  if (script.key && script.steps) model.for(script.key, script.steps);
  const runner = new Runner(make);
  const caller = await SimulatedCaller.start({ agent: runner, llm: model });
  return { caller, runner, model };
}
