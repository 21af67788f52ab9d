// A scenario that cannot run through real audio says why, and the reason is printed with the
// skip (a bare `audio: false` asks for one).
import { describe, expect, it } from 'vitest';
import type { CallMode } from '../../src/scenarios/driver.js';
import { parseScenario } from '../../src/scenarios/load.js';
import { formatScenario } from '../../src/scenarios/report.js';
import { runScenario } from '../../src/scenarios/scenario.js';

/** Audio mode as far as the skip is concerned: a skipped scenario never starts a call. */
const audio = {
  name: 'audio',
  sessionOptions: () => Promise.reject(new Error('not started')),
  attach: () => {
    throw new Error('not started');
  },
  close: async () => {},
} satisfies CallMode;

describe('skipping audio mode', () => {
  it('prints the reason skip_audio gives', async () => {
    const scenario = parseScenario(
      'name: keyed then spoken\nskip_audio: needs a real recogniser for the email\nturns:\n  - say: hi\n',
      '/x/a.scenario.yaml',
    );
    const report = await runScenario(scenario, { mode: audio });
    expect(report.status).toBe('skipped');
    expect(formatScenario(report, '/x')).toEqual([
      'SKIP  a.scenario.yaml  keyed then spoken  (audio, 0.0 s)',
      '      skipped: not in audio mode: needs a real recogniser for the email',
    ]);
  });

  it('asks for a reason when a scenario only says audio: false', async () => {
    const scenario = parseScenario('audio: false\nturns:\n  - say: hi\n', '/x/b.scenario.yaml');
    const report = await runScenario(scenario, { mode: audio });
    expect(report.reason).toBe(
      'the scenario says audio: false (say why with skip_audio: <reason>)',
    );
  });
});
