/**
 * How upstream failures reach a GraphQL caller: each error code with its
 * `extensions.upstream { service, operation, status }` and the upstream's own message, partial
 * data, what an error never reveals, and that one failing area leaves the other working.
 * The upstreams are scripted, so every failure (timeouts, broken bodies, redirects) is exact.
 */
import { createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createContext, type GraphQLContext } from '../src/context.js';
import { maskError } from '../src/errors.js';
import { createSchema } from '../src/schema.js';
import type { UpstreamClient } from '../src/upstream/http.js';
import { createPetstoreApi } from '../src/upstream/petstore.js';
import { createPlantsApi } from '../src/upstream/plants.js';
import { until } from './helpers/clock.js';
import {
  closedPortUrl,
  json,
  startScriptedUpstream,
  type Answer,
  type ReceivedRequest,
  type ScriptedUpstream,
} from './helpers/scripted-upstream.js';
import { ALL_CREDENTIALS, API_KEY, BEARER, timeoutsSetBy, type ObservedGateway } from './helpers/stack.js';
import { serveScripted } from './helpers/observed.js';
import { errorsOf } from './helpers/answers.js';

const PET_1 = { id: 1, name: 'Cat 1', photoUrls: [], tags: [], status: 'available' };

let upstream: ScriptedUpstream;
/** a gateway with the default settings, in front of the scripted upstream */
let gateway: ObservedGateway;
/** upstreamTimeoutMs: 200 */
let impatient: ObservedGateway;
/** upstreamMaxResponseBytes: 1024 */
let small: ObservedGateway;
/** the pet store at a port where nothing listens; the plant area at the scripted upstream */
let petstoreDown: ObservedGateway;
let closedUrl: string;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  closedUrl = await closedPortUrl();
  gateway = await serveScripted(upstream.url);
  impatient = await serveScripted(upstream.url, upstream.url, {
    upstreamTimeouts: timeoutsSetBy({ UPSTREAM_TIMEOUT_MS: '200' }),
  });
  small = await serveScripted(upstream.url, upstream.url, { upstreamMaxResponseBytes: 1024 });
  petstoreDown = await serveScripted(closedUrl, upstream.url);
});
afterAll(async () => {
  await Promise.all([gateway, impatient, small, petstoreDown].map((served) => served?.close()));
  await upstream?.close();
});
beforeEach(() => upstream.reset());

/** The errors of a result without their locations, which only repeat the query text. */

/** The parts of a request the upstream received that the tests assert on. */
function received(request: ReceivedRequest) {
  return {
    method: request.method,
    url: request.url,
    contentType: request.headers['content-type'],
    authorization: request.headers['authorization'],
    apiKey: request.headers['api_key'],
    body: request.body,
  };
}

/** The upstream request `pet(id: 1)` makes: GET with the api_key only. */
const GET_PET_1 = {
  method: 'GET',
  url: '/api/v3/pet/1',
  contentType: undefined,
  authorization: undefined,
  apiKey: API_KEY,
  body: '',
};

const PET_QUERY = '{ pet(id: 1) { id name } }';

/** The upstream request createPlant makes: a JSON POST with the bearer token only. */
function createPlantRequest(body: string) {
  return {
    method: 'POST',
    url: '/plants',
    contentType: 'application/json',
    authorization: `Bearer ${BEARER}`,
    apiKey: undefined,
    body,
  };
}

describe('NOT_FOUND', () => {
  it('updatePet of a pet the upstream does not have fails with NOT_FOUND and the upstream text "Pet not found"', async () => {
    // The reference server sends this bare text under an application/json content type.
    upstream.answer({ status: 404, headers: { 'content-type': 'application/json' }, body: 'Pet not found' });

    const result = await gateway.gql(
      'mutation { updatePet(id: 7, input: { name: "Rex" }) { id } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result.data).toBeNull();
    expect(errorsOf(result)).toEqual([
      {
        message: 'Pet not found',
        path: ['updatePet'],
        extensions: { code: 'NOT_FOUND', upstream: { service: 'petstore', operation: 'updatePet', status: 404 } },
      },
    ]);
    expect(upstream.requests.map(received)).toEqual([
      {
        method: 'PUT',
        url: '/api/v3/pet',
        contentType: 'application/json',
        authorization: `Bearer ${BEARER}`,
        apiKey: undefined,
        body: '{"id":7,"name":"Rex","photoUrls":[],"tags":[]}',
      },
    ]);
  });
});

describe('BAD_USER_INPUT', () => {
  const ADD_PET = 'mutation { addPet(input: { id: 10, name: "Rex" }) { id } }';
  const ADD_PET_REQUEST = {
    method: 'POST',
    url: '/api/v3/pet',
    contentType: 'application/json',
    authorization: `Bearer ${BEARER}`,
    apiKey: undefined,
    body: '{"id":10,"name":"Rex","photoUrls":[],"tags":[]}',
  };

  it('addPet refused with a JSON {code, message} 400 fails with BAD_USER_INPUT and the upstream message', async () => {
    upstream.answer(json(400, { code: 400, message: 'Input error: query parameter `name` is required' }));

    const result = await gateway.gql(ADD_PET, {}, ALL_CREDENTIALS);

    expect(result.data).toBeNull();
    expect(errorsOf(result)).toEqual([
      {
        message: 'Input error: query parameter `name` is required',
        path: ['addPet'],
        extensions: { code: 'BAD_USER_INPUT', upstream: { service: 'petstore', operation: 'addPet', status: 400 } },
      },
    ]);
    expect(upstream.requests.map(received)).toEqual([ADD_PET_REQUEST]);
  });

  it('addPet refused with an XML ApiError 400 fails with BAD_USER_INPUT and the message of the XML record', async () => {
    upstream.answer({
      status: 400,
      headers: { 'content-type': 'application/xml' },
      body: '<ApiError><code>400</code><message>bad</message></ApiError>',
    });

    const result = await gateway.gql(ADD_PET, {}, ALL_CREDENTIALS);

    expect(result.data).toBeNull();
    expect(errorsOf(result)).toEqual([
      {
        message: 'bad',
        path: ['addPet'],
        extensions: { code: 'BAD_USER_INPUT', upstream: { service: 'petstore', operation: 'addPet', status: 400 } },
      },
    ]);
    expect(upstream.requests.map(received)).toEqual([ADD_PET_REQUEST]);
  });
});

describe('pet(id) refused by the pet store: null, with the code for its status at ["pet"]', () => {
  it.each<{ status: number; code: string; body?: { code: number; message: string }; message?: string }>([
    { status: 401, code: 'UNAUTHENTICATED', body: { code: 401, message: 'API key is invalid' } },
    // No body: the message names the status.
    { status: 403, code: 'FORBIDDEN', message: 'petstore answered getPetById with status 403' },
    // A 5xx is told in the gateway's words: what the upstream says of itself goes to the log only.
    {
      status: 500,
      code: 'UPSTREAM_ERROR',
      body: {
        code: 500,
        message: 'There was an error processing your request. It has been logged (ID: 1a2b3c4d5e6f7a8b)',
      },
      message: 'petstore answered getPetById with status 500',
    },
    {
      status: 503,
      code: 'UPSTREAM_UNAVAILABLE',
      body: { code: 503, message: 'Service is down for maintenance' },
      message: 'petstore answered getPetById with status 503',
    },
  ])('$status: $code, with the message for the caller', async ({ status, code, body, message }) => {
    upstream.answer(body === undefined ? { status } : json(status, body));

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ pet: null });
    expect(errorsOf(result)).toEqual([
      {
        message: message ?? body?.message,
        path: ['pet'],
        extensions: { code, upstream: { service: 'petstore', operation: 'getPetById', status } },
      },
    ]);
    expect(upstream.requests.map(received)).toEqual([GET_PET_1]);
  });
});

describe('UPSTREAM_ERROR', () => {
  it("a 200 whose body is not valid JSON fails with UPSTREAM_ERROR in the gateway's words", async () => {
    upstream.answer(json(200, `<html><body>${'Service moved. '.repeat(100)}</body></html>`));

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ pet: null });
    expect(errorsOf(result)).toEqual([
      {
        message: 'petstore answered getPetById with a body that is not valid application/json',
        path: ['pet'],
        extensions: { code: 'UPSTREAM_ERROR', upstream: { service: 'petstore', operation: 'getPetById', status: 200 } },
      },
    ]);
    expect(upstream.requests.map(received)).toEqual([GET_PET_1]);
  });

  it('keeps answering after an upstream body it could not read', async () => {
    upstream.answer(json(200, '{"id": 1, "name": '));
    await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);
    upstream.answer(json(200, PET_1));

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { pet: { id: '1', name: 'Cat 1' } } });
    expect(upstream.requests.map(received)).toEqual([GET_PET_1, GET_PET_1]);
  });

  it('a 200 with a pet of the wrong shape ("id": "abc") fails with UPSTREAM_ERROR naming the field', async () => {
    upstream.answer(json(200, { ...PET_1, id: 'abc' }));

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ pet: null });
    expect(errorsOf(result)).toEqual([
      {
        message: 'petstore answered getPetById with an unexpected body ($.id: expected an int64)',
        path: ['pet'],
        extensions: { code: 'UPSTREAM_ERROR', upstream: { service: 'petstore', operation: 'getPetById', status: 200 } },
      },
    ]);
    expect(upstream.requests.map(received)).toEqual([GET_PET_1]);
  });

  it('an answer larger than upstreamMaxResponseBytes fails with UPSTREAM_ERROR', async () => {
    upstream.answer(
      json(200, {
        ...PET_1,
        photoUrls: Array.from({ length: 100 }, (_, index) => `https://photos.example/${index}.jpg`),
      }),
    );

    const result = await small.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ pet: null });
    expect(errorsOf(result)).toEqual([
      {
        message: 'petstore answered getPetById with more than 1024 bytes',
        path: ['pet'],
        extensions: { code: 'UPSTREAM_ERROR', upstream: { service: 'petstore', operation: 'getPetById', status: 200 } },
      },
    ]);
    expect(upstream.requests.map(received)).toEqual([GET_PET_1]);
  });
});

describe('UPSTREAM_UNAVAILABLE', () => {
  it('pet(id) with the pet store refusing connections is null, with UPSTREAM_UNAVAILABLE and no status', async () => {
    const result = await petstoreDown.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ pet: null });
    expect(errorsOf(result)).toEqual([
      {
        message: 'petstore is unavailable for getPetById',
        path: ['pet'],
        extensions: { code: 'UPSTREAM_UNAVAILABLE', upstream: { service: 'petstore', operation: 'getPetById' } },
      },
    ]);
    expect(upstream.requests).toEqual([]);
  });
});

describe('UPSTREAM_TIMEOUT', () => {
  it.each<{ stalled: string; answer: Answer; message: string }>([
    { stalled: 'never answers', answer: { hang: true }, message: 'did not answer' },
    {
      stalled: 'sends its headers and then stalls the body',
      answer: { stallBody: true, status: 200, headers: { 'content-type': 'application/json' }, bodyStart: '{"id":1,' },
      message: 'did not finish answering',
    },
  ])(
    'pet(id) with an upstream that $stalled is null after upstreamTimeoutMs, once, with UPSTREAM_TIMEOUT',
    async ({ answer, message }) => {
      upstream.answer(answer);

      const result = await impatient.gql(PET_QUERY, {}, ALL_CREDENTIALS);

      expect(result.data).toEqual({ pet: null });
      expect(errorsOf(result)).toEqual([
        {
          message: `petstore ${message} getPetById within 200 ms`,
          path: ['pet'],
          extensions: { code: 'UPSTREAM_TIMEOUT', upstream: { service: 'petstore', operation: 'getPetById' } },
        },
      ]);
      // Once, not retried; and given up: the upstream, which never finishes, sees its connection closed.
      expect(upstream.requests.map(received)).toEqual([GET_PET_1]);
      const connection = upstream.requests[0]?.connection ?? 0;
      await until(() => !upstream.isOpen(connection), 'the upstream to see its connection closed');
    },
  );
});

describe('the plant area', () => {
  it('passes on its {error, message} record: the message, and the error number as extensions.upstream.error', async () => {
    upstream.answer(json(409, { error: 1001, message: 'A plant with id 12 already exists' }));

    const result = await gateway.gql(
      'mutation { createPlant(input: { id: 12, name: "Fern" }) { name } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result.data).toBeNull();
    expect(errorsOf(result)).toEqual([
      {
        message: 'A plant with id 12 already exists',
        path: ['createPlant'],
        extensions: {
          code: 'BAD_USER_INPUT',
          upstream: { service: 'plants', operation: 'createPlant', status: 409, error: 1001 },
        },
      },
    ]);
    expect(upstream.requests.map(received)).toEqual([createPlantRequest('{"id":12,"name":"Fern"}')]);
  });
});

describe('partial data', () => {
  it('keeps the pets that were found when another lookup of the same query fails', async () => {
    upstream.answer((request) =>
      request.url === '/api/v3/pet/1' ? json(200, PET_1) : json(500, { code: 500, message: 'database is on fire' }),
    );

    const result = await gateway.gql('{ a: pet(id: 1) { id } b: pet(id: 2) { id } }', {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ a: { id: '1' }, b: null });
    expect(errorsOf(result)).toEqual([
      {
        message: 'petstore answered getPetById with status 500',
        path: ['b'],
        extensions: { code: 'UPSTREAM_ERROR', upstream: { service: 'petstore', operation: 'getPetById', status: 500 } },
      },
    ]);
    expect(upstream.requests.map((request) => `${request.method} ${request.url}`).sort()).toEqual([
      'GET /api/v3/pet/1',
      'GET /api/v3/pet/2',
    ]);
  });
});

describe('what an error never reveals', () => {
  type Scenario = { gateway: () => ObservedGateway; answer?: Answer };
  const scenarios: Record<string, Scenario> = {
    'a 500': {
      gateway: () => gateway,
      answer: json(500, {
        code: 500,
        message: 'There was an error processing your request. It has been logged (ID: 1a2b3c4d5e6f7a8b)',
      }),
    },
    'a 401': { gateway: () => gateway, answer: { status: 401 } },
    'a body that is not JSON': { gateway: () => gateway, answer: json(200, '{"id": 1, "name": ') },
    'a pet of the wrong shape': { gateway: () => gateway, answer: json(200, { id: 'abc' }) },
    'an answer that is too large': { gateway: () => small, answer: json(200, { name: 'x'.repeat(2000) }) },
    'no answer': { gateway: () => impatient, answer: { hang: true } },
    'a refused connection': { gateway: () => petstoreDown },
  };

  it.each(Object.keys(scenarios))(
    'answers %s without the credentials, the upstream address, a stack or a source path',
    async (name) => {
      const scenario = scenarios[name];
      if (!scenario) throw new Error(`no scenario ${name}`);
      if (scenario.answer) upstream.answer(scenario.answer);

      const result = await scenario.gateway().gql(PET_QUERY, {}, ALL_CREDENTIALS);

      const text = JSON.stringify(result);
      expect(result.errors).toHaveLength(1);
      for (const secret of [BEARER, API_KEY, upstream.hostPort, new URL(closedUrl).host, 'stack', '/src/'])
        expect(text).not.toContain(secret);
    },
  );

  it('masks an unexpected failure as INTERNAL_SERVER_ERROR "Unexpected error.", without its message', async () => {
    // A programming error below the resolvers, whose message carries what must not leak.
    const crash = new TypeError(
      `Cannot read properties of undefined (reading 'id') at /work/main/src/upstream/http.ts:120 (Bearer ${BEARER}, api_key ${API_KEY})`,
    );
    const client: UpstreamClient = {
      service: 'petstore',
      request: () => Promise.reject(crash),
      close: () => Promise.resolve(),
    };
    const upstreams = {
      petstore: createPetstoreApi(client, { bodyFormat: 'json', accept: 'json' }),
      plants: createPlantsApi({ ...client, service: 'plants' }),
    };
    // The gateway's own wiring (createGateway), with upstreams that crash.
    const yoga = createYoga<Record<string, unknown>, GraphQLContext>({
      schema: createSchema(),
      context: ({ request }) => createContext(request, upstreams),
      maskedErrors: { maskError },
      logging: false,
    });

    const response = await yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...ALL_CREDENTIALS },
      body: JSON.stringify({ query: PET_QUERY }),
    });
    const text = await response.text();

    expect(JSON.parse(text)).toEqual({
      data: { pet: null },
      errors: [
        {
          message: 'Unexpected error.',
          locations: [{ line: 1, column: 3 }],
          path: ['pet'],
          extensions: { code: 'INTERNAL_SERVER_ERROR' },
        },
      ],
    });
    for (const secret of [BEARER, API_KEY, 'Cannot read', 'stack', '/src/']) expect(text).not.toContain(secret);
  });
});

describe('one area down', () => {
  it('leaves the other working: createPlant succeeds while the pet store refuses connections', async () => {
    upstream.answer(json(200, { name: 'Fern', tag: 'outdoor' }));

    const result = await petstoreDown.gql(
      'mutation { createPlant(input: { id: 12, name: "Fern", tag: "outdoor" }) { name tag } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result).toEqual({ status: 200, data: { createPlant: { name: 'Fern', tag: 'outdoor' } } });
    expect(upstream.requests.map(received)).toEqual([createPlantRequest('{"id":12,"name":"Fern","tag":"outdoor"}')]);
  });
});

describe('credentials and redirects', () => {
  it('does not follow a redirect to another origin: the call fails and the other origin receives nothing', async () => {
    const other = await startScriptedUpstream();
    try {
      other.answer(json(200, PET_1));
      upstream.answer({ status: 302, headers: { location: `${other.url}/api/v3/pet/1` } });

      const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

      expect(result.data).toEqual({ pet: null });
      expect(errorsOf(result)).toEqual([
        {
          message: 'petstore answered getPetById with a redirect (status 302), which the gateway does not follow',
          path: ['pet'],
          extensions: {
            code: 'UPSTREAM_ERROR',
            upstream: { service: 'petstore', operation: 'getPetById', status: 302 },
          },
        },
      ]);
      expect(upstream.requests.map(received)).toEqual([GET_PET_1]);
      expect(other.requests).toEqual([]);
      expect(JSON.stringify(result)).not.toContain(other.hostPort);
    } finally {
      await other.close();
    }
  });

  it('passes on an upstream 4xx message with any address in it left out', async () => {
    upstream.answer({
      status: 400,
      headers: { 'content-type': 'text/plain' },
      body: 'see http://10.0.0.9:8080/docs?token=s3cret, bad id',
    });

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(errorsOf(result)).toEqual([
      {
        message: 'see [address] bad id',
        path: ['pet'],
        extensions: { code: 'BAD_USER_INPUT', upstream: { service: 'petstore', operation: 'getPetById', status: 400 } },
      },
    ]);
  });

  it("does not pass on a proxy's HTML error page", async () => {
    upstream.answer({
      status: 502,
      headers: { 'content-type': 'text/html' },
      body: '<html><body>Bad gateway: 10.0.0.9:8080 refused</body></html>',
    });

    const result = await gateway.gql(PET_QUERY, {}, ALL_CREDENTIALS);

    expect(errorsOf(result)).toEqual([
      {
        message: 'petstore answered getPetById with status 502',
        path: ['pet'],
        extensions: {
          code: 'UPSTREAM_UNAVAILABLE',
          upstream: { service: 'petstore', operation: 'getPetById', status: 502 },
        },
      },
    ]);
  });
});
