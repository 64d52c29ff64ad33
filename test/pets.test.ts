/**
 * Pet queries through the gateway against the emulator: results, the upstream calls they make,
 * which credential each call carries, batching and int64 ids.
 */
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../src/emulator/server.js';
import {
  ALL_CREDENTIALS,
  BEARER,
  expectedGet,
  startStack,
  summariesByPath,
  summary,
  useStack,
} from './helpers/stack.js';
import { ENFORCES_CREDENTIALS } from './helpers/upstream.js';

const stack = useStack();

describe('pet(id)', () => {
  it('returns the pet with its category, tags and status', async () => {
    const result = await stack.gql(
      '{ pet(id: 1) { id name photoUrls status category { id name } tags { id name } } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result).toEqual({
      status: 200,
      data: {
        pet: {
          id: '1',
          name: 'Cat 1',
          photoUrls: ['url1', 'url2'],
          status: 'AVAILABLE',
          category: { id: '2', name: 'Cats' },
          tags: [
            { id: '1', name: 'tag1' },
            { id: '2', name: 'tag2' },
          ],
        },
      },
    });
  });

  it('sends GET /pet/{petId} with the api_key and withholds the bearer token', async () => {
    await stack.gql('{ pet(id: 1) { id } }', {}, ALL_CREDENTIALS);

    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/1', 'api_key')]);
  });

  it('forwards the bearer token when the caller has no api_key', async () => {
    const result = await stack.gql('{ pet(id: 2) { name } }', {}, { authorization: `Bearer ${BEARER}` });

    expect(result.data).toEqual({ pet: { name: 'Cat 2' } });
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/2', 'bearer')]);
  });

  it('is null, without an error, when the pet does not exist', async () => {
    const result = await stack.gql('{ pet(id: 404404) { id } }', {}, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { pet: null } });
    expect(stack.upstream().map((request) => request.path)).toEqual(['/api/v3/pet/404404']);
  });

  it.each([['abc'], ['1.5'], ['9223372036854775808'], ['-9223372036854775809'], ['1/../2'], ['']])(
    'rejects the id %j with BAD_USER_INPUT before any upstream call',
    async (id) => {
      const result = await stack.gql('query ($id: ID!) { pet(id: $id) { id } }', { id }, ALL_CREDENTIALS);

      expect(result.data).toEqual({ pet: null });
      expect(result.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
      expect(result.errors?.[0]?.path).toEqual(['pet']);
      expect(stack.upstream()).toEqual([]);
    },
  );

  it('reads the largest int64 id exactly, in the path and in the answer', async () => {
    const id = '9223372036854775807';
    await stack.gql('mutation ($id: ID!) { addPet(input: { id: $id, name: "Max" }) { id } }', { id }, ALL_CREDENTIALS);
    stack.upstream();

    const result = await stack.gql('query ($id: ID!) { pet(id: $id) { id name } }', { id }, ALL_CREDENTIALS);

    expect(result.data).toEqual({ pet: { id, name: 'Max' } });
    expect(stack.upstream().map((request) => request.path)).toEqual([`/api/v3/pet/${id}`]);
  });
});

describe('pets(ids)', () => {
  it('makes 3 upstream calls for pets(ids: [1, 2, 1, 2, 3])', async () => {
    const result = await stack.gql('{ pets(ids: [1, 2, 1, 2, 3]) { id } }', {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ pets: ['1', '2', '1', '2', '3'].map((id) => ({ id })) });
    expect(summariesByPath(stack)).toEqual(['1', '2', '3'].map((id) => expectedGet(`/api/v3/pet/${id}`, 'api_key')));
  });

  it('forwards the bearer token to each lookup when the caller has no api_key', async () => {
    await stack.gql('{ pets(ids: [1, 2]) { id } }', {}, { authorization: `Bearer ${BEARER}` });

    expect(
      stack
        .upstream()
        .map((request) => [request.path, request.headers['authorization'], request.headers['api_key']])
        .sort(),
    ).toEqual([
      ['/api/v3/pet/1', `Bearer ${BEARER}`, undefined],
      ['/api/v3/pet/2', `Bearer ${BEARER}`, undefined],
    ]);
  });

  it('answers in the order asked, null for a missing pet, fetching each distinct id once', async () => {
    const result = await stack.gql('{ pets(ids: [1, 2, 1, 404, 2, 3]) { id name } }', {}, ALL_CREDENTIALS);

    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      pets: [
        { id: '1', name: 'Cat 1' },
        { id: '2', name: 'Cat 2' },
        { id: '1', name: 'Cat 1' },
        null,
        { id: '2', name: 'Cat 2' },
        { id: '3', name: 'Cat 3' },
      ],
    });
    expect(
      stack
        .upstream()
        .map((request) => request.path)
        .sort(),
    ).toEqual(['/api/v3/pet/1', '/api/v3/pet/2', '/api/v3/pet/3', '/api/v3/pet/404']);
  });

  it('shares lookups between aliases and between spellings of one id', async () => {
    const result = await stack.gql(
      '{ a: pet(id: 1) { name } b: pet(id: "1") { id } c: pets(ids: ["01", 2]) { id } d: pet(id: 2) { name } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result.data).toEqual({
      a: { name: 'Cat 1' },
      b: { id: '1' },
      c: [{ id: '1' }, { id: '2' }],
      d: { name: 'Cat 2' },
    });
    expect(
      stack
        .upstream()
        .map((request) => request.path)
        .sort(),
    ).toEqual(['/api/v3/pet/1', '/api/v3/pet/2']);
  });

  // Needs an upstream that refuses a lookup without a credential; the reference server answers them all.
  it.runIf(ENFORCES_CREDENTIALS)('keeps the other pets when one lookup fails', async () => {
    const result = await stack.gql('{ pets(ids: [1, 2]) { id } }', {}, {});

    // Without a credential the emulator refuses each call; every item fails on its own.
    expect(result.data).toEqual({ pets: [null, null] });
    expect(result.errors?.map((error) => [error.path, error.extensions?.['code']])).toEqual([
      [['pets', 0], 'UNAUTHENTICATED'],
      [['pets', 1], 'UNAUTHENTICATED'],
    ]);
  });
});

describe('petsByStatus', () => {
  it('calls findByStatus once per status, with the bearer token only, and merges the pets', async () => {
    const result = await stack.gql(
      '{ petsByStatus(status: [PENDING, SOLD, PENDING]) { id name status } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result.data).toEqual({
      petsByStatus: [
        { id: '3', name: 'Cat 3', status: 'PENDING' },
        { id: '6', name: 'Dog 3', status: 'PENDING' },
        { id: '5', name: 'Dog 2', status: 'SOLD' },
      ],
    });
    expect(summariesByPath(stack)).toEqual([
      expectedGet('/api/v3/pet/findByStatus', 'bearer', 'status=pending'),
      expectedGet('/api/v3/pet/findByStatus', 'bearer', 'status=sold'),
    ]);
  });

  it('rejects a status outside the enum with a GraphQL validation error and no upstream call', async () => {
    const result = await stack.gql('{ petsByStatus(status: [LOST]) { id } }', {}, ALL_CREDENTIALS);

    expect(result.errors?.[0]?.message).toMatch(/LOST/);
    expect(result.data).toBeUndefined();
    expect(stack.upstream()).toEqual([]);
  });
});

describe('petsByTags', () => {
  it('returns each pet once, calling findByTags once per tag with the bearer token only', async () => {
    const result = await stack.gql('{ petsByTags(tags: ["tag1", "tag2"]) { id name } }', {}, ALL_CREDENTIALS);

    // tag1: 1, 4, 7; tag2: 1, 2, 4, 5, 7, 8 — the union, each pet once, in first-seen order.
    expect(result.data?.['petsByTags']).toEqual(
      ['1', '4', '7', '2', '5', '8'].map((id): unknown => expect.objectContaining({ id })),
    );
    expect(summariesByPath(stack)).toEqual([
      expectedGet('/api/v3/pet/findByTags', 'bearer', 'tags=tag1'),
      expectedGet('/api/v3/pet/findByTags', 'bearer', 'tags=tag2'),
    ]);
  });

  it('matches a tag with a comma in it exactly, although the emulator splits the value on commas', async () => {
    const result = await stack.gql('{ petsByTags(tags: ["tag1,tag2"]) { id } }', {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ petsByTags: [] });
    expect(stack.upstream().map((request) => request.query)).toEqual(['tags=tag1%2Ctag2']);
  });

  it('percent-encodes tags so that they cannot add query parameters', async () => {
    const result = await stack.gql('{ petsByTags(tags: ["a&status=sold"]) { id } }', {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ petsByTags: [] });
    expect(stack.upstream().map((request) => request.query)).toEqual(['tags=a%26status%3Dsold']);
  });
});

describe('upstream concurrency', () => {
  it('fetches distinct pets concurrently, never more at once than the configured connections', async () => {
    const slow = await startEmulator({ latencyMs: 40 });
    const narrow = await startStack({ upstreamConnections: 2 }, slow);
    const wide = await startStack({ upstreamConnections: 32 }, slow);
    try {
      await narrow.gql('{ pets(ids: [1, 2, 3, 4, 5, 6]) { id } }', {}, ALL_CREDENTIALS);
      expect(slow.requests).toHaveLength(6);
      expect(slow.maxInFlight).toBe(2);

      slow.clearRequests();
      await wide.gql('{ pets(ids: [1, 2, 3, 4, 5, 6]) { id } }', {}, ALL_CREDENTIALS);
      expect(slow.requests).toHaveLength(6);
      expect(slow.maxInFlight).toBe(6);
    } finally {
      await narrow.close();
      await wide.close();
      await slow.close();
    }
  });
});
