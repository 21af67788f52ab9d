/**
 * Builds what one scenario run needs from its module: the model (the module's scripted
 * one, or replies the scenario scripts), the call factory, and the stand-ins a runner hands
 * a call instead of a room's (a recording transferer, a checkpoint store that keeps writes).
 */
import type { llm, voice } from '@livekit/agents';
import { loadCallModule } from '../app/load.js';
import { type CallInstance, type CallModule, loadCallDemo } from '../app/module.js';
import { TasklineError } from '../core/errors.js';
import { MemoryCheckpointStore } from '../flows/checkpoints/memory.js';
import type { CheckpointKey, FlowState } from '../flows/checkpoints/types.js';
import { RecordingTransferer } from '../telephony/transfer.js';
import { ScriptedLLM, type ScriptStep } from '../testing/scripted-llm.js';
import type { LoadedScenario } from './load.js';
import type { ScenarioSpec } from './schema.js';

/** A memory checkpoint store that also keeps every state written, in order. */
export class RecordingCheckpointStore extends MemoryCheckpointStore {
  /** Every state written, as written. */
  readonly writes: FlowState[] = [];

  override async save(key: CheckpointKey, state: FlowState, expectedVersion: number) {
    const version = await super.save(key, state, expectedVersion);
    this.writes.push(structuredClone(state));
    return version;
  }
}

/** A module resolved once per scenario file; calls are built from it per run. */
export interface ScenarioModule {
  module: CallModule;
  createModel(): llm.LLM;
  createCall: CallModule['createCall'];
  /** How the model is described in reports. */
  modelLabel: string;
}

/** One built call with the stand-ins the runner watches. */
export interface BuiltCall {
  instance: CallInstance;
  transferer: RecordingTransferer;
  checkpoints: RecordingCheckpointStore;
}

const modules = new Map<string, Promise<CallModule>>();

/** Loads the scenario's module (once per process) and picks its model. */
export async function resolveScenarioModule(scenario: LoadedScenario): Promise<ScenarioModule> {
  let loading = modules.get(scenario.module);
  if (!loading) {
    loading = loadCallModule(scenario.module);
    modules.set(scenario.module, loading);
  }
  let module: CallModule;
  try {
    module = await loading;
  } catch (error) {
    modules.delete(scenario.module);
    const why = error instanceof Error ? error.message : String(error);
    throw new TasklineError('invalid_scenario', `${scenario.file}: cannot load the module: ${why}`);
  }
  const demo = await loadCallDemo(module);
  const createCall = demo.createCall ?? module.createCall;
  const model = scenario.spec.model ?? 'module';
  if (model !== 'module') {
    return {
      module,
      createCall,
      createModel: () => scriptedFromSpec(model),
      modelLabel: 'scripted in the scenario',
    };
  }
  const create = demo.createScriptedModel;
  if (!create) {
    throw new TasklineError(
      'invalid_scenario',
      `${scenario.file}: ${module.name} has no scripted model: script the replies in the scenario (model: {agent_id: [{say: ...}]}) or give the module one in its demo.ts (createScriptedModel).`,
    );
  }
  return { module, createCall, createModel: create, modelLabel: "the module's scripted model" };
}

/** Builds one call of the module for `session`, with recording stand-ins. */
export function buildCall(parts: ScenarioModule, session: voice.AgentSession): BuiltCall {
  const transferer = new RecordingTransferer();
  const checkpoints = new RecordingCheckpointStore();
  const instance = parts.createCall({ session, transferer, checkpoints });
  return { instance, transferer, checkpoints };
}

function scriptedFromSpec(
  model: Exclude<NonNullable<ScenarioSpec['model']>, 'module'>,
): ScriptedLLM {
  const scripted = new ScriptedLLM();
  for (const [key, steps] of Object.entries(model)) {
    scripted.for(
      key,
      steps.map(
        (s): ScriptStep => ({
          ...(s.say !== undefined ? { say: s.say } : {}),
          ...(s.fail !== undefined ? { fail: s.fail } : {}),
          ...(s.tool_calls
            ? { toolCalls: s.tool_calls.map((c) => ({ name: c.name, args: c.args ?? {} })) }
            : {}),
        }),
      ),
    );
  }
  return scripted;
}
