/**
 * A child process of `taskline test`: runs the scenario files its parent sends, one at a
 * time, and sends back each report. Audio mode is set up once per process.
 */
import type { AudioHearingOptions } from './audio/mode.js';
import type { CallMode } from './driver.js';
import { runScenarioFile, type ScenarioReport } from './scenario.js';
import { textMode } from './text-mode.js';

/** Parent → worker. */
export type WorkerRequest = { type: 'run'; id: number; file: string } | { type: 'exit' };
/** Worker → parent: `ready` once it has loaded and can run files (its time limits start then). */
export type WorkerReply =
  | { type: 'ready' }
  | { type: 'report'; id: number; report: ScenarioReport };
/** How the parent asks every scenario to run (JSON in TASKLINE_SCENARIO_SETTINGS). */
export interface WorkerSettings {
  hearing?: AudioHearingOptions;
  judge?: 'all' | 'captures';
}

const settings = JSON.parse(process.env.TASKLINE_SCENARIO_SETTINGS ?? '{}') as WorkerSettings;

async function modeFromEnv(): Promise<CallMode> {
  if (process.env.TASKLINE_SCENARIO_MODE !== 'audio') return textMode;
  const { audioMode } = await import('./audio/mode.js');
  return audioMode(settings.hearing);
}

if (process.send) {
  const send = process.send.bind(process);
  // The parent is gone (killed, or it gave up on us): nothing is left to report to.
  process.on('disconnect', () => process.exit(1));
  const mode = modeFromEnv();
  void mode.then(
    () => send({ type: 'ready' } satisfies WorkerReply),
    () => process.exit(1),
  );
  // Requests run concurrently (the parent bounds how many); "exit" waits for them.
  const running = new Set<Promise<void>>();
  process.on('message', (request: WorkerRequest) => {
    if (request.type === 'exit') {
      void Promise.allSettled(running).then(async () => {
        await (await mode).close();
        process.exit(0);
      });
      return;
    }
    const task = mode
      .then((m) =>
        runScenarioFile(request.file, {
          mode: m,
          ...(settings.judge ? { judge: settings.judge } : {}),
        }),
      )
      .then((report) => {
        send({ type: 'report', id: request.id, report } satisfies WorkerReply);
      });
    running.add(task);
    void task.finally(() => running.delete(task));
  });
}
