import { createSurveyModel } from '../../examples/survey/demo.js';
import { SurveyCall } from '../../examples/survey/index.js';
import type { FlowRunOptions } from '../../src/flows/runner.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import type { VirtualClock } from '../../src/testing/virtual-clock.js';

/** Starts a simulated survey call; `agent.result` holds the flow result once it ends. */
export async function startSurvey(
  options: FlowRunOptions & { clock?: VirtualClock; callId?: string } = {},
) {
  const { clock, callId, ...runOptions } = options;
  const agent = new SurveyCall(runOptions);
  const model = createSurveyModel();
  const caller = await SimulatedCaller.start({ agent, llm: model, clock, callId });
  return { agent, model, caller };
}
