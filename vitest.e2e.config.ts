import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The real-server e2e suite (`npm run test:livekit`). One livekit-server (and livekit-sip
 * with a Redis of the suite's own, when a SIP call can be made here) is started once for
 * every file by the global setup, and stopped by PID after the run;
 * the files run one at a time against it (a file that kills its server starts its own), each
 * with workers, rooms, trunks and phones of its own. One call at a time: calls are real
 * time, and on 2 shared cores several at once (each worker loading its job processes) starve
 * each other's audio (measured: 19 of 23 failing, 14 minutes, with files in parallel).
 */
export default defineConfig({
  resolve: base.resolve,
  test: {
    include: ['tests/e2e/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    globalSetup: ['tests/e2e/harness/global-setup.ts'],
    fileParallelism: false,
    // Bounds, not expectations: a call through a real server on a busy 2-core machine.
    testTimeout: 600_000,
    hookTimeout: 300_000,
    setupFiles: ['tests/setup.ts'],
  },
});
