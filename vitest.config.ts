import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/** Tests that run through the gateway against an upstream: run against both kinds of upstream. */
const INTEGRATION = [
  'test/pets.test.ts',
  'test/pet-mutations.test.ts',
  'test/uploads.test.ts',
  'test/orders.test.ts',
  'test/inventory.test.ts',
  'test/users.test.ts',
  'test/plants.test.ts',
  'test/deletes.test.ts',
  'test/federation.test.ts',
  'test/supergraph.test.ts',
];

/**
 * Tests whose outcome depends on timing or on the CPU they get: processes started and stopped
 * against deadlines (a slow Redis inside the start's wait, grace periods), slow clients, load
 * ratios. They run one file at a time, after the others, so that no other file takes their CPU.
 */
const ALONE = [
  'test/main.test.ts',
  'test/workers.test.ts',
  'test/lifecycle-stop.test.ts',
  'test/lifecycle-keepalive.test.ts',
  'test/upstream-circuit-load.test.ts',
  'test/upstream-faults-load.test.ts',
];

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (`main`) and ESM (`module`) builds. Node loads the CJS one for yoga and
    // the other dependencies; vite would pick the ESM one for our sources, and two copies of
    // graphql break `instanceof GraphQLError`. One copy, as in production:
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    // Once per run: the build that the tests starting the gateway as a process run.
    globalSetup: ['test/global-setup.ts'],
    // Vitest's default, one fewer than the cores, ran one file at a time on a 2-core machine, while
    // most files spend their time waiting on sockets, timers and the processes they start (ALONE
    // aside).
    maxWorkers: Math.max(availableParallelism(), 2),
    testTimeout: 15_000,
    hookTimeout: 15_000,
    projects: [
      // test/browser/ needs Chromium: `npm run test:browser` (vitest.browser.config.ts) runs it.
      {
        extends: true,
        test: {
          name: 'emulator',
          include: ['test/**/*.test.ts'],
          exclude: ['test/browser/**', ...ALONE],
          provide: { upstream: 'emulator' },
        },
      },
      // One worker: vitest runs these files one after the other once the other projects are done.
      { extends: true, test: { name: 'alone', include: ALONE, maxWorkers: 1, provide: { upstream: 'emulator' } } },
      { extends: true, test: { name: 'reference', include: INTEGRATION, provide: { upstream: 'reference' } } },
    ],
  },
});
