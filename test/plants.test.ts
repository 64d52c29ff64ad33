/**
 * The plant area through the gateway against the emulator: createPlant's JSON body (int64 id
 * exact), the bearer token it needs (and the api_key it must not get), and the area's own
 * `{error, message}` failure record.
 */
import { describe, expect, it } from 'vitest';
import { ALL_CREDENTIALS, API_KEY, BEARER, expectedRequest, received, useStack } from './helpers/stack.js';
import { UPSTREAM } from './helpers/upstream.js';

const MAX_INT64 = '9223372036854775807';
const CREATE_PLANT = 'mutation ($input: NewPlantInput!) { createPlant(input: $input) { name tag } }';

const stack = useStack();

describe('createPlant', () => {
  it('returns the created plant', async () => {
    const result = await stack.gql(
      CREATE_PLANT,
      { input: { id: MAX_INT64, name: 'Monstera', tag: 'indoor' } },
      ALL_CREDENTIALS,
    );

    expect(result).toEqual({ status: 200, data: { createPlant: { name: 'Monstera', tag: 'indoor' } } });
  });

  it('sends POST /plants with the exact JSON body, the bearer token, and not the api_key', async () => {
    await stack.gql(CREATE_PLANT, { input: { id: MAX_INT64, name: 'Monstera', tag: 'indoor' } }, ALL_CREDENTIALS);

    expect(received(stack)).toEqual([
      {
        ...expectedRequest('POST', '/plants', 'bearer', 'application/json'),
        body: `{"id":${MAX_INT64},"name":"Monstera","tag":"indoor"}`,
      },
    ]);
  });

  it('leaves the tag out of the body when none is given, and answers a null tag', async () => {
    const result = await stack.gql(CREATE_PLANT, { input: { id: '7', name: 'Fern' } }, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { createPlant: { name: 'Fern', tag: null } } });
    expect(received(stack).map((request) => [request.method, request.path, request.body])).toEqual([
      ['POST', '/plants', '{"id":7,"name":"Fern"}'],
    ]);
  });

  it("is BAD_USER_INPUT with the plant area's message and error record when it rejects the plant", async () => {
    // The graph accepts an empty name; the plant area requires a non-empty one and answers 400 {error, message}.
    const result = await stack.gql(CREATE_PLANT, { input: { id: '8', name: '' } }, ALL_CREDENTIALS);

    expect(result.data).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors?.[0]?.message).toBe('name must be a non-empty string');
    expect(result.errors?.[0]?.path).toEqual(['createPlant']);
    expect(result.errors?.[0]?.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      upstream: { service: 'plants', operation: 'createPlant', status: 400, error: 400 },
    });
    expect(
      received(stack).map((request) => [request.method, request.path, request.authorization, request.body]),
    ).toEqual([['POST', '/plants', `Bearer ${BEARER}`, '{"id":8,"name":""}']]);
  });

  it('is UNAUTHENTICATED without a bearer token, and does not send the api_key instead', async () => {
    const result = await stack.gql(CREATE_PLANT, { input: { id: '9', name: 'Cactus' } }, { api_key: API_KEY });

    expect(result.data).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors?.[0]?.path).toEqual(['createPlant']);
    // Both upstreams refuse with 401. The reference double answers with the plant area's
    // documented Error record `{error: 401, message}`, whose `error` the gateway passes on; the
    // emulator's 401 is the pet store's `{code, message}`, which has none.
    expect(result.errors?.[0]?.extensions).toEqual({
      code: 'UNAUTHENTICATED',
      upstream: {
        service: 'plants',
        operation: 'createPlant',
        status: 401,
        ...(UPSTREAM === 'reference' ? { error: 401 } : {}),
      },
    });
    expect(received(stack)).toEqual([
      { ...expectedRequest('POST', '/plants', 'none', 'application/json'), body: '{"id":9,"name":"Cactus"}' },
    ]);
  });

  it.each([['abc'], ['1.5'], ['9223372036854775808']])(
    'rejects the id %j with BAD_USER_INPUT before any upstream call',
    async (id) => {
      const result = await stack.gql(CREATE_PLANT, { input: { id, name: 'Fern' } }, ALL_CREDENTIALS);

      expect(result.data).toBeNull();
      expect(result.errors?.map((error) => [error.path, error.extensions?.['code']])).toEqual([
        [['createPlant'], 'BAD_USER_INPUT'],
      ]);
      expect(stack.upstream()).toEqual([]);
    },
  );
});
