/**
 * The upstream cache and the change feed shared through Redis (REDIS_URL; a real `redis-server`
 * started by the test): replicas serve each other's kept answers, but never one caller's to
 * another caller; a write through one replica makes every replica's next read fetch again; the
 * change feed tells each replica's listeners once; Redis holds no credential; and a write is
 * not held up when Redis is away.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createGateway, type Gateway } from '../src/gateway.js';
import type { SharedRedis } from '../src/redis/index.js';
import { redisUpstreamCacheStore } from '../src/redis/upstream-cache-store.js';
import type { UpstreamChange } from '../src/upstream/changes.js';
import { keptPolicy } from './helpers/cache-policy.js';
import { until } from './helpers/clock.js';
import { useRedis } from './helpers/redis.js';
import { hold, json, startScriptedUpstream, type ScriptedUpstream } from './helpers/scripted-upstream.js';
import {
  captureLog,
  listen,
  postGraphQL,
  stop,
  testConfig,
  type CapturedLog,
  type GraphQLResponse,
} from './helpers/stack.js';

const redis = useRedis();
const PET_QUERY = 'query Pet { pet(id: 1) { id name } }';
const RENAME = 'mutation Rename { updatePetWithForm(id: 1, name: "Tom") { name } }';
const BEARER = { authorization: 'Bearer token-of-the-editor' };

let upstream: ScriptedUpstream;
beforeAll(async () => {
  upstream = await startScriptedUpstream();
});
afterAll(() => upstream.close());

/** One replica: its gateway (for its change feed), served over HTTP, its log captured. */
type Replica = {
  gateway: Gateway;
  log: CapturedLog;
  gql(query: string, headers?: Record<string, string>): Promise<GraphQLResponse>;
  close(): Promise<void>;
};
const replicas: Replica[] = [];
afterEach(async () => {
  await Promise.all(replicas.splice(0).map((replica) => replica.close()));
  upstream.reset();
  await redis.cli('FLUSHALL');
});

/** A replica on the test's Redis and the scripted upstream, pets kept 5 minutes by default. */
async function replica(): Promise<Replica> {
  const log = captureLog();
  const gateway = createGateway(
    testConfig({
      petstoreUrl: `${upstream.url}/api/v3`,
      plantsUrl: upstream.url,
      upstreamRetries: 0,
      redisUrl: redis.url,
      redisKeyPrefix: 'test-gateway:',
      logLevel: 'info',
      upstreamCache: { enabled: true, defaults: { getPetById: 300 } },
    }),
    { logDestination: log },
  );
  const { server, url } = await listen(gateway.handler);
  const made: Replica = {
    gateway,
    log,
    gql: (query, headers = {}) => postGraphQL(`${url}/graphql`, query, {}, headers),
    async close() {
      await stop(server);
      await gateway.close();
    },
  };
  replicas.push(made);
  await until(() => gateway.redis?.status() === 'ready', 'the replica to reach Redis');
  return made;
}

/** Two replicas whose change feeds are both subscribed (each has heard a change published on the channel). */
async function twoReplicas(): Promise<[Replica, Replica]> {
  const pair: [Replica, Replica] = [await replica(), await replica()];
  const heard = pair.map(() => [] as UpstreamChange[]);
  const stops = pair.map((one, index) => one.gateway.changes.listen((changes) => heard[index]?.push(...changes)));
  // A message from outside both replicas: each hears it once its subscription is in place.
  await until(async () => {
    await redis.cli(
      'PUBLISH',
      'test-gateway:upstream-changes',
      JSON.stringify({ from: 'the test', changes: [{ resource: 'user', username: 'nobody' }] }),
    );
    return heard.every((list) => list.length > 0);
  }, 'both replicas to subscribe to the change feed');
  for (const stopListening of stops) stopListening();
  return pair;
}

/** A pet store whose pet names change with `POST /pet/{id}?name=`, and answer with no caching headers. */
function petStore(): void {
  const names = new Map<string, string>();
  upstream.answer((request) => {
    const url = new URL(request.url, upstream.url);
    const id = /^\/api\/v3\/pet\/(\d+)$/.exec(url.pathname)?.[1] ?? '0';
    if (request.method === 'POST') names.set(id, url.searchParams.get('name') ?? '');
    const key = request.headers['api_key'];
    const name = names.get(id) ?? (typeof key === 'string' ? `Cat of ${key}` : `Cat ${id}`);
    return json(200, { id: Number(id), name, photoUrls: [], tags: [], status: 'available' });
  });
}

const calls = () => upstream.requests.map((request) => `${request.method} ${request.url}`);

describe('the upstream cache in Redis', () => {
  it("serves one replica's kept answer from another, but never to a caller with another api_key", async () => {
    petStore();
    const [a, b] = await twoReplicas();

    const annViaA = await a.gql(PET_QUERY, { api_key: 'key-of-ann' });
    const annViaB = await b.gql(PET_QUERY, { api_key: 'key-of-ann' });
    const bobViaB = await b.gql(PET_QUERY, { api_key: 'key-of-bob' });
    const bobViaA = await a.gql(PET_QUERY, { api_key: 'key-of-bob' });

    expect([annViaA, annViaB, bobViaB, bobViaA].map((answer) => answer.data)).toEqual([
      { pet: { id: '1', name: 'Cat of key-of-ann' } },
      { pet: { id: '1', name: 'Cat of key-of-ann' } },
      { pet: { id: '1', name: 'Cat of key-of-bob' } },
      { pet: { id: '1', name: 'Cat of key-of-bob' } },
    ]);
    expect(upstream.requests.map((request) => request.headers['api_key'])).toEqual(['key-of-ann', 'key-of-bob']);
  });

  it('keeps no credential in Redis, not even for an answer that varies on it', async () => {
    upstream.answer(() => ({
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=60', vary: 'api_key' },
      body: JSON.stringify({ id: 1, name: 'Cat 1', photoUrls: [], tags: [], status: 'available' }),
    }));
    const [a, b] = await twoReplicas();

    await a.gql(PET_QUERY, { api_key: 'key-of-ann', ...BEARER });
    await b.gql(PET_QUERY, { api_key: 'key-of-ann', ...BEARER });
    await b.gql(PET_QUERY, { api_key: 'key-of-bob', ...BEARER });

    expect(upstream.requests.map((request) => request.headers['api_key'])).toEqual(['key-of-ann', 'key-of-bob']);
    const dump = await redis.cli(
      '--no-raw',
      'EVAL',
      "return table.concat(redis.call('MGET', unpack(redis.call('KEYS', '*'))), ' ')",
      '0',
    );
    const keys = await redis.cli('KEYS', '*');
    expect(dump).toContain('Cat 1');
    for (const secret of ['key-of-ann', 'key-of-bob', 'token-of-the-editor'])
      expect(`${keys}\n${dump}`).not.toContain(secret);
  });

  it('a read through A, an update through B: the next read through A sees the update', async () => {
    petStore();
    const [a, b] = await twoReplicas();

    const before = await a.gql(PET_QUERY);
    await a.gql(PET_QUERY);
    const renamed = await b.gql(RENAME, BEARER);
    const after = await a.gql(PET_QUERY);

    expect(before.data).toEqual({ pet: { id: '1', name: 'Cat 1' } });
    expect(renamed.data).toEqual({ updatePetWithForm: { name: 'Tom' } });
    expect(after.data).toEqual({ pet: { id: '1', name: 'Tom' } });
    expect(calls()).toEqual(['GET /api/v3/pet/1', 'POST /api/v3/pet/1?name=Tom', 'GET /api/v3/pet/1']);
  });
});

describe('the upstream cache store in Redis', () => {
  /** A connection whose commands fail (give their fallback, as with Redis away or too slow) while `failing` is set. */
  function flakyConnection(client: Redis, state: { failing: boolean }): SharedRedis {
    return {
      keyPrefix: 'test-gateway:',
      shownUrl: 'redis://127.0.0.1',
      status: () => 'ready',
      attempt: async (_operation, command, fallback) => (state.failing ? fallback : command(client)),
      onReconnect: () => undefined,
      subscribe: () => undefined,
      settled: () => Promise.resolve('ready'),
      ping: () => Promise.resolve({ ready: true, latencyMs: 0 }),
      close: () => Promise.resolve(),
    };
  }

  it('makes up for a bump it could not make: what was kept before is not served after', async () => {
    const client = new Redis(redis.url);
    try {
      const state = { failing: false };
      const store = redisUpstreamCacheStore(flakyConnection(client, state));
      const keyAt = async () => `petstore GET /pet/1|${(await store.generations(['pet:1']))?.join('.')}`;
      const kept = await keyAt();
      await store.set(kept, { policy: keptPolicy(), text: 'Cat 1' }, 60_000);
      expect((await store.get([await keyAt()]))?.text).toBe('Cat 1');

      state.failing = true;
      await store.bump(['pet:1']);
      expect(await store.generations(['pet:1'])).toBeUndefined();
      state.failing = false;

      expect(await keyAt()).not.toBe(kept);
      expect(await store.get([await keyAt()])).toBeUndefined();
      expect((await store.get([kept]))?.text).toBe('Cat 1');
    } finally {
      client.disconnect();
    }
  });
});

describe('the change feed in Redis', () => {
  it("keeps a read through A that starts after B's write from joining A's read in flight from before it", async () => {
    petStore();
    const [a, b] = await twoReplicas();
    const script = upstream.requests;
    const held = hold(json(200, { id: 1, name: 'Cat 1', photoUrls: [], tags: [], status: 'available' }));
    let first = true;
    const names = new Map<string, string>();
    upstream.answer((request) => {
      const url = new URL(request.url, upstream.url);
      if (request.method === 'POST') names.set('1', url.searchParams.get('name') ?? '');
      if (request.method === 'GET' && first) {
        first = false;
        return held.answer;
      }
      return json(200, { id: 1, name: names.get('1') ?? 'Cat 1', photoUrls: [], tags: [], status: 'available' });
    });
    const heard: UpstreamChange[] = [];
    a.gateway.changes.listen((changes) => heard.push(...changes));

    const before = a.gql(PET_QUERY);
    await until(() => script.length === 1, 'the first read to reach the upstream');
    await b.gql(RENAME, BEARER);
    await until(() => heard.length > 0, 'replica A to hear the change');
    const after = await a.gql(PET_QUERY);
    held.release();

    expect((await before).data).toEqual({ pet: { id: '1', name: 'Cat 1' } });
    expect(after.data).toEqual({ pet: { id: '1', name: 'Tom' } });
    expect(calls()).toEqual(['GET /api/v3/pet/1', 'POST /api/v3/pet/1?name=Tom', 'GET /api/v3/pet/1']);
  });

  it("tells every replica's listeners, each change once", async () => {
    petStore();
    const [a, b] = await twoReplicas();
    const heard = { a: [] as UpstreamChange[], b: [] as UpstreamChange[] };
    a.gateway.changes.listen((changes) => heard.a.push(...changes));
    b.gateway.changes.listen((changes) => heard.b.push(...changes));

    await b.gql(RENAME, BEARER);
    await until(() => heard.a.length > 0, 'replica A to hear the change');
    // Anything after it would have arrived with it: one more round trip through Redis.
    await redis.cli('PING');

    const expected = [{ resource: 'pet', id: '1' }, { resource: 'inventory' }];
    expect(heard.b).toEqual(expected);
    expect(heard.a).toEqual(expected);
  });

  it('drops messages that are not changes it knows', async () => {
    const [a] = await twoReplicas();
    const heard: UpstreamChange[] = [];
    a.gateway.changes.listen((changes) => heard.push(...changes));
    const publish = (message: string) => redis.cli('PUBLISH', 'test-gateway:upstream-changes', message);

    await publish('{not json');
    await publish(JSON.stringify({ from: 'elsewhere', changes: [{ resource: 'pet' }] }));
    await publish(JSON.stringify({ from: 'elsewhere', changes: [{ resource: 'garden', id: '1' }] }));
    await publish(JSON.stringify({ changes: [{ resource: 'inventory' }] }));
    await publish(JSON.stringify({ from: 'elsewhere', changes: [{ resource: 'order', id: '7' }] }));
    await until(() => heard.length > 0, 'the well-formed change');

    expect(heard).toEqual([{ resource: 'order', id: '7' }]);
  });

  it('does not hold a write up while Redis is away: the write is answered, and a warning logged once', async () => {
    petStore();
    const [a] = await twoReplicas();
    await redis.stop();
    await until(() => a.gateway.redis?.status() === 'unreachable', 'the replica to lose Redis');

    const first = await a.gql(RENAME, BEARER);
    const second = await a.gql(RENAME, BEARER);
    const read = await a.gql(PET_QUERY);

    expect(first.data).toEqual({ updatePetWithForm: { name: 'Tom' } });
    expect(second.data).toEqual({ updatePetWithForm: { name: 'Tom' } });
    expect(read.data).toEqual({ pet: { id: '1', name: 'Tom' } });
    const warnings = a.log.lines().filter((line) => String(line['msg']).startsWith('upstream changes not shared'));
    expect(warnings).toHaveLength(1);
    await redis.start();
  });
});
