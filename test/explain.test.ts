/**
 * Explain (EXPLAIN, `x-gateway-explain: 1`): the answer's `extensions.upstream` lists every
 * upstream call the request made, in order (method, path template, status, duration, batched,
 * shared, cached), on both HTTP paths (the lane and yoga); without the header, with EXPLAIN off,
 * and in production by default there is none.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import type { GatewayConfig } from '../src/gateway.js';
import { EVENTUALLY } from './helpers/clock.js';
import { useObserved } from './helpers/observed.js';
import { hold, json } from './helpers/scripted-upstream.js';
import { ALL_CREDENTIALS, API_KEY, BEARER, type ObservedGateway } from './helpers/stack.js';

const EXPLAIN = { 'x-gateway-explain': '1' };
const pet = (id: number) => ({ id, name: `Cat ${id}`, photoUrls: [], tags: [], status: 'available' });
const order = (id: number, petId: number) => ({ id, petId, quantity: 1, status: 'placed', complete: false });

/** The pet store the tests script: orders 1 and 2 of pet 7, order 3 of pet 8, and any pet by id. */
function petStore(request: { method: string; url: string }) {
  const orderId = /\/store\/order\/(\d+)$/.exec(request.url)?.[1];
  if (orderId !== undefined) return json(200, order(Number(orderId), orderId === '3' ? 8 : 7));
  const petId = /\/pet\/(\d+)$/.exec(request.url)?.[1];
  if (petId !== undefined) return json(200, pet(Number(petId)));
  if (request.url.startsWith('/api/v3/pet/findByStatus')) return json(200, [pet(1), pet(2)]);
  return json(404, { message: 'not scripted' });
}

/** One entry of `extensions.upstream`, its duration any number. */
function call(
  operation: string,
  method: string,
  path: string,
  flags: { batched?: boolean; shared?: boolean; status?: number; failure?: string } = {},
) {
  return {
    service: 'petstore',
    operation,
    method,
    path,
    status: flags.status ?? 200,
    durationMs: expect.any(Number) as unknown,
    batched: flags.batched ?? false,
    shared: flags.shared ?? false,
    cached: false,
    ...(flags.failure !== undefined ? { failure: flags.failure } : {}),
  };
}

const observed = useObserved();

/** A gateway over the scripted pet store ({@link petStore}); retries off. */
async function serve(overrides: Partial<GatewayConfig> = {}): Promise<ObservedGateway> {
  const gateway = await observed.serveScripted(overrides);
  observed.scripted.answer(petStore);
  return gateway;
}

/** The upstream requests so far, as `METHOD /path?query`. */
const received = () => observed.scripted.requests.map((request) => `${request.method} ${request.url}`);

/** Posts `query` as `application/graphql` (its text as the body), which the lane leaves to yoga. */
async function throughYoga(url: string, query: string, headers: Record<string, string>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/graphql', accept: 'application/graphql-response+json', ...headers },
    body: query,
  });
  return { status: response.status, ...((await response.json()) as Record<string, unknown>) };
}

const ORDERS_AND_PETS = '{ a: order(id: "1") { id pet { id } } b: order(id: "2") { id pet { id } } }';

describe('x-gateway-explain: 1 on a request the lane serves (a plain JSON POST)', () => {
  it("lists each call in order, with the path's template: the orders, then their one pet, each batched by a loader", async () => {
    const served = await serve();

    const result = await served.gql(ORDERS_AND_PETS, {}, EXPLAIN);

    expect(result.data).toEqual({ a: { id: '1', pet: { id: '7' } }, b: { id: '2', pet: { id: '7' } } });
    // The two orders go out together (in either order on the wire), then the one pet both name.
    expect(received().slice(0, 2).sort()).toEqual(['GET /api/v3/store/order/1', 'GET /api/v3/store/order/2']);
    expect(received().slice(2)).toEqual(['GET /api/v3/pet/7']);
    expect((result as { extensions?: unknown }).extensions).toEqual({
      upstream: [
        call('getOrderById', 'GET', '/store/order/{orderId}', { batched: true }),
        call('getOrderById', 'GET', '/store/order/{orderId}', { batched: true }),
        call('getPetById', 'GET', '/pet/{petId}', { batched: true }),
      ],
    });
  });

  it("shows a resolver's own call as not batched, its query string and credentials nowhere, and a failed call's status", async () => {
    const served = await serve();
    observed.scripted.answer((request) =>
      request.url.startsWith('/api/v3/pet/9') ? json(404, { message: 'Pet not found' }) : petStore(request),
    );

    const result = await served.gql(
      '{ petsByStatus(status: [AVAILABLE]) { id } pet(id: "9") { id } }',
      {},
      { ...EXPLAIN, ...ALL_CREDENTIALS },
    );

    expect(result.data).toEqual({ petsByStatus: [{ id: '1' }, { id: '2' }], pet: null });
    expect(received().sort()).toEqual(['GET /api/v3/pet/9', 'GET /api/v3/pet/findByStatus?status=available']);
    const { extensions } = result as { extensions?: { upstream?: unknown[] } };
    expect(extensions?.upstream).toHaveLength(2);
    expect(extensions?.upstream).toEqual(
      expect.arrayContaining([
        call('findPetsByStatus', 'GET', '/pet/findByStatus'),
        call('getPetById', 'GET', '/pet/{petId}', { batched: true, status: 404, failure: 'status' }),
      ]),
    );
    const text = JSON.stringify(extensions);
    for (const secret of [BEARER, API_KEY, 'available', '/pet/9']) expect(text).not.toContain(secret);
  });

  it("marks a call that joined an identical one in flight (another request's) as shared; the upstream got one", async () => {
    const served = await serve({ metrics: true });
    const held = hold(json(200, pet(1)));
    observed.scripted.answer(held.answer);

    const first = served.gql('{ pet(id: "1") { id } }', {}, { ...EXPLAIN, 'x-request-id': 'first' });
    await expect.poll(() => observed.scripted.requests.length, EVENTUALLY).toBe(1);
    const second = served.gql('{ pet(id: "1") { id } }', {}, { ...EXPLAIN, 'x-request-id': 'second' });
    // The second has joined once the observer has counted it.
    await expect
      .poll(async () =>
        (await (await fetch(`${served.origin}/metrics`)).text()).includes('upstream_shared_calls_total{'),
      )
      .toBe(true);
    held.release();

    const answers = (await Promise.all([first, second])) as { extensions?: unknown }[];
    expect(received()).toEqual(['GET /api/v3/pet/1']);
    expect(answers.map((answer) => answer.extensions)).toEqual([
      { upstream: [call('getPetById', 'GET', '/pet/{petId}', { batched: true })] },
      { upstream: [call('getPetById', 'GET', '/pet/{petId}', { batched: true, shared: true })] },
    ]);
  });

  it('adds nothing without the header: the answer has no extensions', async () => {
    const served = await serve();

    const result = await served.gql('{ pet(id: "1") { id } }');

    expect(result).toEqual({ status: 200, data: { pet: { id: '1' } } });
    expect(received()).toEqual(['GET /api/v3/pet/1']);
  });
});

describe('x-gateway-explain: 1 on a request yoga serves (a POST of application/graphql)', () => {
  it('lists the same calls as the lane, with the same code', async () => {
    const served = await serve();

    const result = await throughYoga(served.url, '{ order(id: "3") { pet { id } } }', EXPLAIN);

    expect(result).toEqual({
      status: 200,
      data: { order: { pet: { id: '8' } } },
      extensions: {
        upstream: [
          call('getOrderById', 'GET', '/store/order/{orderId}', { batched: true }),
          call('getPetById', 'GET', '/pet/{petId}', { batched: true }),
        ],
      },
    });
    expect(received()).toEqual(['GET /api/v3/store/order/3', 'GET /api/v3/pet/8']);
  });

  it('gives each operation of a batched request its own calls', async () => {
    const served = await serve({ batchMaxOperations: 2 });

    const response = await fetch(served.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...EXPLAIN },
      body: JSON.stringify([{ query: '{ pet(id: "4") { id } }' }, { query: '{ order(id: "1") { id } }' }]),
    });

    expect(await response.json()).toEqual([
      {
        data: { pet: { id: '4' } },
        extensions: { upstream: [call('getPetById', 'GET', '/pet/{petId}', { batched: true })] },
      },
      {
        data: { order: { id: '1' } },
        extensions: { upstream: [call('getOrderById', 'GET', '/store/order/{orderId}', { batched: true })] },
      },
    ]);
    expect(received().sort()).toEqual(['GET /api/v3/pet/4', 'GET /api/v3/store/order/1']);
  });
});

describe('with the response cache on', () => {
  it('a kept answer carries no calls to the next caller, and a hit explained lists none: nothing was called', async () => {
    const served = await serve({ responseCacheTtlMs: 60_000 });

    const first = await served.gql('{ pet(id: "1") { id } }', {}, EXPLAIN);
    const plain = await served.gql('{ pet(id: "1") { id } }');
    const hit = await served.gql('{ pet(id: "1") { id } }', {}, EXPLAIN);

    expect(first).toEqual({
      status: 200,
      data: { pet: { id: '1' } },
      extensions: { upstream: [call('getPetById', 'GET', '/pet/{petId}', { batched: true })] },
    });
    expect(plain).toEqual({ status: 200, data: { pet: { id: '1' } } });
    expect(hit).toEqual({ status: 200, data: { pet: { id: '1' } }, extensions: { upstream: [] } });
    expect(received()).toEqual(['GET /api/v3/pet/1']);
  });
});

describe('the header is ignored', () => {
  it('with EXPLAIN=false, on both paths: no extensions, the same upstream calls', async () => {
    const served = await serve({ explain: false });

    const lane = await served.gql('{ pet(id: "1") { id } }', {}, EXPLAIN);
    const yoga = await throughYoga(served.url, '{ pet(id: "2") { id } }', EXPLAIN);

    expect(lane).toEqual({ status: 200, data: { pet: { id: '1' } } });
    expect(yoga).toEqual({ status: 200, data: { pet: { id: '2' } } });
    expect(received()).toEqual(['GET /api/v3/pet/1', 'GET /api/v3/pet/2']);
  });

  it('in production unless EXPLAIN says otherwise; on elsewhere by default', () => {
    expect(loadConfig([], { NODE_ENV: 'production', PETSTORE_URL: 'http://a', PLANTS_URL: 'http://b' }).explain).toBe(
      false,
    );
    expect(
      loadConfig([], { NODE_ENV: 'production', PETSTORE_URL: 'http://a', PLANTS_URL: 'http://b', EXPLAIN: 'true' })
        .explain,
    ).toBe(true);
    expect(loadConfig([], {}).explain).toBe(true);
  });

  it('in production by default, on a gateway serving requests', async () => {
    const production = loadConfig([], { NODE_ENV: 'production', PETSTORE_URL: 'http://a', PLANTS_URL: 'http://b' });
    const served = await serve({ explain: production.explain });

    const result = await served.gql('{ pet(id: "1") { id } }', {}, EXPLAIN);

    expect(result).toEqual({ status: 200, data: { pet: { id: '1' } } });
    expect(received()).toEqual(['GET /api/v3/pet/1']);
  });

  it('unless its value is 1', async () => {
    const served = await serve();

    const result = await served.gql('{ pet(id: "1") { id } }', {}, { 'x-gateway-explain': 'yes' });

    expect(result).toEqual({ status: 200, data: { pet: { id: '1' } } });
  });
});
