/**
 * How upstream failures reach a GraphQL caller (`src/upstream/`): slow,
 * silent, broken, oversized, failing and redirecting upstreams each give the right error code
 * and `extensions.upstream`, after exactly the upstream requests the retry policy allows, and
 * the gateway answers the next request afterwards. Retries: only GETs, only after a connection
 * error or a 502/503/504, with jittered, bounded backoff, never past the call's deadline.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { createUpstreamClient, retryDelay, type RetryEvent } from '../src/upstream/http.js';
import { UpstreamError } from '../src/upstream/failure.js';
import { fakeClock, tracked, until } from './helpers/clock.js';
import {
  closedPortUrl,
  json,
  scriptedUpstreams,
  sequence,
  startScriptedUpstream,
  startSilentServer,
  type ReceivedRequest,
  type ScriptedUpstream,
  type SilentServer,
} from './helpers/scripted-upstream.js';
import {
  ALL_CREDENTIALS,
  API_KEY,
  BEARER,
  defaultClientOptions,
  serveObserved,
  timeoutsSetBy,
  type ObservedGateway,
} from './helpers/stack.js';
import { errorsOf } from './helpers/answers.js';

const DEFAULTS = loadConfig([], {});
const PET_1 = { id: 1, name: 'Cat 1', photoUrls: [], tags: [], status: 'available' };
const PET_QUERY = '{ pet(id: 1) { id name } }';
const GET_PET_1 = 'GET /api/v3/pet/1';
const DOWN = json(503, { code: 503, message: 'Service is down' });

let upstream: ScriptedUpstream;
let silent: SilentServer;
/** the default retry policy (UPSTREAM_RETRIES=2, UPSTREAM_RETRY_BACKOFF_MS=50) */
let gateway: ObservedGateway;
/**
 * pet store: 300 ms to the headers, 300 ms for the whole body, within the default 10 s deadline; plant area: defaults
 */
let slow: ObservedGateway;
/** upstreamMaxResponseBytes: 1024 */
let small: ObservedGateway;
/** a 400 ms deadline, and up to 10 retries starting at 100 ms; its log (debug) shows each retry as it is decided */
let hurried: ObservedGateway;
/** the pet store at a port where nothing listens */
let petstoreRefused: ObservedGateway;
/** the pet store at a server that accepts TCP and never completes a TLS handshake; 300 ms to connect */
let petstoreSilent: ObservedGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  silent = await startSilentServer();
  const both = scriptedUpstreams(upstream.url);
  const retries = { upstreamRetries: DEFAULTS.upstreamRetries };
  gateway = await serveObserved(both, retries);
  slow = await serveObserved(both, {
    ...retries,
    upstreamTimeouts: timeoutsSetBy({ PETSTORE_HEADERS_TIMEOUT_MS: '300', PETSTORE_BODY_TIMEOUT_MS: '300' }),
  });
  small = await serveObserved(both, { ...retries, upstreamMaxResponseBytes: 1024 });
  hurried = await serveObserved(both, {
    logLevel: 'debug',
    upstreamTimeouts: timeoutsSetBy({ UPSTREAM_TIMEOUT_MS: '400' }),
    upstreamRetries: 10,
    upstreamRetryBackoffMs: 100,
  });
  petstoreRefused = await serveObserved(scriptedUpstreams(await closedPortUrl(), upstream.url), retries);
  petstoreSilent = await serveObserved(scriptedUpstreams(silent.httpsUrl, upstream.url), {
    ...retries,
    upstreamTimeouts: timeoutsSetBy({ PETSTORE_CONNECT_TIMEOUT_MS: '300' }),
  });
});
afterAll(async () => {
  await Promise.all([gateway, slow, small, hurried, petstoreRefused, petstoreSilent].map((served) => served?.close()));
  await Promise.all([upstream?.close(), silent?.close()]);
});
beforeEach(() => upstream.reset());

/** The errors of a result without their locations, which only repeat the query text. */

/** The upstream requests since the last reset, as `METHOD /path?query`. */
const calls = () => upstream.requests.map((request) => `${request.method} ${request.url}`);

/** How many distinct connections the requests since the last reset came on. */
const connectionsUsed = () => new Set(upstream.requests.map((request) => request.connection)).size;

/** The retries `served` has logged, as they were decided. */
const retriesLogged = (served: ObservedGateway) =>
  served.log
    .lines()
    .map((line) => String(line['msg']))
    .filter((message) => / retry \d+ in \d+ ms /.test(message));

/** The first request the upstream received (the test fails if there is none). */
function firstRequest(): ReceivedRequest {
  const request = upstream.requests[0];
  if (!request) throw new Error('the upstream received no request');
  return request;
}

/** Asserts that the gateway, after a fault, answers the next query normally. */
async function answersAfterwards(served: ObservedGateway) {
  upstream.answer(json(200, PET_1));
  expect(await served.gql(PET_QUERY, {}, ALL_CREDENTIALS)).toEqual({
    status: 200,
    data: { pet: { id: '1', name: 'Cat 1' } },
  });
}

/** The error `pet(id: 1)` gets when the pet store fails in `getPetById`. */
function petError(code: string, message: string, status?: number) {
  return [
    {
      message,
      path: ['pet'],
      extensions: {
        code,
        upstream: { service: 'petstore', operation: 'getPetById', ...(status !== undefined ? { status } : {}) },
      },
    },
  ];
}

describe('a slow upstream', () => {
  it('that sends no headers within PETSTORE_HEADERS_TIMEOUT_MS fails with UPSTREAM_TIMEOUT, long before the deadline, and is not retried', async () => {
    upstream.answer({ hang: true });

    const result = await slow.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    // The message names the headers timeout (300 ms), not the deadline (10 s) that would otherwise end the call.
    expect(result.data).toEqual({ pet: null });
    expect(errorsOf(result)).toEqual(petError('UPSTREAM_TIMEOUT', 'petstore did not answer getPetById within 300 ms'));
    expect(calls()).toEqual([GET_PET_1]);
    // The gateway gave up the request: the upstream, which never answers, sees its connection closed.
    await until(() => !upstream.isOpen(firstRequest().connection), 'the upstream to see its connection closed');
    await answersAfterwards(slow);
  });

  it('whose body trickles on past PETSTORE_BODY_TIMEOUT_MS fails with UPSTREAM_TIMEOUT, although no pause is that long, and its connection is closed', async () => {
    // A chunk every 100 ms for 10 s: never idle for 300 ms, and far from done after 300 ms (or after the deadline).
    const CHUNKS = 100;
    upstream.answer({
      stream: { chunk: ' ', count: CHUNKS, intervalMs: 100 },
      status: 200,
      headers: { 'content-type': 'application/json' },
    });

    const result = await slow.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ pet: null });
    expect(errorsOf(result)).toEqual(
      petError('UPSTREAM_TIMEOUT', 'petstore did not finish answering getPetById within 300 ms'),
    );
    expect(calls()).toEqual([GET_PET_1]);
    // The gateway closed the connection in the middle of the body: the upstream stopped before its last chunk.
    const request = firstRequest();
    await until(() => !upstream.isOpen(request.connection), 'the upstream to see its connection closed');
    expect(request.bytesSent).toBeLessThan(CHUNKS);
    await answersAfterwards(slow);
  });

  it("is timed by its own area's settings: the plant area, with the default timeouts, waits for a 600 ms answer", async () => {
    upstream.answer({ ...json(200, { name: 'Fern' }), delayMs: 600 });

    const result = await slow.gql(
      'mutation { createPlant(input: { id: 1, name: "Fern" }) { name } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result).toEqual({ status: 200, data: { createPlant: { name: 'Fern' } } });
    expect(calls()).toEqual(['POST /plants']);
  });

  it('that accepts the connection but never completes the TLS handshake fails with UPSTREAM_TIMEOUT after PETSTORE_CONNECT_TIMEOUT_MS', async () => {
    const before = silent.connections();

    const result = await petstoreSilent.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    // The message names the connect timeout (300 ms), not the 10 s deadline.
    expect(result.data).toEqual({ pet: null });
    expect(errorsOf(result)).toEqual(
      petError('UPSTREAM_TIMEOUT', 'petstore did not accept a connection for getPetById within 300 ms'),
    );
    // One connection attempt: a timeout is not retried. The gateway gave it up: the server sees it closed.
    expect(silent.connections() - before).toBe(1);
    await until(() => silent.openConnections() === 0, 'the silent server to see the connection closed');
    // The plant area, elsewhere, keeps answering.
    upstream.answer(json(200, { name: 'Fern' }));
    expect(
      await petstoreSilent.gql(
        'mutation { createPlant(input: { id: 1, name: "Fern" }) { name } }',
        {},
        ALL_CREDENTIALS,
      ),
    ).toEqual({
      status: 200,
      data: { createPlant: { name: 'Fern' } },
    });
  });
});

describe('a broken connection', () => {
  it('reset before any answer, on every try, fails with UPSTREAM_UNAVAILABLE after 2 retries, each on a new connection', async () => {
    upstream.answer({ reset: true });

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ pet: null });
    expect(errorsOf(result)).toEqual(
      petError('UPSTREAM_UNAVAILABLE', 'petstore is unavailable for getPetById (after 2 retries)'),
    );
    expect(calls()).toEqual([GET_PET_1, GET_PET_1, GET_PET_1]);
    expect(connectionsUsed()).toBe(3);
    await answersAfterwards(gateway);
  });

  it('reset in the middle of the body, on every try, fails with UPSTREAM_UNAVAILABLE after 2 retries', async () => {
    upstream.answer({
      resetBody: true,
      status: 200,
      headers: { 'content-type': 'application/json' },
      bodyStart: '{"id":1,"na',
    });

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ pet: null });
    expect(errorsOf(result)).toEqual(
      petError('UPSTREAM_UNAVAILABLE', 'petstore broke the connection while answering getPetById (after 2 retries)'),
    );
    expect(calls()).toEqual([GET_PET_1, GET_PET_1, GET_PET_1]);
    await answersAfterwards(gateway);
  });

  it('to a port where nothing listens fails with UPSTREAM_UNAVAILABLE after 2 retries, and the plant area keeps answering', async () => {
    upstream.answer(json(200, { name: 'Fern' }));

    const [pet, plant] = await Promise.all([
      petstoreRefused.gql(PET_QUERY, {}, ALL_CREDENTIALS),
      petstoreRefused.gql('mutation { createPlant(input: { id: 1, name: "Fern" }) { name } }', {}, ALL_CREDENTIALS),
    ]);

    expect(pet.data).toEqual({ pet: null });
    expect(errorsOf(pet)).toEqual(
      petError('UPSTREAM_UNAVAILABLE', 'petstore is unavailable for getPetById (after 2 retries)'),
    );
    expect(plant).toEqual({ status: 200, data: { createPlant: { name: 'Fern' } } });
    expect(calls()).toEqual(['POST /plants']);
  });
});

describe('a body the gateway cannot use', () => {
  it("that is not valid JSON fails with UPSTREAM_ERROR in the gateway's words, and is not retried", async () => {
    upstream.answer(json(200, '{"id": 1, "name": \u0000garbage'));

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ pet: null });
    expect(errorsOf(result)).toEqual(
      petError('UPSTREAM_ERROR', 'petstore answered getPetById with a body that is not valid application/json', 200),
    );
    expect(calls()).toEqual([GET_PET_1]);
    await answersAfterwards(gateway);
  });

  const TOTAL = 64 * 1024 * 1024;
  it.each([
    ['streamed on past UPSTREAM_MAX_RESPONSE_BYTES (chunked): reading stops at the cap', {}],
    [
      'declared larger than UPSTREAM_MAX_RESPONSE_BYTES (Content-Length): refused before reading',
      { 'content-length': String(TOTAL) },
    ],
  ])('%s; UPSTREAM_ERROR, and the connection is closed', async (_, lengthHeader) => {
    upstream.answer({
      stream: { chunk: 'x'.repeat(64 * 1024), count: TOTAL / (64 * 1024) },
      status: 200,
      headers: { 'content-type': 'application/json', ...lengthHeader },
    });

    const result = await small.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ pet: null });
    expect(errorsOf(result)).toEqual(
      petError('UPSTREAM_ERROR', 'petstore answered getPetById with more than 1024 bytes', 200),
    );
    expect(calls()).toEqual([GET_PET_1]);
    const request = firstRequest();
    await until(() => !upstream.isOpen(request.connection), 'the upstream to see its connection closed');
    // What the upstream got to write is what the socket buffers held, not the 64 MiB it had.
    expect(request.bytesSent).toBeLessThan(TOTAL / 4);
    await answersAfterwards(small);
  });
});

describe('a 5xx answer', () => {
  it("500 fails with UPSTREAM_ERROR in the gateway's words (not the upstream's), and is not retried", async () => {
    upstream.answer(json(500, { code: 500, message: 'database is on fire' }));

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(errorsOf(result)).toEqual(petError('UPSTREAM_ERROR', 'petstore answered getPetById with status 500', 500));
    expect(calls()).toEqual([GET_PET_1]);
    await answersAfterwards(gateway);
  });

  it('503 on every try fails with UPSTREAM_UNAVAILABLE after UPSTREAM_RETRIES (2) retries, on the same keep-alive connection', async () => {
    upstream.answer(DOWN);

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(errorsOf(result)).toEqual(
      petError('UPSTREAM_UNAVAILABLE', 'petstore answered getPetById with status 503 (after 2 retries)', 503),
    );
    expect(calls()).toEqual([GET_PET_1, GET_PET_1, GET_PET_1]);
    expect(connectionsUsed()).toBe(1);
    await answersAfterwards(gateway);
  });
});

describe('retries of a GET', () => {
  it.each([502, 503, 504])('after a %i, the retry answered 200 gives the data', async (status) => {
    upstream.answer(sequence(json(status, { code: status, message: 'try again' }), json(200, PET_1)));

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { pet: { id: '1', name: 'Cat 1' } } });
    expect(calls()).toEqual([GET_PET_1, GET_PET_1]);
    // The retry carries the same credential, to the same base URL.
    expect(upstream.requests.map((request) => request.headers['api_key'])).toEqual([API_KEY, API_KEY]);
  });

  it('after 503, 503, the third try answered 200 gives the data', async () => {
    upstream.answer(sequence(DOWN, DOWN, json(200, PET_1)));

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { pet: { id: '1', name: 'Cat 1' } } });
    expect(calls()).toEqual([GET_PET_1, GET_PET_1, GET_PET_1]);
  });

  it('after a reset connection, the retry on a new connection gives the data', async () => {
    upstream.answer(sequence({ reset: true }, json(200, PET_1)));

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { pet: { id: '1', name: 'Cat 1' } } });
    expect(calls()).toEqual([GET_PET_1, GET_PET_1]);
    expect(connectionsUsed()).toBe(2);
  });

  it('after a body cut by a reset, the retry gives the data', async () => {
    upstream.answer(
      sequence(
        { resetBody: true, status: 200, headers: { 'content-type': 'application/json' }, bodyStart: '{"id":1,' },
        json(200, PET_1),
      ),
    );

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { pet: { id: '1', name: 'Cat 1' } } });
    expect(calls()).toEqual([GET_PET_1, GET_PET_1]);
  });

  it('stop at the deadline (UPSTREAM_TIMEOUT_MS 400): no try starts after it, and the last failure is reported', async () => {
    upstream.answer(DOWN);
    // Each wait in the middle of its jittered step: 75, 150, then 300 ms.
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5);
    onTestFinished(() => random.mockRestore());
    fakeClock();

    const result = tracked(hurried.gql(PET_QUERY, {}, ALL_CREDENTIALS));
    // Each retry is logged as its wait starts; the test's clock then moves to the end of that wait.
    for (const retry of [1, 2]) {
      await until(() => retriesLogged(hurried).length === retry, `retry ${retry} to be logged`);
      await vi.advanceTimersToNextTimerAsync();
    }
    await until(() => result.settled, 'the answer');

    // Tries at 0, 75 and 225 ms; a third retry would start at 525 ms, past the deadline, so it is not made.
    const first = firstRequest().receivedAt;
    expect(upstream.requests.map((request) => request.receivedAt - first)).toEqual([0, 75, 225]);
    expect(retriesLogged(hurried)).toEqual([
      'upstream petstore getPetById: retry 1 in 75 ms after status 503',
      'upstream petstore getPetById: retry 2 in 150 ms after status 503',
    ]);
    expect(errorsOf(await result)).toEqual(
      petError('UPSTREAM_UNAVAILABLE', 'petstore answered getPetById with status 503 (after 2 retries)', 503),
    );
    await answersAfterwards(hurried);
  });

  it('are not made after a timeout', async () => {
    upstream.answer({ hang: true });

    const result = await hurried.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(errorsOf(result)).toEqual(petError('UPSTREAM_TIMEOUT', 'petstore did not answer getPetById within 400 ms'));
    expect(calls()).toEqual([GET_PET_1]);
  });
});

describe('no retries of a change', () => {
  const CHANGES = [
    [
      'addPet (POST)',
      'mutation { addPet(input: { id: 10, name: "Rex" }) { id } }',
      'POST /api/v3/pet',
      'addPet',
      'petstore',
    ],
    [
      'updatePet (PUT)',
      'mutation { updatePet(id: 10, input: { name: "Rex" }) { id } }',
      'PUT /api/v3/pet',
      'updatePet',
      'petstore',
    ],
    ['deletePet (DELETE)', 'mutation { deletePet(id: 10) }', 'DELETE /api/v3/pet/10', 'deletePet', 'petstore'],
    [
      'createPlant (POST)',
      'mutation { createPlant(input: { id: 1, name: "Fern" }) { name } }',
      'POST /plants',
      'createPlant',
      'plants',
    ],
  ] as const;

  it.each(CHANGES)(
    '%s answered 503 is sent once, and fails with UPSTREAM_UNAVAILABLE',
    async (_, mutation, call, operation, service) => {
      upstream.answer(DOWN);

      const result = await gateway.gql(mutation, {}, ALL_CREDENTIALS);

      expect(result.errors?.map((error) => [error.message, error.extensions])).toEqual([
        [
          `${service} answered ${operation} with status 503`,
          { code: 'UPSTREAM_UNAVAILABLE', upstream: { service, operation, status: 503 } },
        ],
      ]);
      expect(calls()).toEqual([call]);
      await answersAfterwards(gateway);
    },
  );

  it.each(CHANGES)(
    '%s whose connection is reset is sent once, and fails with UPSTREAM_UNAVAILABLE',
    async (_, mutation, call, operation, service) => {
      upstream.answer({ reset: true });

      const result = await gateway.gql(mutation, {}, ALL_CREDENTIALS);

      expect(result.errors?.map((error) => [error.message, error.extensions])).toEqual([
        [
          `${service} is unavailable for ${operation}`,
          { code: 'UPSTREAM_UNAVAILABLE', upstream: { service, operation } },
        ],
      ]);
      expect(calls()).toEqual([call]);
      await answersAfterwards(gateway);
    },
  );
});

describe('backoff', () => {
  it('doubles from UPSTREAM_RETRY_BACKOFF_MS up to UPSTREAM_RETRY_BACKOFF_MAX_MS, jittered within the upper half of each step', () => {
    const lowest = () => 0;
    const highest = () => 1;

    expect([1, 2, 3, 4, 5, 6].map((retry) => retryDelay(retry, 50, 1000, lowest))).toEqual([
      25, 50, 100, 200, 400, 500,
    ]);
    expect([1, 2, 3, 4, 5, 6].map((retry) => retryDelay(retry, 50, 1000, highest))).toEqual([
      50, 100, 200, 400, 800, 1000,
    ]);
    const waits = Array.from({ length: 50 }, () => retryDelay(3, 50, 1000));
    expect(new Set(waits).size).toBeGreaterThan(1);
    for (const wait of waits) expect(wait).toSatisfy((ms: number) => ms >= 100 && ms <= 200);
  });

  it('is waited between tries, as reported to onRetry, and the final error counts the retries', async () => {
    upstream.answer(DOWN);
    const events: RetryEvent[] = [];
    const client = createUpstreamClient('petstore', {
      ...defaultClientOptions(`${upstream.url}/api/v3`),
      retries: 3,
      retryBackoffMs: 40,
      retryBackoffMaxMs: 100,
      onRetry: (event) => events.push(event),
    });
    fakeClock();
    try {
      const failing = client
        .request({ operation: 'getPetById', method: 'GET', path: '/pet/1' })
        .catch((error: unknown) => error);
      // Each retry is reported as its wait starts; the test's clock then moves to the next timer: the end of that wait.
      for (const retry of [1, 2, 3]) {
        await until(() => events.length === retry, `retry ${retry} to be reported`);
        await vi.advanceTimersToNextTimerAsync();
      }
      const failure = await failing;

      expect(failure).toBeInstanceOf(UpstreamError);
      expect(failure).toMatchObject({
        failure: 'status',
        status: 503,
        retries: 3,
        message: 'petstore answered getPetById with status 503 (after 3 retries)',
        upstreamSaid: 'Service is down',
      });
      expect(events.map(({ retry, reason }) => [retry, reason])).toEqual([
        [1, 'status 503'],
        [2, 'status 503'],
        [3, 'status 503'],
      ]);
      const bounds = [
        [20, 40],
        [40, 80],
        [50, 100],
      ];
      events.forEach((event, index) =>
        expect([event.delayMs >= (bounds[index]?.[0] ?? 0), event.delayMs <= (bounds[index]?.[1] ?? 0)]).toEqual([
          true,
          true,
        ]),
      );
      // On the test's clock, which only the waits moved, each try came exactly its reported wait after the one before.
      const arrivals = upstream.requests.map((request) => request.receivedAt);
      expect(arrivals).toHaveLength(4);
      expect(arrivals.slice(1).map((arrival, index) => arrival - (arrivals[index] ?? 0))).toEqual(
        events.map((event) => event.delayMs),
      );
    } finally {
      await client.close();
    }
  });
});

describe('redirects', () => {
  it('to another origin are not followed from a GET: UPSTREAM_ERROR, and the other origin receives nothing', async () => {
    const other = await startScriptedUpstream();
    try {
      other.answer(json(200, PET_1));
      upstream.answer({ status: 302, headers: { location: `${other.url}/api/v3/pet/1` } });

      const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

      expect(errorsOf(result)).toEqual(
        petError(
          'UPSTREAM_ERROR',
          'petstore answered getPetById with a redirect (status 302), which the gateway does not follow',
          302,
        ),
      );
      expect(calls()).toEqual([GET_PET_1]);
      expect(other.requests).toEqual([]);
      expect(other.connections()).toBe(0);
      expect(JSON.stringify(result)).not.toContain(other.hostPort);
      await answersAfterwards(gateway);
    } finally {
      await other.close();
    }
  });

  it('to another origin are not followed from a POST with a bearer token (307): the token goes to the base URL only', async () => {
    const other = await startScriptedUpstream();
    try {
      upstream.answer({ status: 307, headers: { location: `${other.url}/steal` } });

      const result = await gateway.gql(
        'mutation { addPet(input: { id: 10, name: "Rex" }) { id } }',
        {},
        ALL_CREDENTIALS,
      );

      expect(result.errors?.map((error) => error.extensions)).toEqual([
        { code: 'UPSTREAM_ERROR', upstream: { service: 'petstore', operation: 'addPet', status: 307 } },
      ]);
      expect(
        upstream.requests.map((request) => [request.method, request.url, request.headers['authorization']]),
      ).toEqual([['POST', '/api/v3/pet', `Bearer ${BEARER}`]]);
      expect(other.connections()).toBe(0);
    } finally {
      await other.close();
    }
  });
});
