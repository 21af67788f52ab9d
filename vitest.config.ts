import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Examples import the package by name, as users do.
    alias: [
      { find: /^taskline\/testing$/, replacement: src('testing/index.ts') },
      { find: /^taskline\/scenarios$/, replacement: src('scenarios/index.ts') },
      { find: /^taskline\/observability$/, replacement: src('observability/index.ts') },
      { find: /^taskline$/, replacement: src('index.ts') },
    ],
  },
  test: {
    include: ['tests/**/*.test.ts'],
    // The console in Chromium runs with `npm run test:browser` (vitest.browser.config.ts).
    exclude: ['**/node_modules/**', 'tests/browser/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    setupFiles: ['tests/setup.ts'],
  },
});
