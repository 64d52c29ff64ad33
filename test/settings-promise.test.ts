/**
 * The 1.0.0 promise: a gateway started with every setting 1.0.0 documented (the retired
 * UPSTREAM_CIRCUIT_FAILURES=5 among them) builds, serves a query through its upstream and its
 * Redis, and says at start what the retired setting became.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, warningsOf } from '../src/config/index.js';
import { createGateway, type Gateway } from '../src/gateway.js';
import { startEmulator, type Emulator } from '../src/emulator/server.js';
import { useRedis } from './helpers/redis.js';
import { SETTINGS_OF_1_0_0 } from './helpers/settings-1.0.0.js';
import { ALL_CREDENTIALS, listen, postGraphQL, stop } from './helpers/stack.js';

const redis = useRedis();
const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

describe('a gateway started with every setting 1.0.0 documented', () => {
  it('serves a query, with the retired UPSTREAM_CIRCUIT_FAILURES read as UPSTREAM_CIRCUIT_MIN_CALLS', async () => {
    const emulator: Emulator = await startEmulator({ recordRequests: true });
    closing.push(() => emulator.close());
    const config = loadConfig([], {
      ...SETTINGS_OF_1_0_0,
      // This test's upstream and Redis, on loopback; JSON, as the emulator speaks by default.
      PETSTORE_URL: emulator.petstoreUrl,
      PLANTS_URL: emulator.plantsUrl,
      REDIS_URL: redis.url,
      PETSTORE_BODY_FORMAT: 'json',
      PETSTORE_ACCEPT: 'json',
      HOST: '127.0.0.1',
      PORT: '0',
    });
    const gateway: Gateway = createGateway({ ...config, petstoreUrl: config.petstoreUrl, plantsUrl: config.plantsUrl });
    // As the start does: Redis is given a moment to answer before the first request (RATE_LIMIT_FAIL_CLOSED is set).
    await gateway.redis?.settled(5000);
    const { server, url } = await listen(gateway.handler);
    closing.push(async () => {
      await stop(server);
      await gateway.close();
    });

    const answer = await postGraphQL(`${url}/graphql`, '{ pet(id: 1) { name } }', {}, ALL_CREDENTIALS);

    expect(answer).toEqual({ status: 200, data: { pet: { name: 'Cat 1' } } });
    expect(config.upstreamCircuitMinCalls).toBe(5);
    expect(warningsOf(config)).toHaveLength(1);
    expect(emulator.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /api/v3/pet/1']);
  });
});
