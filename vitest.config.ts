import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Examples import the package by name, as users do.
    alias: [
      { find: /^taskline\/app$/, replacement: src('app/index.ts') },
      { find: /^taskline\/tasks$/, replacement: src('tasks/index.ts') },
      { find: /^taskline\/parsers$/, replacement: src('tasks/parsers/index.ts') },
      { find: /^taskline\/telephony$/, replacement: src('telephony/index.ts') },
      { find: /^taskline\/flows$/, replacement: src('flows/index.ts') },
      { find: /^taskline\/deep-agent$/, replacement: src('deep-agent/index.ts') },
      { find: /^taskline\/delegation$/, replacement: src('delegation/index.ts') },
      { find: /^taskline\/testing$/, replacement: src('testing/index.ts') },
      { find: /^taskline\/scenarios$/, replacement: src('scenarios/index.ts') },
      { find: /^taskline\/observability$/, replacement: src('observability/index.ts') },
      { find: /^taskline$/, replacement: src('index.ts') },
    ],
  },
  test: {
    include: ['tests/**/*.test.ts'],
    // The console in Chromium runs with `npm run test:browser` (vitest.browser.config.ts).
    exclude: ['**/node_modules/**', 'tests/browser/**', 'tests/e2e/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    setupFiles: ['tests/setup.ts'],
  },
});
