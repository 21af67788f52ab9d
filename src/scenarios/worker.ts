/**
 * A child process of `taskline test`: runs the scenario files its parent sends, one at a
 * time, and sends back each report. Audio mode is set up once per process.
 */
import type { CallMode } from './driver.js';
import { runScenarioFile, type ScenarioReport } from './scenario.js';
import { textMode } from './text-mode.js';

/** Parent → worker. */
export type WorkerRequest = { type: 'run'; id: number; file: string } | { type: 'exit' };
/** Worker → parent. */
export type WorkerReply = { type: 'report'; id: number; report: ScenarioReport };

async function modeFromEnv(): Promise<CallMode> {
  if (process.env.TASKLINE_SCENARIO_MODE !== 'audio') return textMode;
  const { audioMode } = await import('./audio/mode.js');
  return audioMode();
}

if (process.send) {
  const send = process.send.bind(process);
  const mode = modeFromEnv();
  let queue = Promise.resolve();
  process.on('message', (request: WorkerRequest) => {
    queue = queue.then(async () => {
      if (request.type === 'exit') {
        await (await mode).close();
        process.disconnect();
        process.exit(0);
      }
      const report = await runScenarioFile(request.file, { mode: await mode });
      send({ type: 'report', id: request.id, report } satisfies WorkerReply);
    });
  });
}
