/**
 * The request log: one JSON line per request with its operation, duration, upstream calls and
 * error codes; a request id taken from `x-request-id` (or made up), returned in the response
 * and sent with every upstream call; credentials and passwords never in the log.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import type { UpstreamPool } from '../src/upstream/http.js';
import { useObserved } from './helpers/observed.js';
import { ALL_CREDENTIALS, API_KEY, BEARER } from './helpers/stack.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const observed = useObserved();

async function post(body: unknown, headers: Record<string, string> = {}) {
  return fetch(observed.gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

describe('one log line per request', () => {
  it('names the operation and gives its duration, status, upstream calls and error codes', async () => {
    const gateway = await observed.serve();

    // No credential: the pet store refuses the pet (401); the order needs none.
    await gateway.gql('query PetAndOrder { pet(id: 1) { name } order(id: 1) { id } }');

    const [line, ...others] = gateway.requestLines();
    expect(others).toEqual([]);
    expect(line).toMatchObject({
      level: 'info',
      msg: 'POST /graphql PetAndOrder 200',
      method: 'POST',
      path: '/graphql',
      status: 200,
      operationName: 'PetAndOrder',
      operationType: 'query',
      errorCodes: ['UNAUTHENTICATED'],
      upstreamCalls: 2,
    });
    expect(line?.['durationMs']).toEqual(expect.any(Number));
    expect(line?.['time']).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(line?.['upstream']).toEqual(
      expect.arrayContaining([
        {
          service: 'petstore',
          operation: 'getPetById',
          method: 'GET',
          status: 401,
          failure: 'status',
          durationMs: expect.any(Number),
        },
        { service: 'petstore', operation: 'getOrderById', method: 'GET', status: 200, durationMs: expect.any(Number) },
      ]),
    );
  });

  it('is written for a request refused before any operation ran, with its error code', async () => {
    const gateway = await observed.serve();

    const response = await post({ query: '{ pet(id: 1) { name ' });

    expect(gateway.requestLines()).toEqual([
      expect.objectContaining({
        status: response.status,
        operationName: null,
        operationType: null,
        errorCodes: ['GRAPHQL_PARSE_FAILED'],
        upstreamCalls: 0,
      }),
    ]);
  });

  it('lists each operation of a batched request', async () => {
    const gateway = await observed.serve(undefined, { batchMaxOperations: 2 });

    await post([
      { query: 'query A { order(id: 1) { id } }' },
      { query: 'query B { user(username: "user1") { username } }' },
    ]);

    expect(gateway.requestLines()[0]).toMatchObject({
      operations: [
        { name: 'A', type: 'query', errorCodes: [] },
        { name: 'B', type: 'query', errorCodes: [] },
      ],
      upstreamCalls: 2,
    });
  });

  it('keeps health probes out of the info log', async () => {
    const gateway = await observed.serve();

    await fetch(`${gateway.origin}/health`);

    expect(gateway.requestLines()).toEqual([]);
  });
});

describe('REQUEST_LOG_SAMPLE', () => {
  it('is 1 by default, and one in a hundred with NODE_ENV=production', () => {
    const upstreams = { PETSTORE_URL: 'http://petstore.example/api/v3', PLANTS_URL: 'http://plants.example' };
    expect(loadConfig([], upstreams).requestLogSample).toBe(1);
    expect(loadConfig([], { ...upstreams, NODE_ENV: 'production' }).requestLogSample).toBe(0.01);
  });

  it('at 0, writes no line for a request that went well and one for each request that failed', async () => {
    const gateway = await observed.serve(undefined, { requestLogSample: 0 });

    await gateway.gql('query Fine { pet(id: 1) { name } }', {}, ALL_CREDENTIALS);
    await gateway.gql('query Refused { pet(id: 1) { name } }');
    await post({ query: '{ pet(id: ' });

    expect(gateway.requestLines().map((line) => [line['msg'], line['errorCodes']])).toEqual([
      ['POST /graphql Refused 200', ['UNAUTHENTICATED']],
      ['POST /graphql 200', ['GRAPHQL_PARSE_FAILED']],
    ]);
  });

  it('at 0, still writes every line at debug level', async () => {
    const gateway = await observed.serve(undefined, { requestLogSample: 0, logLevel: 'debug' });

    await gateway.gql('query Fine { pet(id: 1) { name } }', {}, ALL_CREDENTIALS);

    expect(gateway.requestLines().map((line) => line['msg'])).toEqual(['POST /graphql Fine 200']);
  });
});

describe('the request id', () => {
  it('is the caller’s x-request-id: in the response, on the log line, and on every upstream call', async () => {
    const gateway = await observed.serve();

    const response = await post(
      { query: '{ pet(id: 1) { name } order(id: 2) { id } }' },
      { 'x-request-id': 'checkout-7f3a', api_key: 'demo' },
    );

    expect(response.headers.get('x-request-id')).toBe('checkout-7f3a');
    expect(gateway.requestLines()[0]?.['requestId']).toBe('checkout-7f3a');
    const upstream = observed.emulator.requests.map((request) => [request.path, request.headers['x-request-id']]);
    expect(upstream).toEqual(
      expect.arrayContaining([
        ['/api/v3/pet/1', 'checkout-7f3a'],
        ['/api/v3/store/order/2', 'checkout-7f3a'],
      ]),
    );
  });

  it('is made up (a UUID) when the caller sends none, and the same one goes upstream', async () => {
    const gateway = await observed.serve();

    const response = await post({ query: '{ order(id: 1) { id } }' });

    const id = response.headers.get('x-request-id');
    expect(id).toMatch(UUID);
    expect(gateway.requestLines()[0]?.['requestId']).toBe(id);
    expect(observed.emulator.requests[0]?.headers['x-request-id']).toBe(id);
  });

  it('keeps each request’s upstream calls its own when requests the lane serves and requests yoga serves overlap', async () => {
    const gateway = await observed.serve(undefined, { batchMaxOperations: 2 });

    // A plain query takes the gateway's own lane (its request passed explicitly); a batch takes
    // yoga's path (its request found ambient). Several of each, all in flight together.
    await Promise.all(
      [1, 2, 3].flatMap((n) => [
        post({ query: `{ order(id: ${n}) { id } }` }, { 'x-request-id': `lane-${n}` }),
        post([{ query: `{ user(username: "user${n}") { username } }` }], { 'x-request-id': `yoga-${n}` }),
      ]),
    );

    const lines = new Map(gateway.requestLines().map((line) => [line['requestId'], line]));
    for (const n of [1, 2, 3]) {
      expect(lines.get(`lane-${n}`)?.['upstream']).toEqual([
        expect.objectContaining({ operation: 'getOrderById', status: 200 }),
      ]);
      expect(lines.get(`yoga-${n}`)?.['upstream']).toEqual([
        expect.objectContaining({ operation: 'getUserByName', status: 200 }),
      ]);
    }
    const sent = observed.emulator.requests.map((request) => [request.path, request.headers['x-request-id']]);
    expect(sent).toEqual(
      expect.arrayContaining(
        [1, 2, 3].flatMap((n) => [
          [`/api/v3/store/order/${n}`, `lane-${n}`],
          [`/api/v3/user/user${n}`, `yoga-${n}`],
        ]),
      ),
    );
    expect(sent).toHaveLength(6);
  });

  it('replaces one a log could be forged with (quotes, spaces, too long)', async () => {
    const gateway = await observed.serve();

    for (const forged of ['a" "level":"error', 'x'.repeat(200)]) {
      const response = await post({ query: '{ order(id: 1) { id } }' }, { 'x-request-id': forged });
      expect(response.headers.get('x-request-id')).toMatch(UUID);
    }
    expect(gateway.log.text()).not.toContain('"level":"error');
  });

  it('is on every line written while its request is served, error lines included', async () => {
    const gateway = await observed.serve(undefined, { logLevel: 'debug' });

    await post({ query: 'query Inventory { inventory { entries { status } } }' }, { 'x-request-id': 'trace-me' });

    const duringRequest = gateway.log.lines().filter((line) => line['requestId'] === 'trace-me');
    expect(duringRequest.length).toBeGreaterThan(1);
    expect(duringRequest.some((line) => String(line['msg']).includes('upstream petstore getInventory failed'))).toBe(
      true,
    );
  });
});

describe('secrets stay out of the log', () => {
  const PASSWORD = 'hunter2-correct-horse';
  const INLINE_PASSWORD = 'inline-battery-staple';

  it('at debug level, credentials and passwords appear as [redacted], and nowhere in clear', async () => {
    const gateway = await observed.serve(undefined, { logLevel: 'debug' });

    await gateway.gql(
      `mutation Users($input: UserInput!) {
        a: createUser(input: $input) { username }
        b: createUser(input: { username: "inline", password: "${INLINE_PASSWORD}" }) { username }
        inventory: deleteUser(username: "nobody-by-that-name")
      }`,
      { input: { username: 'alice', password: PASSWORD, email: 'alice@example.com' } },
      { ...ALL_CREDENTIALS, cookie: 'session=cookie-secret-123' },
    );
    // A variable refused by GraphQL is quoted in its error message, password included.
    await gateway.gql(
      'mutation Bad($input: UserInput!) { createUser(input: $input) { username } }',
      { input: { username: 7, password: PASSWORD } },
      ALL_CREDENTIALS,
    );

    const text = gateway.log.text();
    for (const secret of [BEARER, API_KEY, PASSWORD, INLINE_PASSWORD, 'cookie-secret-123'])
      expect(text).not.toContain(secret);
    const [line] = gateway.requestLines();
    expect(line?.['headers']).toMatchObject({
      authorization: '[redacted]',
      api_key: '[redacted]',
      cookie: '[redacted]',
      'content-type': 'application/json',
    });
    expect(line?.['variables']).toEqual([
      { input: { username: 'alice', password: '[redacted]', email: 'alice@example.com' } },
    ]);
  });

  it('keeps every line valid JSON whatever the password holds (quotes, commas, backslashes)', async () => {
    const gateway = await observed.serve(undefined, { logLevel: 'debug' });
    // It looks like a piece of the line's own structure, and JSON escapes it.
    const tricky = 'info","time\\n';

    await gateway.gql('mutation M($input: UserInput!) { createUser(input: $input) { username } }', {
      input: { username: 'tricky', password: tricky },
    });
    await gateway.gql('mutation M($input: [UserInput!]!) { createUsers(input: $input) { username } }', {
      input: [{ username: 7, password: tricky }],
    });

    // Every line parsed as JSON (lines() fails on one that does not), the variables among them, redacted.
    expect(JSON.stringify(gateway.log.lines())).toContain('[redacted]');
    expect(gateway.log.text()).not.toContain(JSON.stringify(tricky).slice(1, -1));
    expect(gateway.requestLines().map((line) => line['status'])).toEqual([200, 400]);
  });

  it('a GraphQL error quoting a refused password is logged under its code, without the password', async () => {
    const gateway = await observed.serve();

    // A variable of the wrong type makes GraphQL quote the value it refused, password included.
    const result = await gateway.gql(
      'mutation M($input: [UserInput!]!) { createUsers(input: $input) { username } }',
      { input: [{ username: 'x', password: { not: PASSWORD } }] },
      ALL_CREDENTIALS,
    );

    expect(result.errors?.map((error) => error.extensions?.['code'])).toEqual(['BAD_USER_INPUT']);
    expect(gateway.requestLines()[0]).toMatchObject({ operationName: 'M', errorCodes: ['BAD_USER_INPUT'] });
    expect(gateway.log.text()).not.toContain(PASSWORD);
  });

  it('an unexpected error whose message quotes the credentials is logged with its stack, and without them', async () => {
    const crash = new TypeError(
      `Cannot read properties of undefined (reading 'id') (Bearer ${BEARER}, api_key ${API_KEY})`,
    );
    const crashing = (service: 'petstore' | 'plants'): UpstreamPool => ({
      service,
      request: () => Promise.reject(crash),
      ping: () => Promise.resolve(200),
      close: () => Promise.resolve(),
    });
    const gateway = await observed.serve(undefined, {}, { createUpstreamClient: crashing });

    await gateway.gql('query Crash { pet(id: 1) { name } }', {}, ALL_CREDENTIALS);

    const error = gateway.log.lines().find((line) => line['level'] === 'error');
    expect(error).toMatchObject({
      msg: "Cannot read properties of undefined (reading 'id') ([redacted], api_key [redacted])",
    });
    expect(JSON.stringify(error?.['err'])).toMatch(/"stack":"TypeError: Cannot read properties/);
    expect(gateway.requestLines()[0]).toMatchObject({ operationName: 'Crash', errorCodes: ['INTERNAL_SERVER_ERROR'] });
    expect(gateway.log.text()).not.toContain(BEARER);
    expect(gateway.log.text()).not.toContain(API_KEY);
  });
});
