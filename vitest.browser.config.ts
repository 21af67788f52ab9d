// `npm run test:browser`: the live console driven in real headless Chromium (tests/browser).
// Kept out of `npm test`: it needs Chromium (scripts/browser-tools.sh) and the built console.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['tests/browser/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
