import { llm, voice } from '@livekit/agents';
import type { Outcome } from '../../src/outcome.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import type { VirtualClock } from '../../src/testing/virtual-clock.js';

/**
 * The fault suite's harness: a front desk whose `capture` tool awaits one task (an upstream
 * AgentTask resolving an Outcome) and keeps what the awaiter saw — the outcome, or the error
 * it threw — so every test can assert the typed result, what the caller heard, and that the
 * call went on (a later turn is answered).
 */
export class Desk<T> extends voice.Agent {
  readonly outcomes: Outcome<T>[] = [];
  readonly errors: unknown[] = [];
  current: voice.AgentTask<Outcome<T>> | undefined;
  private readonly make: () => voice.AgentTask<Outcome<T>>;

  constructor(make: () => voice.AgentTask<Outcome<T>>, id = 'desk') {
    super({
      id,
      instructions: 'Front desk.',
      tools: {
        capture: llm.tool({
          description: 'Capture the value.',
          execute: async () => {
            const task = this.make();
            this.current = task;
            try {
              const outcome = await task.run();
              this.outcomes.push(outcome);
              return outcome.status;
            } catch (error) {
              this.errors.push(error);
              throw error;
            }
          },
        }),
      },
    });
    this.make = make;
  }
}

/**
 * Starts a call whose caller asks the desk to capture. A ScriptedLLM gets the desk's turns
 * scripted (call `capture`, then "Back at the desk."); any other model (`llm`) must answer
 * them itself.
 */
export async function startDesk<T>(
  make: () => voice.AgentTask<Outcome<T>>,
  options: { model?: ScriptedLLM; llm?: llm.LLM; clock?: VirtualClock; afterCapture?: string } = {},
): Promise<{ desk: Desk<T>; caller: SimulatedCaller; model: ScriptedLLM }> {
  const model = options.model ?? new ScriptedLLM();
  const desk = new Desk(make);
  model.for(Desk, [
    { toolCalls: [{ name: 'capture' }] },
    { say: options.afterCapture ?? 'Back at the desk.' },
  ]);
  const caller = await SimulatedCaller.start({
    agent: desk,
    llm: options.llm ?? model,
    clock: options.clock,
  });
  await caller.say('I want to give you a value');
  return { desk, caller, model };
}

/** An agent that replaces the task with `session.updateAgent` (a supervisor taking over). */
export class Supervisor extends voice.Agent {
  constructor() {
    super({ id: 'supervisor', instructions: 'A supervisor took over the call.' });
  }
  override async onEnter(): Promise<void> {
    this.session.say('A supervisor here; I will take it from now.');
  }
}
