/**
 * Replicas sharing state through a real Redis (REDIS_URL): two gateways on one Redis, each with
 * its own process state, as two replicas behind a load balancer. Rate limits are exact across
 * them, an answer cached by one is served by the other, a mutation through one purges the
 * other's cached answers, and an APQ document registered through one runs on the other. Redis
 * lost while serving: every request is answered; Redis back: sharing resumes.
 */
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../src/emulator/server.js';
import type { GatewayConfig } from '../src/gateway.js';
import { gql } from '@apollo/client';
import { readinessOf } from './helpers/answers.js';
import { apolloClient } from './helpers/apollo.js';
import { useRedis } from './helpers/redis.js';
import { ALL_CREDENTIALS, API_KEY, BEARER, startStack, type Stack } from './helpers/stack.js';

const redis = useRedis();
let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(() => emulator.close());

/** Two gateways on the test's Redis and one emulator, closed after each test. */
const started: Stack[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((stack) => stack.close()));
  emulator.reset();
  await redis.cli('FLUSHALL');
});
async function replicas(overrides: Partial<GatewayConfig> = {}): Promise<[Stack, Stack]> {
  const config = { redisUrl: redis.url, redisKeyPrefix: 'test-gateway:', ...overrides };
  const pair = await Promise.all([startStack(config, emulator), startStack(config, emulator)]);
  started.push(...pair);
  // Both connected before the test begins: a replica that is still connecting would bypass Redis.
  await expect.poll(async () => Promise.all(pair.map(readiness)), { timeout: 5000 }).toEqual([200, 200]);
  emulator.clearRequests();
  return pair;
}

/** The status of a replica's /readiness once it says Redis is ready (0 before). */
async function readiness(stack: Stack): Promise<number> {
  const { status, body } = await readinessOf(new URL(stack.url).origin);
  return (body['redis'] as { ready?: boolean } | undefined)?.ready ? status : 0;
}

const upstreamCalls = () => {
  const calls = emulator.requests.map((request) => `${request.method} ${request.path}`);
  emulator.clearRequests();
  return calls;
};

describe('two replicas on one Redis', () => {
  it('refuse the (N+1)-th request of a minute whichever replica gets it', async () => {
    const [a, b] = await replicas({ rateLimitPerMinute: 3 });
    const query = { query: '{ pet(id: 1) { id } }' };

    const statuses = [];
    for (const stack of [a, b, a, b]) statuses.push((await stack.post(query)).status);

    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(await a.post(query)).toMatchObject({
      status: 429,
      body: { errors: [{ extensions: { code: 'RATE_LIMITED' } }] },
    });
    // The refused requests reached no upstream.
    expect(upstreamCalls()).toEqual(['GET /api/v3/pet/1', 'GET /api/v3/pet/1', 'GET /api/v3/pet/1']);
  });

  it('serve an answer cached by one from the other, with no upstream call', async () => {
    const [a, b] = await replicas({ responseCacheTtlMs: 60_000 });
    const query = '{ pet(id: 1) { id name } }';

    const first = await a.gql(query, {}, ALL_CREDENTIALS);
    const second = await b.gql(query, {}, ALL_CREDENTIALS);

    expect(first).toEqual({ status: 200, data: { pet: { id: '1', name: 'Cat 1' } } });
    expect(second).toEqual(first);
    expect(upstreamCalls()).toEqual(['GET /api/v3/pet/1']);
  });

  it("purge the other's cached answers when one makes a change", async () => {
    const [a, b] = await replicas({ responseCacheTtlMs: 60_000 });
    const query = '{ pet(id: 1) { id name } }';
    await a.gql(query, {}, ALL_CREDENTIALS);

    const renamed = await b.gql('mutation { updatePetWithForm(id: 1, name: "Tom") { name } }', {}, ALL_CREDENTIALS);
    upstreamCalls();
    const after = await a.gql(query, {}, ALL_CREDENTIALS);

    expect(renamed.data).toEqual({ updatePetWithForm: { name: 'Tom' } });
    expect(after).toEqual({ status: 200, data: { pet: { id: '1', name: 'Tom' } } });
    expect(upstreamCalls()).toEqual(['GET /api/v3/pet/1']);
  });

  it('run an APQ document registered through one by its hash on the other', async () => {
    const [a, b] = await replicas();
    const document = '{ pet(id: 2) { name } }';
    const extensions = {
      persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(document).digest('hex') },
    };

    const unknown = await b.post({ extensions });
    const registered = await a.post({ query: document, extensions });
    const byHash = await b.post({ extensions });

    expect(unknown.status).toBe(404);
    expect(registered).toEqual({ status: 200, body: { data: { pet: { name: 'Cat 2' } } } });
    expect(byHash).toEqual(registered);
  });

  it("answer Apollo Client's persisted queries link through both: registered on one, by hash on the other", async () => {
    const [a, b] = await replicas();
    const STOCK = gql`
      query Stock {
        inventory {
          entries {
            status
            quantity
          }
        }
      }
    `;
    const throughA = apolloClient(a.url);
    const throughB = apolloClient(b.url);

    const first = await throughA.client.query({ query: STOCK, fetchPolicy: 'network-only' });
    const second = await throughB.client.query({ query: STOCK, fetchPolicy: 'network-only' });

    expect(first.data).toEqual({
      inventory: {
        __typename: 'Inventory',
        entries: [
          { __typename: 'InventoryEntry', status: 'approved', quantity: 50 },
          { __typename: 'InventoryEntry', status: 'delivered', quantity: 50 },
          { __typename: 'InventoryEntry', status: 'placed', quantity: 100 },
        ],
      },
    });
    expect(second.data).toEqual(first.data);
    expect(throughA.sent.map(({ withDocument, status }) => [withDocument, status])).toEqual([
      [false, 404],
      [true, 200],
    ]);
    // B knew the hash from Redis: no document sent.
    expect(throughB.sent.map(({ withDocument, status }) => [withDocument, status])).toEqual([[false, 200]]);
    expect(upstreamCalls()).toEqual(['GET /api/v3/store/inventory', 'GET /api/v3/store/inventory']);
  });

  it('write every key under REDIS_KEY_PREFIX, and no credential anywhere', async () => {
    const [a, b] = await replicas({ responseCacheTtlMs: 60_000, rateLimitPerMinute: 100 });
    const document = '{ pet(id: 3) { name } }';
    const extensions = {
      persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(document).digest('hex') },
    };
    await a.post({ query: document, extensions });
    await b.gql('{ pet(id: 1) { name } }', {}, ALL_CREDENTIALS);

    const keys = (await redis.cli('--scan')).split('\n').filter((key) => key !== '');
    const values = await Promise.all(keys.map((key) => redis.cli('DUMP', key)));

    expect(keys.length).toBeGreaterThan(3);
    expect(keys.filter((key) => !key.startsWith('test-gateway:'))).toEqual([]);
    for (const text of [...keys, ...values]) {
      expect(text).not.toContain(BEARER);
      expect(text).not.toContain(API_KEY);
    }
  });
});
