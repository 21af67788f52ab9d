import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The real-server e2e suite (`npm run test:livekit`): one file at a time, since each file
 * runs its own livekit-server on the suite's fixed ports and real-time calls share 2 cores.
 */
export default defineConfig({
  resolve: base.resolve,
  test: {
    include: ['tests/e2e/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    fileParallelism: false,
    // Bounds, not expectations: a call through a real server on a busy 2-core machine.
    testTimeout: 600_000,
    hookTimeout: 300_000,
    setupFiles: ['tests/setup.ts'],
  },
});
