/**
 * Shared in-flight calls (`src/upstream/in-flight.ts`, `UPSTREAM_DEDUPE`): identical upstream
 * GETs in flight at the same time, from any requests, share one call. Identical means the same
 * area, path, query, `Accept` and credential; POST, PUT and DELETE are never shared, and a
 * change keeps later reads of its resource from joining a call that started before it. Each
 * caller keeps its own deadline, every caller gets the answer or the failure, and joined calls
 * are counted (`upstream_shared_calls_total`) and shown in the request log (`shared: true`).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { GatewayConfig } from '../src/gateway.js';
import { createUpstreamClient, type UpstreamClient, type UpstreamRequest } from '../src/upstream/http.js';
import { callOf, PETSTORE_OPERATIONS, type PetstoreOperationId } from '../src/upstream/operations.js';
import { PetStatus } from '../src/upstream/payloads.js';
import { createPetstoreApi } from '../src/upstream/petstore.js';
import { EVENTUALLY, fakeClock, tracked, until } from './helpers/clock.js';
import { useObserved } from './helpers/observed.js';
import { hold, json, type Answer } from './helpers/scripted-upstream.js';
import {
  ALL_CREDENTIALS,
  API_KEY,
  defaultClientOptions,
  timeoutsSetBy,
  type GraphQLResponse,
  type ObservedGateway,
} from './helpers/stack.js';
import { errorsOf } from './helpers/answers.js';

const PET_1 = { id: 1, name: 'Cat 1', photoUrls: [], tags: [], status: 'available' };
const PET_QUERY = 'query Pet { pet(id: 1) { id name } }';
const GET_PET_1 = 'GET /api/v3/pet/1';
const CAT_1 = { status: 200, data: { pet: { id: '1', name: 'Cat 1' } } };

const observed = useObserved();
let client: UpstreamClient | undefined;

afterEach(async () => {
  await client?.close();
  client = undefined;
});

/** A gateway over the scripted upstream, its log captured; retries off, so each call is one request. */
function serve(overrides: Partial<GatewayConfig> = {}): Promise<ObservedGateway> {
  return observed.serveScripted(overrides);
}

/** An upstream client of the pet store on the scripted upstream, with the default sharing. */
function petstoreClient(): UpstreamClient {
  client = createUpstreamClient('petstore', { ...defaultClientOptions(`${observed.scripted.url}/api/v3`), retries: 0 });
  return client;
}

/** The upstream requests since the last reset, as `METHOD /path?query`. */
/** A JSON write of pet 1 to `/pet`, as addPet (POST) and updatePet (PUT) send it. */
const petWrite = (operation: string, method: 'POST' | 'PUT'): UpstreamRequest => ({
  operation,
  method,
  path: '/pet',
  headers: { accept: 'application/json' },
  body: { contentType: 'application/json', data: '{"id":1}' },
});
const calls = () => observed.scripted.requests.map((request) => `${request.method} ${request.url}`);

/** The samples of `metric` in the gateway's /metrics (its name with labels, as written) and their values. */
async function samples(served: ObservedGateway, metric: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${served.origin}/metrics`)).text();
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.startsWith(`${metric}{`))
      .map((line) => {
        const at = line.lastIndexOf(' ');
        return [line.slice(0, at), Number(line.slice(at + 1))];
      }),
  );
}

/** How many `getPetById` calls joined one already in flight, by /metrics. */
async function joinedPetCalls(served: ObservedGateway): Promise<number> {
  return (
    (await samples(served, 'upstream_shared_calls_total'))[
      'upstream_shared_calls_total{service="petstore",operation="getPetById"}'
    ] ?? 0
  );
}

/** The errors of a result without their locations, which only repeat the query text. */

/**
 * How many `Pet` operations have ended with UPSTREAM_TIMEOUT, by /metrics: counted as each result is
 * ready, inside the gateway, so a caller that gave up shows here once its timer has fired.
 */
async function timedOutOperations(served: ObservedGateway): Promise<number> {
  return (
    (await samples(served, 'graphql_errors_total'))[
      'graphql_errors_total{operation_name="Pet",code="UPSTREAM_TIMEOUT"}'
    ] ?? 0
  );
}

describe('identical reads in flight at once', () => {
  it("50 requests asking the same pet make one upstream call, made with the first caller's request id, and all get the pet", async () => {
    const served = await serve();
    const held = hold(json(200, PET_1));
    observed.scripted.answer(held.answer);

    const results = Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        served.gql(PET_QUERY, {}, { api_key: API_KEY, 'x-request-id': `caller-${index}` }),
      ),
    );
    await expect.poll(() => joinedPetCalls(served), EVENTUALLY).toBe(49);
    held.release();

    expect(await results).toEqual(Array.from({ length: 50 }, () => CAT_1));
    expect(
      observed.scripted.requests.map((request) => [
        request.method,
        request.url,
        request.headers['api_key'],
        request.headers['accept'],
        request.headers['authorization'],
      ]),
    ).toEqual([['GET', '/api/v3/pet/1', API_KEY, 'application/json', undefined]]);
    // The one call carried the request id of the request that started it, and no other.
    const firstCaller = observed.scripted.requests[0]?.headers['x-request-id'];
    expect(firstCaller).toMatch(/^caller-\d+$/);
    const lines = served.requestLines();
    expect(lines).toHaveLength(50);
    for (const line of lines) {
      const shared = line['requestId'] !== firstCaller;
      expect(line['upstream']).toEqual([
        {
          service: 'petstore',
          operation: 'getPetById',
          method: 'GET',
          status: 200,
          durationMs: expect.any(Number) as unknown,
          ...(shared ? { shared: true } : {}),
        },
      ]);
    }
  });

  it('are counted: upstream_requests_total counts the call sent, upstream_shared_calls_total the 49 that joined it', async () => {
    const served = await serve();
    const held = hold(json(200, PET_1));
    observed.scripted.answer(held.answer);

    const results = Promise.all(Array.from({ length: 50 }, () => served.gql(PET_QUERY, {}, { api_key: API_KEY })));
    await expect.poll(() => joinedPetCalls(served), EVENTUALLY).toBe(49);
    held.release();
    await results;

    expect(await samples(served, 'upstream_shared_calls_total')).toEqual({
      'upstream_shared_calls_total{service="petstore",operation="getPetById"}': 49,
    });
    expect(await samples(served, 'upstream_requests_total')).toEqual({
      'upstream_requests_total{service="petstore",operation="getPetById",method="GET",status="200",outcome="ok"}': 1,
    });
  });

  it("from callers with different credentials, or none, are not shared: each upstream call carries its own caller's credential and no other", async () => {
    const served = await serve();
    const held = hold(json(200, PET_1));
    // Each answer names the credential it was asked with, so a caller served another's answer shows.
    observed.scripted.answer((request) => ({
      until: held.until,
      then: json(200, {
        ...PET_1,
        name: `seen with ${String(request.headers['api_key'] ?? request.headers['authorization'] ?? 'nothing')}`,
      }),
    }));
    const callers: Record<string, string>[] = [
      { api_key: 'key-of-ann' },
      { api_key: 'key-of-ann' },
      { api_key: 'key-of-bo' },
      {},
      { authorization: 'Bearer token-of-cy' },
      { authorization: 'Bearer token-of-di' },
    ];

    const results = Promise.all(callers.map((headers) => served.gql(PET_QUERY, {}, headers)));
    await expect.poll(() => observed.scripted.requests.length, EVENTUALLY).toBe(5);
    await expect.poll(() => joinedPetCalls(served), EVENTUALLY).toBe(1);
    held.release();

    expect((await results).map((result) => result.data)).toEqual(
      [
        'seen with key-of-ann',
        'seen with key-of-ann',
        'seen with key-of-bo',
        'seen with nothing',
        'seen with Bearer token-of-cy',
        'seen with Bearer token-of-di',
      ].map((name) => ({ pet: { id: '1', name } })),
    );
    const sent = observed.scripted.requests.map((request) => ({
      method: request.method,
      url: request.url,
      apiKey: request.headers['api_key'],
      authorization: request.headers['authorization'],
    }));
    expect(sent.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([
      { method: 'GET', url: '/api/v3/pet/1', apiKey: 'key-of-ann', authorization: undefined },
      { method: 'GET', url: '/api/v3/pet/1', apiKey: 'key-of-bo', authorization: undefined },
      { method: 'GET', url: '/api/v3/pet/1', apiKey: undefined, authorization: 'Bearer token-of-cy' },
      { method: 'GET', url: '/api/v3/pet/1', apiKey: undefined, authorization: 'Bearer token-of-di' },
      { method: 'GET', url: '/api/v3/pet/1', apiKey: undefined, authorization: undefined },
    ]);
  });

  it('with UPSTREAM_DEDUPE=false make one upstream call per request', async () => {
    const served = await serve({ upstreamDedupe: false });
    const held = hold(json(200, PET_1));
    observed.scripted.answer(held.answer);

    const results = Promise.all(Array.from({ length: 5 }, () => served.gql(PET_QUERY, {}, { api_key: API_KEY })));
    await expect.poll(() => observed.scripted.requests.length, EVENTUALLY).toBe(5);
    held.release();

    expect(await results).toEqual(Array.from({ length: 5 }, () => CAT_1));
    expect(calls()).toEqual(Array.from({ length: 5 }, () => GET_PET_1));
    expect(await samples(served, 'upstream_shared_calls_total')).toEqual({});
  });

  it("still count against each caller's own UPSTREAM_MAX_CALLS_PER_OPERATION budget", async () => {
    const served = await serve({ upstreamMaxCallsPerOperation: 1 });
    const held = hold(json(200, PET_1));
    observed.scripted.answer(held.answer);

    const first = served.gql(PET_QUERY, {}, { api_key: API_KEY });
    await expect.poll(() => observed.scripted.requests.length, EVENTUALLY).toBe(1);
    // Its pet joins the call in flight, which spends its budget of one.
    const second = served.gql(PET_QUERY, {}, { api_key: API_KEY, 'x-gateway-cost': '1' });
    await expect.poll(() => joinedPetCalls(served), EVENTUALLY).toBe(1);
    held.release();

    expect(await first).toEqual(CAT_1);
    expect(await second).toEqual({ ...CAT_1, extensions: { cost: { requestedQueryCost: 1, actualQueryCost: 1 } } });
    expect(calls()).toEqual([GET_PET_1]);
  });
});

describe('a failure of a shared call', () => {
  const failures: [string, Answer, GraphQLResponse][] = [
    [
      'a 500',
      json(500, { code: 500, message: 'database is on fire' }),
      {
        status: 200,
        data: { pet: null },
        errors: [
          {
            message: 'petstore answered getPetById with status 500',
            path: ['pet'],
            extensions: {
              code: 'UPSTREAM_ERROR',
              upstream: { service: 'petstore', operation: 'getPetById', status: 500 },
            },
          },
        ],
      },
    ],
    [
      'a 503',
      json(503, { code: 503, message: 'Service is down' }),
      {
        status: 200,
        data: { pet: null },
        errors: [
          {
            message: 'petstore answered getPetById with status 503',
            path: ['pet'],
            extensions: {
              code: 'UPSTREAM_UNAVAILABLE',
              upstream: { service: 'petstore', operation: 'getPetById', status: 503 },
            },
          },
        ],
      },
    ],
    [
      'a reset connection',
      { reset: true },
      {
        status: 200,
        data: { pet: null },
        errors: [
          {
            message: 'petstore is unavailable for getPetById',
            path: ['pet'],
            extensions: { code: 'UPSTREAM_UNAVAILABLE', upstream: { service: 'petstore', operation: 'getPetById' } },
          },
        ],
      },
    ],
    // A 404 is a missing pet: null for every caller, without an error.
    ['a 404', json(404, { code: 1, message: 'Pet not found' }), { status: 200, data: { pet: null } }],
  ];

  it.each(failures)('(%s) reaches every caller, with its code', async (_, answer, expected) => {
    const served = await serve();
    const held = hold(answer);
    observed.scripted.answer(held.answer);

    const results = Promise.all(Array.from({ length: 10 }, () => served.gql(PET_QUERY, {}, { api_key: API_KEY })));
    await expect.poll(() => joinedPetCalls(served), EVENTUALLY).toBe(9);
    held.release();

    expect(
      (await results).map((result) => ({ ...result, ...(result.errors ? { errors: errorsOf(result) } : {}) })),
    ).toEqual(Array.from({ length: 10 }, () => expected));
    expect(calls()).toEqual([GET_PET_1]);
  });

  it('(a timeout) reaches every caller with UPSTREAM_TIMEOUT, and the call ends once the last caller has given up', async () => {
    // The deadline alone ends the call: undici's own timeouts, on real time, are far beyond it.
    const served = await serve({
      upstreamTimeouts: timeoutsSetBy({
        UPSTREAM_TIMEOUT_MS: '500',
        UPSTREAM_HEADERS_TIMEOUT_MS: '10000',
        UPSTREAM_BODY_TIMEOUT_MS: '10000',
      }),
    });
    observed.scripted.answer({ hang: true });
    fakeClock();

    const answers = Promise.all(Array.from({ length: 5 }, () => served.gql(PET_QUERY, {}, { api_key: API_KEY })));
    await until(async () => (await joinedPetCalls(served)) === 4, 'four callers to join the first one');
    await vi.advanceTimersByTimeAsync(500);
    const results = await answers;

    for (const result of results) {
      expect(result.data).toEqual({ pet: null });
      expect(errorsOf(result)).toEqual([
        {
          message: 'petstore did not answer getPetById within 500 ms',
          path: ['pet'],
          extensions: { code: 'UPSTREAM_TIMEOUT', upstream: { service: 'petstore', operation: 'getPetById' } },
        },
      ]);
    }
    expect(calls()).toEqual([GET_PET_1]);
    expect(await joinedPetCalls(served)).toBe(4);
    const connection = observed.scripted.requests[0]?.connection ?? 0;
    await until(() => !observed.scripted.isOpen(connection), 'the upstream to see its connection closed');
  });
});

describe("each caller's deadline", () => {
  const TIMEOUT_MS = 600;
  // The phase timeouts default to the deadline, and undici checks them on a coarse clock that can
  // end a call before it; set far beyond it, the deadline is what ends a call here.
  const DEADLINE_ONLY = {
    upstreamTimeouts: timeoutsSetBy({
      UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
      UPSTREAM_HEADERS_TIMEOUT_MS: '10000',
      UPSTREAM_BODY_TIMEOUT_MS: '10000',
    }),
  };

  /** A first caller's pet lookup, and the same lookup `lateByMs` later (on the fake clock), once it has joined the call. */
  async function firstThenLate(served: ObservedGateway, lateByMs: number) {
    const first = tracked(served.gql(PET_QUERY, {}, { api_key: API_KEY }));
    await until(() => observed.scripted.requests.length === 1, 'the upstream to receive the call');
    await vi.advanceTimersByTimeAsync(lateByMs);
    const late = tracked(served.gql(PET_QUERY, {}, { api_key: API_KEY }));
    await until(async () => (await joinedPetCalls(served)) === 1, 'the late caller to join the call');
    return { first, late };
  }

  it("holds for a caller that joins late: it times out at its own deadline, not at the first caller's, nor later", async () => {
    const served = await serve(DEADLINE_ONLY);
    observed.scripted.answer({ hang: true });
    fakeClock();

    const { first, late } = await firstThenLate(served, 300);

    // At 600 ms, the first caller's deadline: it gives up, the late one waits on.
    await vi.advanceTimersByTimeAsync(TIMEOUT_MS - 300);
    await until(() => first.settled, "the first caller's answer");
    expect(await timedOutOperations(served)).toBe(1);
    expect(late.settled).toBe(false);
    // A millisecond before its own deadline (600 ms after it joined), still waiting.
    await vi.advanceTimersByTimeAsync(299);
    expect(await timedOutOperations(served)).toBe(1);
    expect(late.settled).toBe(false);
    // At its deadline, it gives up too.
    await vi.advanceTimersByTimeAsync(1);
    await until(() => late.settled, "the late caller's answer");

    const timeoutError = [
      {
        message: `petstore did not answer getPetById within ${TIMEOUT_MS} ms`,
        path: ['pet'],
        extensions: { code: 'UPSTREAM_TIMEOUT', upstream: { service: 'petstore', operation: 'getPetById' } },
      },
    ];
    expect(errorsOf(await first)).toEqual(timeoutError);
    expect(errorsOf(await late)).toEqual(timeoutError);
    expect(await timedOutOperations(served)).toBe(2);
    expect(calls()).toEqual([GET_PET_1]);
  });

  it('of the first caller does not end the call for a caller that joined later: the answer that comes after the first gave up reaches the other', async () => {
    const served = await serve(DEADLINE_ONLY);
    const held = hold(json(200, PET_1));
    observed.scripted.answer(held.answer);
    fakeClock();

    const { first, late } = await firstThenLate(served, 400);
    // At 600 ms the first caller gives up; the call runs on for the late one.
    await vi.advanceTimersByTimeAsync(200);
    await until(() => first.settled, "the first caller's answer");
    expect(late.settled).toBe(false);
    // Answered at 900 ms: past the first caller's deadline, within the late one's.
    await vi.advanceTimersByTimeAsync(300);
    held.release();

    expect(errorsOf(await first)?.map((error) => error.extensions?.['code'])).toEqual(['UPSTREAM_TIMEOUT']);
    expect(await late).toEqual(CAT_1);
    expect(calls()).toEqual([GET_PET_1]);
    expect(await joinedPetCalls(served)).toBe(1);
  });
});

describe('a change', () => {
  it('(updatePet) sent while GET /pet/1 is held makes a later pet(id: 1) start a new upstream call, which sees the change', async () => {
    const served = await serve();
    const held = hold(json(200, PET_1));
    const renamed = json(200, { ...PET_1, name: 'Renamed' });
    // The first read is held; the change and every later read are answered at once.
    observed.scripted.answer((request) =>
      request.method === 'GET' &&
      observed.scripted.requests.filter((received) => received.method === 'GET').length === 1
        ? held.answer
        : renamed,
    );

    const before = [served.gql(PET_QUERY, {}, ALL_CREDENTIALS), served.gql(PET_QUERY, {}, ALL_CREDENTIALS)];
    await expect.poll(() => joinedPetCalls(served), EVENTUALLY).toBe(1);
    const change = await served.gql(
      'mutation { updatePet(id: 1, input: { name: "Renamed" }) { name } }',
      {},
      ALL_CREDENTIALS,
    );
    const after = served.gql(PET_QUERY, {}, ALL_CREDENTIALS);
    // The held read is still held: the later read reaches the upstream on its own.
    await expect.poll(() => calls(), EVENTUALLY).toEqual([GET_PET_1, 'PUT /api/v3/pet', GET_PET_1]);
    held.release();

    expect(change).toEqual({ status: 200, data: { updatePet: { name: 'Renamed' } } });
    expect(await after).toEqual({ status: 200, data: { pet: { id: '1', name: 'Renamed' } } });
    expect(await Promise.all(before)).toEqual([CAT_1, CAT_1]);
    expect(calls()).toEqual([GET_PET_1, 'PUT /api/v3/pet', GET_PET_1]);
    expect(await joinedPetCalls(served)).toBe(1);
  });

  /** A call of `operation` as its row of the pet store's table makes it (what it reads or changes included). */
  const callTo = (operation: PetstoreOperationId, params?: Record<string, string>): UpstreamRequest =>
    callOf(operation, PETSTORE_OPERATIONS[operation], params);
  const READ: UpstreamRequest = { ...callTo('getPetById', { petId: '1' }), headers: { accept: 'application/json' } };
  const JSON_BODY = { contentType: 'application/json', data: '{}' };
  const SEALING: [string, UpstreamRequest, UpstreamRequest, string[]][] = [
    [
      'PUT /pet, GET /pet/1',
      { ...callTo('updatePet'), body: JSON_BODY },
      READ,
      ['GET /api/v3/pet/1', 'PUT /api/v3/pet', 'GET /api/v3/pet/1'],
    ],
    [
      'DELETE /pet/1, GET /pet/1',
      { ...callTo('deletePet', { petId: '1' }), ignoreBody: true },
      READ,
      ['GET /api/v3/pet/1', 'DELETE /api/v3/pet/1', 'GET /api/v3/pet/1'],
    ],
    [
      'POST /pet/1, GET /pet/findByStatus',
      { ...callTo('updatePetWithForm', { petId: '1' }), query: { name: 'Rex' } },
      { ...READ, ...callTo('findPetsByStatus'), query: { status: 'sold' } },
      [
        'GET /api/v3/pet/findByStatus?status=sold',
        'POST /api/v3/pet/1?name=Rex',
        'GET /api/v3/pet/findByStatus?status=sold',
      ],
    ],
    [
      'POST /store/order, GET /store/order/5',
      { ...callTo('placeOrder'), body: JSON_BODY },
      { ...READ, ...callTo('getOrderById', { orderId: '5' }) },
      ['GET /api/v3/store/order/5', 'POST /api/v3/store/order', 'GET /api/v3/store/order/5'],
    ],
    [
      'POST /store/order, GET /store/inventory',
      { ...callTo('placeOrder'), body: JSON_BODY },
      { ...READ, ...callTo('getInventory') },
      ['GET /api/v3/store/inventory', 'POST /api/v3/store/order', 'GET /api/v3/store/inventory'],
    ],
    [
      // The inventory counts pets by status: a pet write may change it.
      'PUT /pet, GET /store/inventory',
      { ...callTo('updatePet'), body: JSON_BODY },
      { ...READ, ...callTo('getInventory') },
      ['GET /api/v3/store/inventory', 'PUT /api/v3/pet', 'GET /api/v3/store/inventory'],
    ],
    [
      'PUT /user/x, GET /user/x',
      { ...callTo('updateUser', { username: 'x' }), body: JSON_BODY },
      { ...READ, ...callTo('getUserByName', { username: 'x' }) },
      ['GET /api/v3/user/x', 'PUT /api/v3/user/x', 'GET /api/v3/user/x'],
    ],
  ];

  it.each(SEALING)(
    '(%s): a read that starts after the change does not join the read in flight since before it',
    async (_, change, read, expectedCalls) => {
      const petstore = petstoreClient();
      const held = hold(json(200, { before: true }));
      observed.scripted.answer((request) =>
        request.method === 'GET' &&
        observed.scripted.requests.filter((received) => received.method === 'GET').length === 1
          ? held.answer
          : json(200, { before: false }),
      );

      const before = petstore.request(read);
      await expect.poll(() => observed.scripted.requests.length, EVENTUALLY).toBe(1);
      await petstore.request(change);
      const after = petstore.request(read);
      // The first read is still held: the later one reaches the upstream on its own.
      await expect.poll(() => calls(), EVENTUALLY).toEqual(expectedCalls);
      held.release();

      expect((await after).body).toEqual({ before: false });
      expect((await before).body).toEqual({ before: true });
    },
  );

  it('in flight makes the reads that started meanwhile take no more callers once it has ended', async () => {
    const petstore = petstoreClient();
    const changeHeld = hold(json(200, {}));
    const readHeld = hold(json(200, { before: true }));
    observed.scripted.answer((request) =>
      request.method === 'PUT'
        ? changeHeld.answer
        : observed.scripted.requests.filter((received) => received.method === 'GET').length === 1
          ? readHeld.answer
          : json(200, { before: false }),
    );

    const change = petstore.request({ ...callTo('updatePet'), body: JSON_BODY });
    await expect.poll(() => observed.scripted.requests.length, EVENTUALLY).toBe(1);
    // Started while the change is in flight: the upstream may answer it before or after carrying the change out.
    const during = petstore.request(READ);
    await expect.poll(() => observed.scripted.requests.length, EVENTUALLY).toBe(2);
    changeHeld.release();
    await change;
    const after = petstore.request(READ);
    await expect.poll(() => calls(), EVENTUALLY).toEqual(['PUT /api/v3/pet', 'GET /api/v3/pet/1', 'GET /api/v3/pet/1']);
    readHeld.release();

    expect((await after).body).toEqual({ before: false });
    expect((await during).body).toEqual({ before: true });
  });

  it('of another resource leaves the reads in flight open to joiners', async () => {
    const petstore = petstoreClient();
    const held = hold(json(200, { id: 1 }));
    observed.scripted.answer((request) => (request.method === 'GET' ? held.answer : json(200, {})));

    const first = petstore.request(READ);
    await expect.poll(() => observed.scripted.requests.length, EVENTUALLY).toBe(1);
    await petstore.request({ ...callTo('placeOrder'), body: JSON_BODY });
    const second = petstore.request(READ);
    held.release();

    expect(await Promise.all([first, second])).toEqual([
      { status: 200, body: { id: 1 } },
      { status: 200, body: { id: 1 } },
    ]);
    expect(calls()).toEqual(['GET /api/v3/pet/1', 'POST /api/v3/store/order']);
  });

  it.each([
    ['POST', petWrite('addPet', 'POST')],
    ['PUT', petWrite('updatePet', 'PUT')],
    [
      'DELETE',
      {
        operation: 'deletePet',
        method: 'DELETE',
        path: '/pet/1',
        headers: { authorization: 'Bearer token-of-ann' },
        ignoreBody: true,
      },
    ],
  ] as [string, UpstreamRequest][])(
    '(%s) is never shared: two identical ones in flight at once are two upstream calls',
    async (method, call) => {
      const petstore = petstoreClient();
      const held = hold(json(200, { id: 1 }));
      observed.scripted.answer(held.answer);

      const both = Promise.all([petstore.request(call), petstore.request(call)]);
      await expect.poll(() => observed.scripted.requests.length, EVENTUALLY).toBe(2);
      held.release();
      await both;

      expect(observed.scripted.requests.map((request) => [request.method, request.url, request.body])).toEqual([
        [method, `/api/v3${call.path}`, typeof call.body?.data === 'string' ? call.body.data : ''],
        [method, `/api/v3${call.path}`, typeof call.body?.data === 'string' ? call.body.data : ''],
      ]);
    },
  );

  it('(two addPet mutations at once) sends two POSTs', async () => {
    const served = await serve();
    const held = hold(json(200, { id: 10, name: 'Rex', photoUrls: [] }));
    observed.scripted.answer(held.answer);

    const mutation = 'mutation { addPet(input: { id: 10, name: "Rex" }) { id name } }';
    const both = Promise.all([served.gql(mutation, {}, ALL_CREDENTIALS), served.gql(mutation, {}, ALL_CREDENTIALS)]);
    await expect.poll(() => observed.scripted.requests.length, EVENTUALLY).toBe(2);
    held.release();

    expect(await both).toEqual([
      { status: 200, data: { addPet: { id: '10', name: 'Rex' } } },
      { status: 200, data: { addPet: { id: '10', name: 'Rex' } } },
    ]);
    expect(calls()).toEqual(['POST /api/v3/pet', 'POST /api/v3/pet']);
    expect(await samples(served, 'upstream_shared_calls_total')).toEqual({});
  });
});

describe('the shared answer', () => {
  /** Freezes a value and everything in it: in strict mode (ES modules) a write to it throws. */
  function deepFreeze<T>(value: T): T {
    if (typeof value === 'object' && value !== null) {
      for (const inner of Object.values(value)) deepFreeze(inner);
      Object.freeze(value);
    }
    return value;
  }

  it('is only read, never changed, by the pet store operations: each caller decodes a payload of its own from it', async () => {
    const pet = {
      id: 1,
      name: 'Cat 1',
      category: { id: 2, name: 'Cats' },
      photoUrls: ['a.jpg'],
      tags: [{ id: 3, name: 'soft' }],
      status: 'sold',
    };
    const bodies: Record<string, unknown> = {
      '/pet/1': pet,
      '/pet/findByStatus': [pet],
      '/pet/findByTags': [pet],
      '/store/inventory': { sold: 1, available: 2 },
      '/store/order/5': {
        id: 5,
        petId: 1,
        quantity: 1,
        shipDate: '2025-01-01T00:00:00.000Z',
        status: 'placed',
        complete: false,
      },
      '/user/ann': { id: 7, username: 'ann', firstName: 'Ann' },
    };
    // One frozen answer per path, handed to every call, as a shared call hands it to every caller.
    const answers = new Map(
      Object.entries(bodies).map(([path, body]) => [path, { status: 200, body: deepFreeze(body) }]),
    );
    const shared: UpstreamClient = {
      service: 'petstore',
      request: (call) => Promise.resolve(answers.get(call.path) ?? { status: 404, body: undefined }),
      close: () => Promise.resolve(),
    };
    const petstore = createPetstoreApi(shared, { bodyFormat: 'json', accept: 'json' });
    const readAll = () =>
      Promise.all([
        petstore.getPetById({}, '1'),
        petstore.findPetsByStatus({}, [PetStatus.SOLD]),
        petstore.findPetsByTags({}, ['soft']),
        petstore.getInventory({ apiKey: API_KEY }),
        petstore.getOrderById('5'),
        petstore.getUserByName('ann'),
      ]);

    // Had any operation written to the frozen answer, it would have thrown here.
    const [mine, theirs] = [await readAll(), await readAll()];

    expect(mine).toEqual(theirs);
    expect(mine[0]).toEqual({
      id: '1',
      name: 'Cat 1',
      category: { id: '2', name: 'Cats' },
      photoUrls: ['a.jpg'],
      tags: [{ id: '3', name: 'soft' }],
      status: 'sold',
    });
    // Payloads are new objects, down to their lists and records: no two callers hold the same one.
    mine.forEach((payload, index) => expect(payload).not.toBe(theirs[index]));
    expect(mine[0].tags).not.toBe(theirs[0].tags);
    expect(mine[2][0]).not.toBe(theirs[2][0]);
    expect(mine[0].tags).not.toBe(pet.tags);
  });
});
