/**
 * Recovery: the work an earlier job of a call left behind when its worker died, found by the
 * call's id through the sub-agents that can find it (`recover`), and started again as
 * background tasks of this job's manager, each running the recovered work's wait instead of
 * its sub-agent, so the result is spoken once, here.
 */
import { logLine } from '../../core/log.js';
import { type AnySubAgent, isVoiceSpecialist } from '../subagent.js';
import type { TaskSnapshot } from '../types.js';
import type { CreateRequest } from './state.js';

/**
 * Asks every sub-agent type with `recover` for call `callId`'s work and starts each through
 * `start`; work that cannot be started (a full queue) is logged and left.
 */
export async function recoverWork(
  types: Iterable<AnySubAgent>,
  callId: string,
  signal: AbortSignal,
  start: (req: CreateRequest) => TaskSnapshot,
): Promise<TaskSnapshot[]> {
  const recovered: TaskSnapshot[] = [];
  for (const spec of types) {
    if (isVoiceSpecialist(spec) || !spec.recover) continue;
    for (const work of await spec.recover(callId, signal)) {
      try {
        recovered.push(
          start({
            subagentType: spec.name,
            description: work.description,
            prompt: work.prompt,
            mode: 'background',
            depth: 1,
            origin: 'host',
            notify: true,
            recovered: (s) => work.wait(s),
          }),
        );
      } catch (error) {
        logLine('taskline.delegation', 'warn', 'recovered work could not be started', {
          subagent: spec.name,
          description: work.description,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
  }
  return recovered;
}
