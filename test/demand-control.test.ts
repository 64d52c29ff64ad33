/**
 * Demand control: the cost model in the subgraph SDL (`@cost`, `@listSize`), kept by composition
 * and enforced by a federation router; each operation's upstream calls estimated before it runs
 * and shown with `x-gateway-cost: 1`; an operation over UPSTREAM_MAX_CALLS_PER_OPERATION refused
 * before any call; and each client's budget of upstream calls (RATE_LIMIT_COST_PER_MINUTE), in
 * this process and across replicas sharing Redis.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMIT_SETTINGS } from '../src/config/limits.js';
import type { Emulator } from '../src/emulator/server.js';
import { ASSUMED_LIST_SIZES } from '../src/resolvers/upstream-costs.js';
import { createMemoryCostBudgetStore } from '../src/security/cost-budget.js';
import { readinessOf } from './helpers/answers.js';
import { until } from './helpers/clock.js';
import { useRedis } from './helpers/redis.js';
import {
  ALL_CREDENTIALS,
  API_KEY,
  expectedGet,
  GRAPHQL_POST_HEADERS,
  postGraphQL,
  startStack,
  stop,
  summary,
  type Stack,
} from './helpers/stack.js';
import { startUpstream } from './helpers/upstream.js';

const COST = { 'x-gateway-cost': '1' };
const TEN_PETS = `{ pets(ids: [${Array.from({ length: 10 }, (_, index) => `"${index + 1}"`).join(', ')}]) { name } }`;

/** Posts `query` and answers the status, the Retry-After header and the parsed body. */
async function post(url: string, query: string, headers: Record<string, string>, variables?: Record<string, unknown>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...GRAPHQL_POST_HEADERS, ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as {
    data?: unknown;
    errors?: { message: string; extensions?: Record<string, unknown> }[];
    extensions?: Record<string, unknown>;
  };
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body };
}

describe('the subgraph SDL', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('carries @cost on the fields that call the upstream and @listSize on the lists, from the cost model', async () => {
    const result = await stack.gql('{ _service { sdl } }');
    const sdl = (result.data?.['_service'] as { sdl: string }).sdl;

    expect(sdl).toContain(
      '@link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@cost", "@listSize"])',
    );
    expect(sdl).toMatch(/\): Pet @cost\(weight: 1\)\n/);
    expect(sdl).toMatch(/\): \[Pet\]! @cost\(weight: 1\) @listSize\(assumedSize: 100\)\n/);
    // updatePetWithForm reads the pet again when the upstream answers without it: two calls at most.
    expect(sdl).toMatch(/updatePetWithForm\(.*?\n {2}\): Pet! @cost\(weight: 2\)\n/s);
    expect(sdl).toContain('pet: Pet @cost(weight: 1)');
    // Fields that call nothing carry nothing.
    expect(sdl).toMatch(/name: String\n/);
    expect(stack.upstream()).toEqual([]);
  });

  it('assumes a pets(ids:) list as long as the most ids LIST_ARGUMENT_MAX_ITEMS lets through by default', () => {
    const setting = LIMIT_SETTINGS.find((entry) => entry.env === 'LIST_ARGUMENT_MAX_ITEMS');

    expect(ASSUMED_LIST_SIZES['Query.pets']).toBe(Number(setting?.default));
  });
});

describe('a federation router', () => {
  let stack: Stack;
  let router: Server;
  let routerUrl: string;
  let supergraph: string;
  beforeAll(async () => {
    stack = await startStack();
    const service = await stack.gql('{ _service { sdl } }');
    const composed = composeServices([
      { name: 'pets', url: stack.url, typeDefs: parse((service.data?.['_service'] as { sdl: string }).sdl) },
    ]);
    if (composed.errors) throw new Error(composed.errors.map((error) => error.message).join('; '));
    supergraph = composed.supergraphSdl;
    // One pet (its weight 1, the Pet object 1) is cheap; a list of 100 assumed pets is not.
    const runtime = createGatewayRuntime({
      supergraph,
      logging: false,
      demandControl: { maxCost: 50 },
      propagateHeaders: {
        fromClientToSubgraphs: ({ request }) => ({ api_key: request.headers.get('api_key') }),
      },
    });
    router = createServer((request, response) => void runtime(request, response));
    await new Promise<void>((resolve) => router.listen(0, '127.0.0.1', resolve));
    routerUrl = `http://127.0.0.1:${(router.address() as AddressInfo).port}/graphql`;
  });
  afterAll(async () => {
    await stop(router);
    await stack.close();
  });

  it('keeps @cost and @listSize in the composed supergraph', () => {
    expect(supergraph).toMatch(/ids: \[ID!\]!\): \[Pet\]! @cost\(weight: 1\) @listSize\(assumedSize: 100\)/);
  });

  it('refuses by their weights an operation they make too expensive, before calling the subgraph', async () => {
    stack.upstream();
    const result = await postGraphQL(routerUrl, '{ pets(ids: ["1"]) { name } }', {}, ALL_CREDENTIALS);

    expect(result.data ?? null).toBeNull();
    expect(result.errors?.map((error) => error.extensions?.['code'])).toEqual(['COST_ESTIMATED_TOO_EXPENSIVE']);
    expect(stack.upstream()).toEqual([]);
  });

  it('passes a cheap one to the subgraph', async () => {
    stack.upstream();
    const result = await postGraphQL(routerUrl, '{ pet(id: 1) { name } }', {}, ALL_CREDENTIALS);

    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({ pet: { name: 'Cat 1' } });
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/1', 'api_key')]);
  });
});

describe('x-gateway-cost: 1', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('shows one pet by id as one upstream call, estimated and made', async () => {
    stack.upstream();
    const result = await stack.gql('{ pet(id: 1) { name } }', {}, { ...ALL_CREDENTIALS, ...COST });

    expect(result.data).toEqual({ pet: { name: 'Cat 1' } });
    expect(result.extensions?.['cost']).toEqual({ requestedQueryCost: 1, actualQueryCost: 1 });
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/1', 'api_key')]);
  });

  it('counts each distinct id of pets(ids:) once', async () => {
    stack.upstream();
    const result = await stack.gql('{ pets(ids: ["1", "2", "3", "2"]) { name } }', {}, { ...ALL_CREDENTIALS, ...COST });

    expect(result.data).toEqual({ pets: [{ name: 'Cat 1' }, { name: 'Cat 2' }, { name: 'Cat 3' }, { name: 'Cat 2' }] });
    expect(result.extensions?.['cost']).toEqual({ requestedQueryCost: 3, actualQueryCost: 3 });
    expect(
      stack
        .upstream()
        .map((request) => request.path)
        .sort(),
    ).toEqual(['/api/v3/pet/1', '/api/v3/pet/2', '/api/v3/pet/3']);
  });

  it('reads the ids, and @skip, from the variables', async () => {
    const query =
      'query ($ids: [ID!]!, $skip: Boolean!) { pets(ids: $ids) { name } one: pet(id: 4) @skip(if: $skip) { name } }';
    const skipped = await stack.gql(query, { ids: ['1', '2'], skip: true }, { ...ALL_CREDENTIALS, ...COST });
    const kept = await stack.gql(query, { ids: [1, '1', 2, 3], skip: false }, { ...ALL_CREDENTIALS, ...COST });

    expect(skipped.extensions?.['cost']).toEqual({ requestedQueryCost: 2, actualQueryCost: 2 });
    expect(kept.extensions?.['cost']).toEqual({ requestedQueryCost: 4, actualQueryCost: 4 });
  });

  it('shows the calls made below the estimate when a field fails before calling', async () => {
    stack.upstream();
    const result = await stack.gql('{ pets(ids: ["1", "x"]) { name } }', {}, { ...ALL_CREDENTIALS, ...COST });

    expect(result.errors?.map((error) => error.extensions?.['code'])).toEqual(['BAD_USER_INPUT']);
    expect(result.extensions?.['cost']).toEqual({ requestedQueryCost: 2, actualQueryCost: 0 });
    expect(stack.upstream()).toEqual([]);
  });

  it('is not shown to a request that does not ask', async () => {
    const result = await stack.gql('{ pet(id: 1) { name } }', {}, ALL_CREDENTIALS);

    expect(result.extensions).toBeUndefined();
  });
});

describe('UPSTREAM_MAX_CALLS_PER_OPERATION=5', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ upstreamMaxCallsPerOperation: 5 });
  });
  afterAll(() => stack.close());

  it('refuses ten pets by id whole, with COST_ESTIMATED_TOO_EXPENSIVE and no upstream call', async () => {
    stack.upstream();
    const { status, body } = await post(stack.url, TEN_PETS, ALL_CREDENTIALS);

    expect(status).toBe(400);
    expect(body.data).toBeUndefined();
    expect(body.errors).toEqual([
      {
        message:
          'This operation may make 10 upstream calls, over the 5 allowed per operation; ask for fewer items per operation',
        extensions: { code: 'COST_ESTIMATED_TOO_EXPENSIVE', cost: { estimated: 10, max: 5 } },
      },
    ]);
    expect(stack.upstream()).toEqual([]);
  });

  it('refuses them given as a variable too', async () => {
    stack.upstream();
    const ids = Array.from({ length: 10 }, (_, index) => String(index + 1));
    const { status } = await post(stack.url, 'query ($ids: [ID!]!) { pets(ids: $ids) { name } }', ALL_CREDENTIALS, {
      ids,
    });

    expect(status).toBe(400);
    expect(stack.upstream()).toEqual([]);
  });

  it('answers one pet', async () => {
    stack.upstream();
    const result = await stack.gql('{ pet(id: 1) { name } }', {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ pet: { name: 'Cat 1' } });
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/1', 'api_key')]);
  });
});

describe('the in-memory budget store', () => {
  const rule = { perMinute: 60 };

  it('charges a full bucket, refuses what it does not hold with the wait until it does, and refills evenly', () => {
    const store = createMemoryCostBudgetStore();

    expect(store.charge('a', 50, rule, 0)).toEqual({ allowed: true, available: 10, retryAfterMs: 0 });
    // 60 per minute: one per second; 20 more need 10 more seconds.
    expect(store.charge('a', 20, rule, 0)).toEqual({ allowed: false, available: 10, retryAfterMs: 10_000 });
    expect(store.charge('a', 20, rule, 10_000)).toEqual({ allowed: true, available: 0, retryAfterMs: 0 });
  });

  it('takes a refund, never above the bucket size', () => {
    const store = createMemoryCostBudgetStore();
    store.charge('a', 30, rule, 0);

    expect(store.refund('a', 20, rule, 0)).toBe(50);
    expect(store.refund('a', 20, rule, 0)).toBe(60);
  });
});

/** Whether a replica's /readiness says its Redis is ready. */
async function redisReady(stack: Stack): Promise<boolean> {
  const { body } = await readinessOf(new URL(stack.url).origin);
  return (body['redis'] as { ready?: boolean } | undefined)?.ready === true;
}

/** Three queries of ten pets each by one client, and one by another, against `urls` in turn. */
async function budgetRun(urls: readonly string[]) {
  const other = { api_key: 'another-client-key' };
  const first = await post(urls[0] ?? '', TEN_PETS, { ...ALL_CREDENTIALS, ...COST });
  const second = await post(urls[1 % urls.length] ?? '', TEN_PETS, { ...ALL_CREDENTIALS, ...COST });
  const third = await post(urls[2 % urls.length] ?? '', TEN_PETS, { ...ALL_CREDENTIALS, ...COST });
  const another = await post(urls[0] ?? '', TEN_PETS, { ...other, ...COST });
  return { first, second, third, another };
}

/** What the budget run must show: two answered, the third refused with 429 and Retry-After, another client answered. */
function expectBudgetKept(run: Awaited<ReturnType<typeof budgetRun>>): void {
  const { first, second, third, another } = run;
  expect([first.status, second.status, third.status, another.status]).toEqual([200, 200, 429, 200]);
  expect(first.body.extensions?.['cost']).toEqual({
    requestedQueryCost: 10,
    actualQueryCost: 10,
    throttleStatus: { maximumAvailable: 25, currentlyAvailable: 15, restoreRate: 25 / 60 },
  });
  expect(third.body.data).toBeUndefined();
  expect(third.body.errors?.map((error) => error.extensions?.['code'])).toEqual(['COST_RATE_LIMITED']);
  // 10 calls, 5 left, 25 a minute: 12 seconds at most.
  expect(Number(third.retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(third.retryAfter)).toBeLessThanOrEqual(12);
}

describe('RATE_LIMIT_COST_PER_MINUTE=25', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ rateLimitCostPerMinute: 25 });
  });
  afterAll(() => stack.close());

  it("refuses one client's third query for ten pets with 429 and Retry-After, before any call; another client is answered", async () => {
    stack.upstream();
    const run = await budgetRun([stack.url]);

    expectBudgetKept(run);
    // Two queries of ten distinct pets, then the other client's: 30 calls, none for the refused one.
    const sent = stack.upstream();
    expect(sent).toHaveLength(30);
    expect(sent.filter((request) => request.headers['api_key'] === API_KEY)).toHaveLength(20);
  });

  it('refunds what an operation did not make', async () => {
    const client = { api_key: 'refund-client-key', ...COST };
    const failed = await post(stack.url, '{ pets(ids: ["1", "x"]) { name } }', client);
    const next = await post(stack.url, '{ pet(id: 1) { name } }', client);

    expect(failed.body.extensions?.['cost']).toMatchObject({ requestedQueryCost: 2, actualQueryCost: 0 });
    expect((failed.body.extensions?.['cost'] as { throttleStatus: unknown }).throttleStatus).toMatchObject({
      currentlyAvailable: 25,
    });
    expect(next.body.extensions?.['cost']).toMatchObject({ throttleStatus: { currentlyAvailable: 24 } });
  });
});

describe('RATE_LIMIT_COST_PER_MINUTE=25 across two replicas sharing Redis', () => {
  const redis = useRedis();
  let emulator: Emulator;
  let replicas: Stack[];
  beforeAll(async () => {
    emulator = await startUpstream();
    const config = { redisUrl: redis.url, redisKeyPrefix: 'test-cost:', rateLimitCostPerMinute: 25 };
    replicas = await Promise.all([startStack(config, emulator), startStack(config, emulator)]);
    // Both connected before the test begins: a replica that is still connecting would not charge Redis.
    await until(async () => (await Promise.all(replicas.map(redisReady))).every(Boolean), 'both replicas on Redis');
  });
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    await emulator.close();
  });

  it("charges one client's budget on either replica: its third query is refused; another client is answered", async () => {
    emulator.clearRequests();
    const run = await budgetRun(replicas.map((replica) => replica.url));

    expectBudgetKept(run);
    expect(emulator.requests).toHaveLength(30);
    // The bucket is in Redis, under the key prefix, with no credential in its name.
    const keys = await redis.cli('--scan', '--pattern', 'test-cost:cost-budget:*');
    expect(keys).toMatch(/^test-cost:cost-budget:client:/m);
    expect(keys).not.toContain(API_KEY);
  });
});

describe('/metrics', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ metrics: true });
  });
  afterAll(() => stack.close());

  it('has histograms of the upstream calls each operation was estimated to make and made', async () => {
    await stack.gql('{ pets(ids: ["1", "x"]) { name } }', {}, ALL_CREDENTIALS);
    const text = await (await fetch(stack.url.replace('/graphql', '/metrics'))).text();

    expect(text).toContain('graphql_operation_upstream_calls_estimated_sum 2');
    expect(text).toContain('graphql_operation_upstream_calls_sum 0');
    expect(text).toContain('graphql_operation_upstream_calls_estimated_bucket{le="2"} 1');
  });
});
