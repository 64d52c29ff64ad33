import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The browser tests (`npm run test:browser`): GraphiQL in Debian's headless Chromium
 * (/usr/bin/chromium, which `.ci/run` installs). Kept out of `npm test`, which needs no browser.
 */
export default mergeConfig(
  { resolve: base.resolve },
  defineConfig({
    test: {
      name: 'browser',
      include: ['test/browser/**/*.test.ts'],
      testTimeout: 60_000,
      hookTimeout: 60_000,
    },
  }),
);
