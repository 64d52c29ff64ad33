/**
 * The upstream cache (`src/upstream/cache.ts`, UPSTREAM_CACHE): pet store GET answers kept per
 * REST resource and caller credential as RFC 9111 allows (max-age, no-store, private, Vary,
 * Expires, ETag and Last-Modified revalidation, stale-while-revalidate, stale-if-error),
 * per-operation defaults for answers without caching headers, batches that send only their
 * misses, and writes through the gateway that drop what they change. Each test asserts the
 * GraphQL answer and what the upstream received. Ages move with a fake `Date`
 * (`vi.setSystemTime`), never by waiting.
 */
import CachePolicy from 'http-cache-semantics';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { changedSettings, ConfigError, loadConfig, type UpstreamCacheSetting } from '../src/config/index.js';
import type { GatewayConfig } from '../src/gateway.js';
import { UpstreamCache, type RawResponse } from '../src/upstream/cache.js';
import { MemoryCacheStore } from '../src/upstream/cache-store.js';
import { LocalChangeFeed } from '../src/upstream/changes.js';
import type { UpstreamRequest } from '../src/upstream/http.js';
import { keptPolicy } from './helpers/cache-policy.js';
import { fakeClock, until } from './helpers/clock.js';
import { useObserved } from './helpers/observed.js';
import { hold, json, type Answer, type ReceivedRequest } from './helpers/scripted-upstream.js';
import { ALL_CREDENTIALS, BEARER, startStack, type ObservedGateway, type Stack } from './helpers/stack.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PET_QUERY = 'query Pet { pet(id: 1) { id name } }';
const EXPLAIN = { 'x-gateway-explain': '1' };
const ON: UpstreamCacheSetting = { enabled: true, defaults: {} };

const observed = useObserved();

/** A gateway over the scripted upstream with the upstream cache as `cache` says; retries off. */
function serve(cache: UpstreamCacheSetting = ON, overrides: Partial<GatewayConfig> = {}) {
  return observed.serveScripted({ upstreamCache: cache, explain: true, ...overrides });
}

/** The pet the scripted upstream answers for `id`, named after its `version`. */
const pet = (id: string, name: string) => ({ id: Number(id), name, photoUrls: [], tags: [], status: 'available' });

/**
 * A pet store on the scripted upstream: `GET /pet/{id}` answers the pet's current name with the
 * headers `headersFor` gives (or `answerFor`'s whole answer, when it gives one); `POST
 * /pet/{id}?name=` renames it.
 */
function petStore(
  headersFor: (request: ReceivedRequest) => Record<string, string> = () => ({}),
  answerFor: (request: ReceivedRequest) => Answer | undefined = () => undefined,
) {
  const names = new Map<string, string>();
  const nameOf = (id: string) => names.get(id) ?? `Cat ${id}`;
  observed.scripted.answer((request) => {
    const url = new URL(request.url, observed.scripted.url);
    const id = /^\/api\/v3\/pet\/(\d+)$/.exec(url.pathname)?.[1];
    if (id === undefined) return json(404, { message: 'not scripted' });
    if (request.method === 'POST') {
      names.set(id, url.searchParams.get('name') ?? nameOf(id));
      return json(200, pet(id, nameOf(id)));
    }
    const scripted = answerFor(request);
    if (scripted !== undefined) return scripted;
    return {
      status: 200,
      headers: { 'content-type': 'application/json', ...headersFor(request) },
      body: JSON.stringify(pet(id, nameOf(id))),
    };
  });
  return { rename: (id: string, name: string) => names.set(id, name) };
}

const gets = () =>
  observed.scripted.requests.filter((request) => request.method === 'GET').map((request) => request.url);

/** Moves the gateway's `Date` (the age of what it keeps) on by `seconds`, firing no timer. */
const later = (seconds: number) => vi.setSystemTime(Date.now() + seconds * 1000);

/** The samples of upstream_cache_total, as `operation result` → count. */
async function cacheCounts(served: ObservedGateway): Promise<Record<string, number>> {
  const text = await (await fetch(`${served.origin}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^upstream_cache_total\{.*operation="(\w+)",result="(\w+)"\} (\d+)/.exec(line);
    if (match) counts[`${match[1]} ${match[2]}`] = Number(match[3]);
  }
  return counts;
}

describe('following HTTP caching headers', () => {
  it('is off by default: every read is sent, whatever the upstream allows', async () => {
    expect(loadConfig([], {}).upstreamCache).toEqual({ enabled: false, defaults: {} });
    petStore(() => ({ 'cache-control': 'max-age=60' }));
    const served = await serve(loadConfig([], {}).upstreamCache);

    await served.gql(PET_QUERY);
    const second = await served.gql(PET_QUERY);

    expect(second.data).toEqual({ pet: { id: '1', name: 'Cat 1' } });
    expect(gets()).toEqual(['/api/v3/pet/1', '/api/v3/pet/1']);
  });

  it('answers from the cache while max-age lasts, marks the call cached, counts hits, and asks again once stale', async () => {
    fakeClock({ date: true });
    petStore(() => ({ 'cache-control': 'max-age=60' }));
    const served = await serve();

    await served.gql(PET_QUERY);
    later(59);
    const hit = await served.gql(PET_QUERY, {}, EXPLAIN);
    later(2);
    const stale = await served.gql(PET_QUERY);

    expect(hit.data).toEqual({ pet: { id: '1', name: 'Cat 1' } });
    expect(hit.extensions?.['upstream']).toMatchObject([
      { operation: 'getPetById', path: '/pet/{petId}', cached: true },
    ]);
    expect(hit.extensions?.['upstreamCache']).toBeUndefined();
    expect(stale.data).toEqual({ pet: { id: '1', name: 'Cat 1' } });
    expect(gets()).toEqual(['/api/v3/pet/1', '/api/v3/pet/1']);
    expect(await cacheCounts(served)).toEqual({ 'getPetById hit': 1, 'getPetById miss': 2 });
  });

  it('keeps nothing the upstream marked no-store', async () => {
    petStore(() => ({ 'cache-control': 'no-store, max-age=60' }));
    const served = await serve();

    await served.gql(PET_QUERY);
    await served.gql(PET_QUERY);

    expect(gets()).toEqual(['/api/v3/pet/1', '/api/v3/pet/1']);
  });

  it('keeps nothing the upstream marked private: the gateway is a shared cache', async () => {
    petStore(() => ({ 'cache-control': 'private, max-age=60' }));
    const served = await serve({ enabled: true, defaults: { getPetById: 30 } });

    await served.gql(PET_QUERY, {}, { api_key: 'key-of-ann' });
    await served.gql(PET_QUERY, {}, { api_key: 'key-of-ann' });

    expect(gets()).toEqual(['/api/v3/pet/1', '/api/v3/pet/1']);
  });

  it('shares a public answer between callers, unless it varies on their credential', async () => {
    let vary = false;
    petStore(() => ({ 'cache-control': 'public, max-age=60', ...(vary ? { vary: 'api_key' } : {}) }));
    const served = await serve();

    await served.gql(PET_QUERY, {}, { api_key: 'key-of-ann' });
    const other = await served.gql(PET_QUERY, {}, { api_key: 'key-of-bob' });
    expect(other.data).toEqual({ pet: { id: '1', name: 'Cat 1' } });
    expect(gets()).toHaveLength(1);

    vary = true;
    await served.gql('query Pet { pet(id: 2) { id name } }', {}, { api_key: 'key-of-ann' });
    await served.gql('query Pet { pet(id: 2) { id name } }', {}, { api_key: 'key-of-ann' });
    await served.gql('query Pet { pet(id: 2) { id name } }', {}, { api_key: 'key-of-bob' });
    expect(gets()).toEqual(['/api/v3/pet/1', '/api/v3/pet/2', '/api/v3/pet/2']);
    expect(observed.scripted.requests[2]?.headers['api_key']).toBe('key-of-bob');
  });

  it('honours Expires', async () => {
    fakeClock({ date: true });
    petStore(() => ({
      date: new Date(Date.now()).toUTCString(),
      expires: new Date(Date.now() + 30_000).toUTCString(),
    }));
    const served = await serve();

    await served.gql(PET_QUERY);
    later(20);
    await served.gql(PET_QUERY);
    expect(gets()).toHaveLength(1);
    later(11);
    await served.gql(PET_QUERY);
    expect(gets()).toHaveLength(2);
  });
});

describe('revalidation', () => {
  it('revalidates a stale answer with If-None-Match; a 304 refreshes it', async () => {
    fakeClock({ date: true });
    const headers = { 'cache-control': 'max-age=10', etag: '"v1"' };
    petStore(
      () => headers,
      (request) => (request.headers['if-none-match'] === '"v1"' ? { status: 304, headers } : undefined),
    );
    const served = await serve();

    await served.gql(PET_QUERY);
    later(11);
    const revalidated = await served.gql(PET_QUERY, {}, EXPLAIN);
    later(5);
    const refreshed = await served.gql(PET_QUERY);

    expect(revalidated.data).toEqual({ pet: { id: '1', name: 'Cat 1' } });
    expect(revalidated.extensions?.['upstream']).toMatchObject([{ status: 304, cached: false }]);
    expect(refreshed.data).toEqual({ pet: { id: '1', name: 'Cat 1' } });
    expect(observed.scripted.requests.map((request) => request.headers['if-none-match'])).toEqual([undefined, '"v1"']);
    expect(await cacheCounts(served)).toEqual({
      'getPetById miss': 1,
      'getPetById revalidated': 1,
      'getPetById hit': 1,
    });
  });

  it('revalidates with If-Modified-Since; a changed answer replaces the kept one', async () => {
    fakeClock({ date: true });
    const modified = 'Wed, 21 Oct 2026 07:28:00 GMT';
    const store = petStore(() => ({ 'cache-control': 'max-age=10', 'last-modified': modified }));
    const served = await serve();

    await served.gql(PET_QUERY);
    store.rename('1', 'Tom');
    later(11);
    const changed = await served.gql(PET_QUERY);
    const kept = await served.gql(PET_QUERY);

    expect(changed.data).toEqual({ pet: { id: '1', name: 'Tom' } });
    expect(kept.data).toEqual({ pet: { id: '1', name: 'Tom' } });
    expect(observed.scripted.requests.map((request) => request.headers['if-modified-since'])).toEqual([
      undefined,
      modified,
    ]);
  });
});

describe('stale answers', () => {
  it('serves a stale-while-revalidate answer at once, says so, and refreshes it once in the background', async () => {
    fakeClock({ date: true });
    const swr = { 'cache-control': 'max-age=10, stale-while-revalidate=60' };
    const held = hold({ status: 200, headers: { 'content-type': 'application/json', ...swr }, body: '{}' });
    let refreshing = false;
    petStore(
      () => swr,
      () => (refreshing ? held.answer : undefined),
    );
    const served = await serve();
    await served.gql(PET_QUERY);
    refreshing = true;
    later(11);

    const first = await served.gql(PET_QUERY);
    const second = await served.gql(PET_QUERY);

    expect(first.data).toEqual({ pet: { id: '1', name: 'Cat 1' } });
    expect(first.extensions?.['upstreamCache']).toEqual([
      { operation: 'getPetById', path: '/pet/{petId}', served: 'stale-while-revalidate', ageSeconds: 11 },
    ]);
    expect(second.data).toEqual({ pet: { id: '1', name: 'Cat 1' } });
    await until(() => gets().length === 2, 'the background refresh');
    // The refresh is held: the second stale answer did not start another one.
    expect(gets()).toEqual(['/api/v3/pet/1', '/api/v3/pet/1']);
    expect(await cacheCounts(served)).toEqual({ 'getPetById miss': 1, 'getPetById stale': 2 });
    held.release();
  });

  it('keeps what the background refresh fetched', async () => {
    fakeClock({ date: true });
    const store = petStore(() => ({ 'cache-control': 'max-age=10, stale-while-revalidate=60' }));
    const served = await serve();
    await served.gql(PET_QUERY);
    store.rename('1', 'Tom');
    later(11);

    await served.gql(PET_QUERY);
    await until(() => gets().length === 2, 'the background refresh');
    const fresh = await until(async () => {
      const answer = await served.gql(PET_QUERY);
      return answer.data?.['pet'] !== null && (answer.data?.['pet'] as { name: string }).name === 'Tom' && answer;
    }, 'the refreshed answer');

    expect(fresh.extensions?.['upstreamCache']).toBeUndefined();
    expect(gets()).toHaveLength(2);
  });

  it('serves the last good answer within stale-if-error when the upstream fails, and fails beyond it', async () => {
    fakeClock({ date: true });
    let down = false;
    petStore(
      () => ({ 'cache-control': 'max-age=10, stale-if-error=60' }),
      () => (down ? json(503, { message: 'down' }) : undefined),
    );
    const served = await serve();
    await served.gql(PET_QUERY);
    down = true;
    later(30);

    const within = await served.gql(PET_QUERY);
    later(41);
    const beyond = await served.gql(PET_QUERY);

    expect(within.data).toEqual({ pet: { id: '1', name: 'Cat 1' } });
    expect(within.errors).toBeUndefined();
    expect(within.extensions?.['upstreamCache']).toEqual([
      { operation: 'getPetById', path: '/pet/{petId}', served: 'stale-if-error', ageSeconds: 30 },
    ]);
    expect(beyond.data).toEqual({ pet: null });
    expect(beyond.errors?.[0]?.extensions?.['code']).toBe('UPSTREAM_UNAVAILABLE');
    expect(beyond.extensions?.['upstreamCache']).toBeUndefined();
    expect(gets()).toHaveLength(3);
  });
});

describe('stale-if-error without an answer', () => {
  it('serves the last good answer when the upstream resets the connection, and counts it stale', async () => {
    fakeClock({ date: true });
    let down = false;
    petStore(
      () => ({ 'cache-control': 'max-age=10, stale-if-error=60' }),
      () => (down ? { reset: true } : undefined),
    );
    const served = await serve();
    await served.gql(PET_QUERY);
    down = true;
    later(15);

    const answer = await served.gql(PET_QUERY, {}, EXPLAIN);

    expect(answer.data).toEqual({ pet: { id: '1', name: 'Cat 1' } });
    expect(answer.errors).toBeUndefined();
    expect(answer.extensions?.['upstreamCache']).toEqual([
      { operation: 'getPetById', path: '/pet/{petId}', served: 'stale-if-error', ageSeconds: 15 },
    ]);
    // The failed call, then the cache's answer in its place.
    expect(answer.extensions?.['upstream']).toMatchObject([
      { operation: 'getPetById', failure: 'unavailable', cached: false },
      { operation: 'getPetById', status: 200, cached: true },
    ]);
    expect(await cacheCounts(served)).toEqual({ 'getPetById miss': 1, 'getPetById stale': 1 });
  });
});

describe('extensions.upstreamCache on a request yoga serves (a POST of application/graphql)', () => {
  it('says a stale answer was served, as the lane does', async () => {
    fakeClock({ date: true });
    let down = false;
    petStore(
      () => ({ 'cache-control': 'max-age=10, stale-if-error=60' }),
      () => (down ? json(502, { message: 'bad gateway' }) : undefined),
    );
    const served = await serve();
    await served.gql(PET_QUERY);
    down = true;
    later(12);

    const response = await fetch(served.url, {
      method: 'POST',
      headers: { 'content-type': 'application/graphql', accept: 'application/graphql-response+json' },
      body: PET_QUERY,
    });
    const answer = (await response.json()) as Record<string, unknown>;

    expect(answer).toEqual({
      data: { pet: { id: '1', name: 'Cat 1' } },
      extensions: {
        upstreamCache: [{ operation: 'getPetById', path: '/pet/{petId}', served: 'stale-if-error', ageSeconds: 12 }],
      },
    });
  });
});

describe('per-operation defaults (for upstreams that send no caching headers)', () => {
  it('keeps an operation named in UPSTREAM_CACHE that long, and no other', async () => {
    fakeClock({ date: true });
    petStore();
    const served = await serve({ enabled: true, defaults: { getPetById: 30 } });

    await served.gql(PET_QUERY);
    later(29);
    await served.gql(PET_QUERY);
    expect(gets()).toHaveLength(1);
    later(2);
    await served.gql(PET_QUERY);
    expect(gets()).toHaveLength(2);
  });

  it('never gives one caller what was fetched with another api_key', async () => {
    observed.scripted.answer((request) => json(200, pet('1', `Cat of ${String(request.headers['api_key'])}`)));
    const served = await serve({ enabled: true, defaults: { getPetById: 30 } });

    const ann = await served.gql(PET_QUERY, {}, { api_key: 'key-of-ann' });
    const bob = await served.gql(PET_QUERY, {}, { api_key: 'key-of-bob' });
    const annAgain = await served.gql(PET_QUERY, {}, { api_key: 'key-of-ann' });
    const bobAgain = await served.gql(PET_QUERY, {}, { api_key: 'key-of-bob' });

    expect([ann, bob, annAgain, bobAgain].map((answer) => answer.data)).toEqual([
      { pet: { id: '1', name: 'Cat of key-of-ann' } },
      { pet: { id: '1', name: 'Cat of key-of-bob' } },
      { pet: { id: '1', name: 'Cat of key-of-ann' } },
      { pet: { id: '1', name: 'Cat of key-of-bob' } },
    ]);
    expect(observed.scripted.requests.map((request) => request.headers['api_key'])).toEqual([
      'key-of-ann',
      'key-of-bob',
    ]);
  });

  it('keeps a bearer-protected list per caller with a default, but not on a bare max-age (RFC 9111 §3.5)', async () => {
    const sent: { cacheControl?: string } = {};
    observed.scripted.answer((request) => ({
      status: 200,
      headers: {
        'content-type': 'application/json',
        ...(sent.cacheControl ? { 'cache-control': sent.cacheControl } : {}),
      },
      body: JSON.stringify([pet('1', `Cat for ${String(request.headers['authorization'])}`)]),
    }));
    const served = await serve({ enabled: true, defaults: { findPetsByStatus: 30 } });
    const list = 'query List { petsByStatus(status: [AVAILABLE]) { name } }';

    const ann = await served.gql(list, {}, { authorization: 'Bearer token-of-ann' });
    await served.gql(list, {}, { authorization: 'Bearer token-of-ann' });
    const bob = await served.gql(list, {}, { authorization: 'Bearer token-of-bob' });
    expect(ann.data).toEqual({ petsByStatus: [{ name: 'Cat for Bearer token-of-ann' }] });
    expect(bob.data).toEqual({ petsByStatus: [{ name: 'Cat for Bearer token-of-bob' }] });
    expect(observed.scripted.requests).toHaveLength(2);

    sent.cacheControl = 'max-age=60';
    const other = 'query List { petsByStatus(status: [SOLD]) { name } }';
    await served.gql(other, {}, { authorization: 'Bearer token-of-ann' });
    await served.gql(other, {}, { authorization: 'Bearer token-of-ann' });
    expect(observed.scripted.requests).toHaveLength(4);
  });

  it('reads UPSTREAM_CACHE as a list or a file, and refuses what it cannot use', () => {
    expect(
      loadConfig([], { UPSTREAM_CACHE: 'getPetById:30s,getInventory:500ms,getOrderById:2m' }).upstreamCache,
    ).toEqual({ enabled: true, defaults: { getPetById: 30, getInventory: 0.5, getOrderById: 120 } });
    expect(loadConfig([], { UPSTREAM_CACHE: 'on' }).upstreamCache).toEqual({ enabled: true, defaults: {} });
    // The start-up banner shows it as it could be written, and not at all when off.
    expect(changedSettings(loadConfig([], { UPSTREAM_CACHE: 'getPetById:30s' }))).toEqual([
      'UPSTREAM_CACHE=getPetById:30s',
    ]);
    expect(changedSettings(loadConfig([], { UPSTREAM_CACHE: 'on' }))).toEqual(['UPSTREAM_CACHE=on']);
    expect(changedSettings(loadConfig([], { UPSTREAM_CACHE: 'off' }))).toEqual([]);
    const file = join(mkdtempSync(join(tmpdir(), 'upstream-cache-')), 'defaults');
    writeFileSync(file, '# pets change rarely\ngetPetById:1h\nfindPetsByStatus: 10\n');
    expect(loadConfig([], { UPSTREAM_CACHE: file }).upstreamCache).toEqual({
      enabled: true,
      defaults: { getPetById: 3600, findPetsByStatus: 10 },
    });

    expect(() => loadConfig([], { UPSTREAM_CACHE: 'addPet:30s' })).toThrow(
      new ConfigError(
        'UPSTREAM_CACHE: "addPet" is not a cacheable operation (one of findPetsByStatus, findPetsByTags, getPetById, ' +
          'getInventory, getOrderById, getUserByName)',
      ),
    );
    expect(() => loadConfig([], { UPSTREAM_CACHE: 'getPetById=30' })).toThrow(
      'UPSTREAM_CACHE must be on, off, or a list of operation:duration (e.g. getPetById:30s), got "getPetById=30"',
    );
    // Workers without Redis would not hear each other's writes.
    expect(() => loadConfig([], { UPSTREAM_CACHE: 'on', WORKERS: 'auto' })).toThrow(
      'UPSTREAM_CACHE needs REDIS_URL when WORKERS is not 1 (it is auto): each worker would keep its own answers, ' +
        'and a write through one would not drop what the others kept; set REDIS_URL, or WORKERS=1',
    );
    expect(loadConfig([], { UPSTREAM_CACHE: 'on', WORKERS: '4', REDIS_URL: 'redis://127.0.0.1:6379' }).workers).toBe(4);
    expect(() => loadConfig([], { UPSTREAM_CACHE: '/nonexistent/upstream-cache' })).toThrow(
      'UPSTREAM_CACHE: cannot read /nonexistent/upstream-cache (ENOENT)',
    );
  });
});

describe('batches', () => {
  it('sends only the misses of a batch upstream', async () => {
    petStore();
    const served = await serve({ enabled: true, defaults: { getPetById: 30 } });
    await served.gql('query Three { pets(ids: [1, 2, 3]) { id } }');
    observed.scripted.requests.length = 0;

    const batch = await served.gql('query Five { pets(ids: [1, 2, 3, 4, 5]) { id name } }', {}, EXPLAIN);

    expect(batch.data).toEqual({
      pets: ['1', '2', '3', '4', '5'].map((id) => ({ id, name: `Cat ${id}` })),
    });
    expect(gets().sort()).toEqual(['/api/v3/pet/4', '/api/v3/pet/5']);
    const calls = batch.extensions?.['upstream'] as { cached: boolean; batched: boolean }[];
    expect(calls.filter((call) => call.cached)).toHaveLength(3);
    expect(calls.filter((call) => !call.cached)).toHaveLength(2);
  });
});

describe('invalidation', () => {
  it('drops what a read in flight during a write would have kept', async () => {
    const served = await serve();
    const held = hold(json(200, pet('1', 'Cat 1')));
    let holding = true;
    petStore(
      () => ({ 'cache-control': 'max-age=60' }),
      (request) => (holding && request.method === 'GET' ? held.answer : undefined),
    );
    const oldRead = served.gql(PET_QUERY);
    await until(() => gets().length === 1, 'the read to reach the upstream');

    holding = false;
    const renamed = await served.gql(
      'mutation Rename { updatePetWithForm(id: 1, name: "Tom") { name } }',
      {},
      {
        authorization: `Bearer ${BEARER}`,
      },
    );
    held.release();
    await oldRead;
    const next = await served.gql(PET_QUERY);

    expect(renamed.data).toEqual({ updatePetWithForm: { name: 'Tom' } });
    expect(next.data).toEqual({ pet: { id: '1', name: 'Tom' } });
    expect(gets()).toEqual(['/api/v3/pet/1', '/api/v3/pet/1']);
  });
});

describe('invalidation by each write (the emulator)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      upstreamCache: {
        enabled: true,
        defaults: { getPetById: 300, findPetsByStatus: 300, getInventory: 300, getOrderById: 300, getUserByName: 300 },
      },
    });
  });
  afterAll(() => stack.close());

  const READS = {
    pet: 'query { pet(id: 1) { name } }',
    list: 'query { petsByStatus(status: [AVAILABLE]) { id } }',
    inventory: 'query { inventory { entries { status quantity } } }',
    order: 'query { order(id: 1) { id } }',
    user: 'query { user(username: "user1") { username } }',
  } as const;
  /** Reads each of `READS`; the upstream paths they reached. */
  async function readAll(): Promise<string[]> {
    stack.upstream();
    for (const query of Object.values(READS)) await stack.gql(query, {}, ALL_CREDENTIALS);
    return stack.upstream().map((request) => request.path);
  }

  it('a pet write drops the pet, the pet lists and the inventory; placeOrder the inventory; updateUser the user', async () => {
    expect(await readAll()).toEqual([
      '/api/v3/pet/1',
      '/api/v3/pet/findByStatus',
      '/api/v3/store/inventory',
      '/api/v3/store/order/1',
      '/api/v3/user/user1',
    ]);
    expect(await readAll()).toEqual([]);

    await stack.gql('mutation { updatePetWithForm(id: 1, name: "Renamed") { id } }', {}, ALL_CREDENTIALS);
    expect(await readAll()).toEqual(['/api/v3/pet/1', '/api/v3/pet/findByStatus', '/api/v3/store/inventory']);

    const replaced = await stack.gql(
      'mutation { updatePet(id: 1, input: { name: "Replaced", status: AVAILABLE }) { name } }',
      {},
      ALL_CREDENTIALS,
    );
    expect(replaced.data).toEqual({ updatePet: { name: 'Replaced' } });
    expect(await readAll()).toEqual(['/api/v3/pet/1', '/api/v3/pet/findByStatus', '/api/v3/store/inventory']);
    expect((await stack.gql(READS.pet, {}, ALL_CREDENTIALS)).data).toEqual({ pet: { name: 'Replaced' } });

    await stack.gql('mutation { placeOrder(input: { petId: 2, quantity: 1 }) { id } }', {}, ALL_CREDENTIALS);
    expect(await readAll()).toEqual(['/api/v3/store/inventory']);

    stack.upstream();
    const updated = await stack.gql(
      'mutation { updateUser(username: "user1", input: { username: "user1", email: "new@example.com" }) { email } }',
      {},
      ALL_CREDENTIALS,
    );
    // The gateway reads the user back after the PUT: sent, since the kept answer was dropped.
    expect(updated.data).toEqual({ updateUser: { email: 'new@example.com' } });
    expect(stack.upstream().map((request) => `${request.method} ${request.path}`)).toEqual([
      'PUT /api/v3/user/user1',
      'GET /api/v3/user/user1',
    ]);
    const user = await stack.gql('query { user(username: "user1") { email } }', {}, ALL_CREDENTIALS);
    expect(user.data).toEqual({ user: { email: 'new@example.com' } });
  });
});

describe('the memory store', () => {
  it('keeps at most its entries and bytes, dropping the least recently used', async () => {
    const store = new MemoryCacheStore({ maxEntries: 2, maxBytes: 100_000 });
    const answer = (text: string) => ({ policy: keptPolicy(), text });
    await store.set('a', answer('A'), 60_000);
    await store.set('b', answer('B'), 60_000);
    await store.get(['a']);
    await store.set('c', answer('C'), 60_000);

    expect(await store.get(['b'])).toBeUndefined();
    expect((await store.get(['a']))?.text).toBe('A');
    expect((await store.get(['c']))?.text).toBe('C');

    const probe = new MemoryCacheStore({ maxEntries: 100, maxBytes: 1_000_000 });
    await probe.set('a', answer('x'.repeat(40)), 60_000);
    const oneEntry = probe.size.bytes;
    // Room for one and a half entries: the second pushes the first out.
    const small = new MemoryCacheStore({ maxEntries: 100, maxBytes: Math.floor(oneEntry * 1.5) });
    await small.set('a', answer('x'.repeat(40)), 60_000);
    await small.set('b', answer('y'.repeat(40)), 60_000);
    expect(small.size).toEqual({ entries: 1, bytes: oneEntry });
    expect(await small.get(['a'])).toBeUndefined();
    expect((await small.get(['b']))?.text).toBe('y'.repeat(40));
  });
});

describe('a kept answer that cannot be read', () => {
  it('is taken for a miss: the call is sent, and its answer replaces it', async () => {
    const store = new MemoryCacheStore({ maxEntries: 10, maxBytes: 1_000_000 });
    const cache = new UpstreamCache(store, { defaults: {} }, new LocalChangeFeed());
    const headers = { 'content-type': 'application/json', 'cache-control': 'max-age=60' };
    const damaged = new CachePolicy(
      { url: '/pet/1', method: 'GET', headers: {} },
      { status: 200, headers },
      { shared: true },
    ).toObject();
    // The key of an uncredentialed GET /pet/1 before any change: area, method, path, generation 0 of pet:1.
    await store.set('petstore GET /pet/1|0', { policy: damaged, text: '{"id": 1, "name": "Cat' }, 60_000);
    const sent: UpstreamRequest[] = [];
    const send = (call: UpstreamRequest): Promise<RawResponse> => {
      sent.push(call);
      return Promise.resolve({ status: 200, body: { id: 1 }, raw: { headers, text: '{"id": 1}' } });
    };
    const call: UpstreamRequest = { operation: 'getPetById', method: 'GET', path: '/pet/1', template: '/pet/{petId}' };

    const first = await cache.fetch('petstore', call, '/pet/1', send);
    const second = await cache.fetch('petstore', call, '/pet/1', send);

    expect(first).toMatchObject({ result: 'miss', response: { status: 200, body: { id: 1 } } });
    expect(second).toMatchObject({ result: 'hit', served: 'fresh', response: { body: { id: 1 } } });
    expect(sent).toHaveLength(1);
  });
});
