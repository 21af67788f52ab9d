// Pins the reach taskline's logger masking makes into upstream's logger (src/core/log.ts,
// maskLogOutput): @livekit/agents 1.9 logs through pino 8, which keeps its destination (a
// multistream: stdout at the chosen level, OpenTelemetry at debug) under a private symbol
// described "pino.stream", and child loggers reach it through their prototype. If upstream
// changes logger, maskLogOutput returns false and this test fails.
import { initializeLogger, log } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { maskLogOutput } from '../../src/core/log.js';
import { stdoutDuring } from '../stdout.js';

describe("upstream's logger destination", () => {
  it('is wrapped once for the root and every child, and level filtering still applies', async () => {
    const lines = await stdoutDuring(() => {
      try {
        initializeLogger({ pretty: false, level: 'info' });
        const before = log().child({ component: 'made-before' });
        expect(maskLogOutput(log())).toBe(true);
        expect(maskLogOutput(log())).toBe(true);
        const after = log().child({ component: 'made-after' });
        before.info({ card: '4111 1111 1111 1111' }, 'one');
        after.info('two: 5500-0000-0000-0004');
        log().debug('below the level: 4111 1111 1111 1111');
      } finally {
        initializeLogger({ pretty: false, level: 'silent' });
      }
    });
    const text = lines.join('');
    expect(lines).toHaveLength(2);
    expect(text).toContain('"component":"made-before"');
    expect(text).toContain('**** **** **** 1111');
    expect(text).toContain('****-****-****-0004');
    expect(text).not.toContain('4111 1111 1111 1111');
    expect(text).not.toContain('below the level');
  });

  it('reports a logger it cannot wrap instead of pretending', () => {
    expect(maskLogOutput({})).toBe(false);
  });
});
