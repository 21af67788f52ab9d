// A long audio call with a background result held while the caller speaks leaks no listeners.
// Upstream's `waitForIdle()` leaves abort listeners on the agent's activity until it closes,
// and while the caller speaks it adds more on every turn of the event loop; delivering a
// result through it (as upstream's async-tool replies do) gave MaxListenersExceededWarning in
// audio runs. The delivery floor waits on events instead.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { audioMode } from '../../src/scenarios/audio/mode.js';
import type { CallMode } from '../../src/scenarios/driver.js';
import { runScenarioFile } from '../../src/scenarios/scenario.js';
import { audioMissing, root } from './helpers.js';

const missing = await audioMissing();

describe.skipIf(missing)('an audio call with a result held over the caller’s speech', () => {
  let mode: CallMode | undefined;
  afterAll(() => mode?.close());

  it('passes with no MaxListenersExceededWarning', { timeout: 240_000 }, async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      mode = await audioMode();
      const report = await runScenarioFile(
        join(root, 'examples', 'feedback', 'complaint.scenario.yaml'),
        { mode },
      );
      expect(report.runs[0]?.failures).toEqual([]);
      expect(report.status).toBe('passed');
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.includes('MaxListenersExceeded'))).toEqual([]);
  });
});
