import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (`main`) and ESM (`module`) builds. Node loads the CJS one for yoga and
    // the other dependencies; vite would pick the ESM one for our sources, and two copies of
    // graphql break `instanceof GraphQLError`. One copy, as in production:
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 15_000,
    hookTimeout: 15_000,
  },
});
