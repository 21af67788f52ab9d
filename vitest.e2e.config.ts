import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The real-server e2e suite (`npm run test:livekit`). One livekit-server (and livekit-sip,
 * when a SIP call can be made here) is started once for every file by the global setup;
 * the files run at the same time against it, each with workers, rooms, trunks and phones
 * of its own, and a file's concurrent tests (`describe.concurrent`) place several calls at
 * once. Calls are real time: most of a call is waiting on speech, not CPU.
 */
export default defineConfig({
  resolve: base.resolve,
  test: {
    include: ['tests/e2e/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    globalSetup: ['tests/e2e/harness/global-setup.ts'],
    fileParallelism: true,
    maxWorkers: 6,
    // Calls a file places at once (its concurrent tests).
    maxConcurrency: 3,
    // Bounds, not expectations: a call through a real server on a busy 2-core machine.
    testTimeout: 600_000,
    hookTimeout: 300_000,
    setupFiles: ['tests/setup.ts'],
  },
});
