/**
 * Live queries (LIVE_QUERIES, src/live/): `query @live` over server-sent events and graphql-ws
 * is answered again when a write through another replica changes what it shows, and when a
 * change made behind the gateway's back is found by polling; limits, and a stop.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildSchema,
  DirectiveLocation,
  GraphQLDirective,
  GraphQLSchema,
  parse,
  validate,
  specifiedRules,
} from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { noLiveWithDeferOrStream } from '../src/live/plugin.js';
import { withLiveDirective } from '../src/live/index.js';
import type { Emulator } from '../src/emulator/server.js';
import { until } from './helpers/clock.js';
import { failureCodes, openSse, openWs, serveLiveGateway, type LiveGateway } from './helpers/live.js';
import { useRedis } from './helpers/redis.js';
import { ALL_CREDENTIALS, API_KEY, BEARER, postGraphQL } from './helpers/stack.js';
import { startUpstream } from './helpers/upstream.js';

const LIVE_PET = 'query @live { pet(id: "1") { id name status } }';
const UPDATE_PET = 'mutation ($input: PetInput!) { updatePet(id: "1", input: $input) { id name } }';

let emulator: Emulator;
const redis = useRedis();
const started: LiveGateway[] = [];
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  emulator = await startUpstream();
});
afterAll(async () => {
  await emulator.close();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await Promise.all(started.splice(0).map((gateway) => gateway.stop()));
  emulator.reset();
  emulator.clearRequests();
});

async function gateway(overrides: Parameters<typeof serveLiveGateway>[1] = {}): Promise<LiveGateway> {
  const served = await serveLiveGateway(emulator, { livePollIntervalMs: 600_000, ...overrides });
  started.push(served);
  return served;
}

/**
 * Two replicas on the test's Redis, each subscribed to the shared change feed (each has heard a
 * change published on its channel from outside both).
 */
async function replicas(): Promise<[LiveGateway, LiveGateway]> {
  const shared = { redisUrl: redis.url, redisKeyPrefix: 'live-test:' };
  const pair: [LiveGateway, LiveGateway] = [await gateway(shared), await gateway(shared)];
  const heard = pair.map(() => 0);
  const stops = pair.map((one, index) => one.gateway.changes.listen(() => (heard[index] = (heard[index] ?? 0) + 1)));
  await until(async () => {
    await redis.cli(
      'PUBLISH',
      'live-test:upstream-changes',
      JSON.stringify({ from: 'the test', changes: [{ resource: 'user', username: 'nobody' }] }),
    );
    return heard.every((count) => count > 0);
  }, 'both replicas to subscribe to the change feed');
  for (const stop of stops) stop();
  return pair;
}

describe('a write through another replica', () => {
  it('reaches a live query over server-sent events at once', async () => {
    const [a, b] = await replicas();
    const live = openSse(a.url, LIVE_PET, ALL_CREDENTIALS);
    cleanups.push(() => live.close());

    expect(await live.results.next()).toEqual({
      data: { pet: { id: '1', name: 'Cat 1', status: 'AVAILABLE' } },
      isLive: true,
    });
    const written = await postGraphQL(b.url, UPDATE_PET, { input: { name: 'Kitty', status: 'SOLD' } }, ALL_CREDENTIALS);
    expect(written.data).toEqual({ updatePet: { id: '1', name: 'Kitty' } });

    // "Within 1 s": the wait for the event is bounded by it (no poll could answer: the interval is 10 minutes).
    expect(await live.results.next(1000)).toEqual({
      data: { pet: { id: '1', name: 'Kitty', status: 'SOLD' } },
      isLive: true,
    });
  });
});

describe('over graphql-ws', () => {
  it('answers a live query and again after a write through another replica, with the credential of connection_init', async () => {
    const [a, b] = await replicas();
    const live = openWs(a.url, LIVE_PET, { api_key: API_KEY });
    cleanups.push(() => live.close());

    expect(await live.results.next()).toEqual({
      data: { pet: { id: '1', name: 'Cat 1', status: 'AVAILABLE' } },
      isLive: true,
    });
    expect(gets(emulator, '/api/v3/pet/1')).toEqual([{ apiKey: API_KEY, authorization: undefined }]);
    await postGraphQL(b.url, UPDATE_PET, { input: { name: 'Kitty', status: 'PENDING' } }, ALL_CREDENTIALS);

    expect(await live.results.next(1000)).toEqual({
      data: { pet: { id: '1', name: 'Kitty', status: 'PENDING' } },
      isLive: true,
    });
  });

  it('runs a plain query too, through the same limits and masking', async () => {
    const a = await gateway();
    const live = openWs(a.url, '{ pet(id: "2") { name } }', { api_key: API_KEY });
    cleanups.push(() => live.close());

    expect(await live.results.next()).toEqual({ data: { pet: { name: 'Cat 2' } } });
  });
});

describe('the WebSocket transport', () => {
  it('applies the rate limit to each operation', async () => {
    const a = await gateway({ rateLimitPerMinute: 1 });
    const first = openWs(a.url, '{ pet(id: "1") { name } }', { api_key: 'rate-limited-client' });
    cleanups.push(() => first.close());
    expect(await first.results.next()).toEqual({ data: { pet: { name: 'Cat 1' } } });

    const second = openWs(a.url, '{ pet(id: "1") { name } }', { api_key: 'rate-limited-client' });
    cleanups.push(() => second.close());

    await until(() => second.results.ended, 'the second operation to be refused');
    expect(second.results.received).toEqual([]);
    expect(failureCodes(second.results.failure)).toEqual(['RATE_LIMITED']);
    expect(emulator.requests.filter((request) => request.path === '/api/v3/pet/1')).toHaveLength(1);
  });

  it('runs no operation while TRUSTED_DOCUMENTS is set', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'live-trusted-'));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));
    const manifest = join(directory, 'manifest.json');
    await writeFile(manifest, JSON.stringify({}));
    const a = await gateway({ trustedDocuments: manifest, graphiql: false });
    const live = openWs(a.url, LIVE_PET, { api_key: API_KEY });
    cleanups.push(() => live.close());

    await until(() => live.results.ended, 'the operation to be refused');
    expect(live.results.received).toEqual([]);
    expect(failureCodes(live.results.failure)).toEqual(['TRUSTED_DOCUMENT_REQUIRED']);
    expect(emulator.requests).toEqual([]);
  });

  it('answers an upgrade to another path with 404', async () => {
    const a = await gateway();
    const upgrade = request(a.url.replace('/graphql', '/other'), {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      },
    });
    upgrade.end();
    const [response] = (await once(upgrade, 'response')) as [IncomingMessage];
    response.resume();

    expect(response.statusCode).toBe(404);
  });
});

describe('the @live directive', () => {
  it('is in the schema with live queries on, and refuses @defer and @stream in a live query', () => {
    const defer = new GraphQLDirective({
      name: 'defer',
      locations: [DirectiveLocation.FRAGMENT_SPREAD, DirectiveLocation.INLINE_FRAGMENT],
    });
    const base = buildSchema('type Query { pet: Pet } type Pet { id: ID! name: String }');
    const schema = withLiveDirective(
      new GraphQLSchema({ ...base.toConfig(), directives: [...base.getDirectives(), defer] }),
    );
    const rules = [...specifiedRules, noLiveWithDeferOrStream];
    const errors = (document: string) => validate(schema, parse(document), rules).map((error) => error.message);

    expect(errors('query @live { pet { id ... @defer { name } } }')).toEqual([
      '@defer cannot be used in a @live query',
    ]);
    expect(errors('query @live { pet { id name } }')).toEqual([]);
    expect(errors('query { pet { id ... @defer { name } } }')).toEqual([]);
  });
});

/** The GETs of `path` the upstream received, with the credentials they carried. */
function gets(upstream: Emulator, path: string) {
  return upstream.requests
    .filter((request) => request.method === 'GET' && request.path === path)
    .map((request) => ({ apiKey: request.headers['api_key'], authorization: request.headers['authorization'] }));
}

/** Changes pet 1 at the upstream directly, as another client of it would: the gateway is not told. */
async function changeBehindTheGatewaysBack(name: string): Promise<void> {
  const response = await fetch(`${emulator.petstoreUrl}/pet`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${BEARER}` },
    body: JSON.stringify({ id: 1, name, photoUrls: [], status: 'sold' }),
  });
  expect(response.status).toBe(200);
}

describe('a change made at the upstream behind the gateway', () => {
  it('arrives after a polling interval: a GET of what the live query read, with its caller credential', async () => {
    const a = await gateway({ livePollIntervalMs: 100 });
    const live = openSse(a.url, LIVE_PET, { api_key: API_KEY });
    cleanups.push(() => live.close());
    expect(await live.results.next()).toMatchObject({ data: { pet: { name: 'Cat 1' } } });

    await changeBehindTheGatewaysBack('Behind');

    expect(await live.results.next()).toEqual({
      data: { pet: { id: '1', name: 'Behind', status: 'SOLD' } },
      isLive: true,
    });
    const polled = gets(emulator, '/api/v3/pet/1');
    // The first run, at least one poll, and the run that followed it: each with the caller's api_key only.
    expect(polled.length).toBeGreaterThanOrEqual(3);
    expect(new Set(polled.map((get) => JSON.stringify(get)))).toEqual(new Set([JSON.stringify({ apiKey: API_KEY })]));
    expect(emulator.requests.filter((request) => request.headers['if-none-match'] !== undefined)).toEqual([]);
  });

  it('is polled no more once the client has closed', async () => {
    const a = await gateway({ livePollIntervalMs: 100 });
    const live = openSse(a.url, LIVE_PET, { api_key: API_KEY });
    expect(await live.results.next()).toMatchObject({ data: { pet: { name: 'Cat 1' } } });
    const queries = a.gateway.live?.queries;
    expect(queries?.poller.watched).toBe(1);

    live.close();

    await until(() => queries?.open === 0, 'the live query to end');
    expect(queries?.poller.watched).toBe(0);
    expect(queries?.poller.scheduled).toBe(false);
    // A round now (as the clock would start one) sends nothing.
    emulator.clearRequests();
    await queries?.poller.round();
    expect(emulator.requests).toEqual([]);
  });
});

describe('limits', () => {
  it('refuses a live query over LIVE_QUERIES_PER_CLIENT_MAX or LIVE_QUERIES_MAX with LIVE_QUERY_LIMIT, counted in /metrics', async () => {
    const a = await gateway({ liveQueriesPerClientMax: 1, liveQueriesMax: 2 });
    const open = (apiKey: string) => {
      const live = openSse(a.url, LIVE_PET, { api_key: apiKey });
      cleanups.push(() => live.close());
      return live.results.next();
    };

    expect(await open('client-1')).toMatchObject({ data: { pet: { name: 'Cat 1' } } });
    const perClient = await open('client-1');
    expect(await open('client-2')).toMatchObject({ data: { pet: { name: 'Cat 1' } } });
    const total = await open('client-3');

    expect(perClient.errors?.map((error) => error.extensions?.['code'])).toEqual(['LIVE_QUERY_LIMIT']);
    expect(perClient.errors?.[0]?.message).toMatch(/LIVE_QUERIES_PER_CLIENT_MAX/);
    expect(total.errors?.map((error) => error.extensions?.['code'])).toEqual(['LIVE_QUERY_LIMIT']);
    expect(total.errors?.[0]?.message).toMatch(/LIVE_QUERIES_MAX/);
    expect(perClient.data ?? null).toBeNull();
    expect(a.gateway.live?.queries.open).toBe(2);
    const metrics = await (await fetch(a.url.replace('/graphql', '/metrics'))).text();
    expect(metrics).toMatch(/^live_queries_open 2$/m);
    expect(metrics).toMatch(/^live_query_refusals_total\{limit="per_client"\} 1$/m);
    expect(metrics).toMatch(/^live_query_refusals_total\{limit="total"\} 1$/m);
  });

  it('counts invalidations and polls in /metrics', async () => {
    const a = await gateway({ livePollIntervalMs: 100 });
    const live = openSse(a.url, LIVE_PET, { api_key: API_KEY });
    cleanups.push(() => live.close());
    await live.results.next();
    await postGraphQL(a.url, UPDATE_PET, { input: { name: 'Kitty' } }, ALL_CREDENTIALS);
    await live.results.next();
    await changeBehindTheGatewaysBack('Behind');
    await live.results.next();

    const metrics = await (await fetch(a.url.replace('/graphql', '/metrics'))).text();
    expect(metrics).toMatch(/^live_query_invalidations_total\{source="change"\} 1$/m);
    expect(metrics).toMatch(/^live_query_invalidations_total\{source="poll"\} [1-9]\d*$/m);
    expect(metrics).toMatch(/^live_query_polls_total\{service="petstore",outcome="changed"\} [1-9]\d*$/m);
  });
});

describe('with the response cache on', () => {
  it('answers a second identical live query live, not from the cache', async () => {
    const a = await gateway({ responseCacheTtlMs: 60_000 });
    const first = openSse(a.url, LIVE_PET, { api_key: API_KEY });
    const second = openSse(a.url, LIVE_PET, { api_key: API_KEY });
    cleanups.push(
      () => first.close(),
      () => second.close(),
    );
    await first.results.next();
    expect(await second.results.next()).toMatchObject({ data: { pet: { name: 'Cat 1' } }, isLive: true });

    await postGraphQL(a.url, UPDATE_PET, { input: { name: 'Kitty' } }, ALL_CREDENTIALS);

    expect(await second.results.next(1000)).toMatchObject({ data: { pet: { name: 'Kitty' } }, isLive: true });
    expect(a.gateway.live?.queries.open).toBe(2);
  });

  it('answers a live query and a plain query over graphql-ws, which the response cache leaves alone', async () => {
    const a = await gateway({ responseCacheTtlMs: 60_000 });
    const live = openWs(a.url, LIVE_PET, { api_key: API_KEY });
    const plain = openWs(a.url, '{ pet(id: "2") { name } }', { api_key: API_KEY });
    cleanups.push(
      () => live.close(),
      () => plain.close(),
    );

    expect(await live.results.next()).toEqual({
      data: { pet: { id: '1', name: 'Cat 1', status: 'AVAILABLE' } },
      isLive: true,
    });
    expect(await plain.results.next()).toEqual({ data: { pet: { name: 'Cat 2' } } });
    expect(gets(emulator, '/api/v3/pet/2')).toEqual([{ apiKey: API_KEY, authorization: undefined }]);
  });
});

describe('without a stream', () => {
  it('answers a @live query sent as plain JSON once, as a query, on both HTTP paths, and opens no live query', async () => {
    const a = await gateway();
    // Without extensions the lane serves it; with extensions (even empty) it hands it to yoga.
    const paths = { lane: { query: LIVE_PET }, yoga: { query: LIVE_PET, extensions: {} } };
    for (const [path, body] of Object.entries(paths)) {
      for (const accept of ['application/json', 'application/graphql-response+json', '*/*']) {
        const response = await fetch(a.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept, api_key: API_KEY },
          body: JSON.stringify(body),
        });
        expect({ path, accept, status: response.status, body: (await response.json()) as unknown }).toEqual({
          path,
          accept,
          status: 200,
          body: { data: { pet: { id: '1', name: 'Cat 1', status: 'AVAILABLE' } } },
        });
      }
    }
    expect(a.gateway.live?.queries.open).toBe(0);
    expect(a.gateway.live?.queries.poller.watched).toBe(0);
  });
});

describe('@live(if:)', () => {
  it('is an ordinary query, answered once, when its condition is false', async () => {
    const a = await gateway();
    const query = 'query ($live: Boolean!) @live(if: $live) { pet(id: "1") { name } }';
    const once = openSse(a.url, query, { api_key: API_KEY }, { live: false });
    const live = openSse(a.url, query, { api_key: API_KEY }, { live: true });
    cleanups.push(
      () => once.close(),
      () => live.close(),
    );

    expect(await once.results.next()).toEqual({ data: { pet: { name: 'Cat 1' } } });
    await until(() => once.results.ended, 'the stream to end after its one answer');
    expect(await live.results.next()).toEqual({ data: { pet: { name: 'Cat 1' } }, isLive: true });
    expect(a.gateway.live?.queries.open).toBe(1);
  });
});

describe('the HTTP lane', () => {
  it('still serves plain requests with live queries on: the live plugin has no request hook', async () => {
    const a = await gateway();
    expect(a.gateway.yogaOnly).toEqual([]);
  });
});

describe('LIVE_QUERIES=false', () => {
  it('refuses @live as an unknown directive and serves no WebSocket', async () => {
    const a = await gateway({ liveQueries: false });

    const result = await postGraphQL(a.url, LIVE_PET, undefined, ALL_CREDENTIALS);
    const live = openWs(a.url, LIVE_PET, { api_key: API_KEY });
    cleanups.push(() => live.close());

    expect(result.errors?.map((error) => [error.extensions?.['code'], error.message])).toEqual([
      ['GRAPHQL_VALIDATION_FAILED', 'Unknown directive "@live".'],
    ]);
    expect(a.gateway.live).toBeUndefined();
    await until(() => live.results.ended, 'the WebSocket to be refused');
    expect(live.results.received).toEqual([]);
    expect(failureCodes(live.results.failure)).toBeUndefined();
  });
});

describe('a stop', () => {
  it('ends server-sent event streams and closes WebSockets, within its grace period', async () => {
    const a = await gateway({ shutdownGraceMs: 10_000 });
    const sse = openSse(a.url, LIVE_PET, { api_key: API_KEY });
    const ws = openWs(a.url, LIVE_PET, { api_key: API_KEY });
    cleanups.push(
      () => ws.close(),
      () => sse.close(),
    );
    await sse.results.next();
    await ws.results.next();
    started.splice(started.indexOf(a), 1);

    // 'stopped', not 'cut': the streams ended on their own, the grace period did not run out.
    expect(await a.stop()).toBe('stopped');
    expect(sse.results.ended).toBe(true);
    await until(() => ws.results.ended, 'the WebSocket to close');
    expect(a.gateway.live?.queries.open).toBe(0);
  });
});
