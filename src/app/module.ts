import type { llm, voice } from '@livekit/agents';

/** One scripted caller action (the JSON form used by `taskline run --script`). */
export type CallerAction =
  | { say: string }
  | { bargeIn: string }
  | { dtmf: string; gapMs?: number; mask?: boolean }
  | { silence: number }
  | { hangup: true };

/** A running call's agent and a way to read its typed result once the call ends. */
export interface CallInstance<R = unknown> {
  agent: voice.Agent;
  /** The call's typed result so far (e.g. the flow's answers); printed by the runner. */
  result(): R;
}

/**
 * A bot packaged so every runner can start it: the README demo and tests (scripted
 * model + simulated caller), `npx taskline run` in a terminal, and a LiveKit room.
 */
export interface CallModule<R = unknown> {
  name: string;
  description: string;
  /** Builds a fresh call: its first agent and how to read its result. */
  createCall(): CallInstance<R>;
  /** A scripted model so the bot runs with no API key (keyed by agent/task, see ScriptedLLM). */
  createScriptedModel(): llm.LLM;
  /** The demo call's caller side. */
  demoScript: CallerAction[];
}

/** Declares a {@link CallModule} with its result type inferred. */
export function defineCallModule<R>(module: CallModule<R>): CallModule<R> {
  return module;
}
