/**
 * The gateway as an Apollo Federation v2 subgraph: `_service { sdl }` and `_entities` for Pet,
 * Order and User, resolved through the request's loaders.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { until } from './helpers/clock.js';
import { serveScripted } from './helpers/observed.js';
import { json, startScriptedUpstream } from './helpers/scripted-upstream.js';
import { ALL_CREDENTIALS, API_KEY, expectedGet, summariesByPath, useStack } from './helpers/stack.js';

const ENTITIES = `query ($representations: [_Any!]!) {
  _entities(representations: $representations) {
    __typename
    ... on Pet { id name }
    ... on Order { id quantity pet { name } }
    ... on User { username email }
  }
}`;

const stack = useStack();

describe('_service', () => {
  it('answers the subgraph SDL with the federation link and the entity keys', async () => {
    const result = await stack.gql('{ _service { sdl } }');
    const sdl = (result.data?.['_service'] as { sdl: string }).sdl;

    expect(sdl).toContain(
      '@link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@cost", "@listSize"])',
    );
    expect(sdl).toMatch(/type Pet\s+@key\(fields: "id"\)/);
    expect(sdl).toMatch(/type Order\s+@key\(fields: "id"\)/);
    expect(sdl).toMatch(/type User\s+@key\(fields: "username"\)/);
    expect(stack.upstream()).toEqual([]);
  });

  it('is exactly what `npm run schema:print` prints for a schema registry', async () => {
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'schema:print'], { encoding: 'utf8' });
    const result = await stack.gql('{ _service { sdl } }');

    expect(stdout).toBe(`${(result.data?.['_service'] as { sdl: string }).sdl}\n`);
  });
});

describe('_entities', () => {
  it('resolves 100 Pet representations over 50 distinct ids with 50 upstream calls', async () => {
    // Pets 11 to 50 join the 10 seeded ones.
    const adds = Array.from(
      { length: 40 },
      (_, index) => `p${index + 11}: addPet(input: { id: ${index + 11}, name: "Pet ${index + 11}" }) { id }`,
    );
    await stack.gql(`mutation { ${adds.join(' ')} }`, {}, ALL_CREDENTIALS);
    stack.upstream();
    const ids = Array.from({ length: 100 }, (_, index) => String((index % 50) + 1));

    const result = await stack.gql(
      ENTITIES,
      { representations: ids.map((id) => ({ __typename: 'Pet', id })) },
      ALL_CREDENTIALS,
    );

    expect(result.errors).toBeUndefined();
    expect(result.data?.['_entities']).toEqual(
      ids.map((id) => ({ __typename: 'Pet', id, name: Number(id) <= 10 ? expect.any(String) : `Pet ${id}` })),
    );
    const calls = stack.upstream();
    expect(calls).toHaveLength(50);
    expect(new Set(calls.map((call) => call.path))).toEqual(
      new Set(Array.from({ length: 50 }, (_, index) => `/api/v3/pet/${index + 1}`)),
    );
    expect(
      calls.every((call) => call.headers['api_key'] === API_KEY && call.headers['authorization'] === undefined),
    ).toBe(true);
  });

  it('resolves Order and User by their keys, and Order.pet through the same loader', async () => {
    const representations = [
      { __typename: 'Order', id: '1' },
      { __typename: 'User', username: 'user1' },
      { __typename: 'Order', id: '2' },
      { __typename: 'Pet', id: '1' },
    ];

    const result = await stack.gql(ENTITIES, { representations }, ALL_CREDENTIALS);

    expect(result).toEqual({
      status: 200,
      data: {
        _entities: [
          { __typename: 'Order', id: '1', quantity: 100, pet: { name: 'Cat 1' } },
          { __typename: 'User', username: 'user1', email: 'email1@test.com' },
          { __typename: 'Order', id: '2', quantity: 50, pet: { name: 'Cat 1' } },
          { __typename: 'Pet', id: '1', name: 'Cat 1' },
        ],
      },
    });
    // Both orders and the Pet representation share one lookup of pet 1; orders and users carry no credential.
    expect(summariesByPath(stack)).toEqual([
      expectedGet('/api/v3/pet/1', 'api_key'),
      expectedGet('/api/v3/store/order/1', 'none'),
      expectedGet('/api/v3/store/order/2', 'none'),
      expectedGet('/api/v3/user/user1', 'none'),
    ]);
  });

  it('gives null for a missing entity, and an error for a bad key, without failing the others', async () => {
    const representations = [
      { __typename: 'Pet', id: '404' },
      { __typename: 'User', username: 'nobody' },
      { __typename: 'Order', id: 'not-a-number' },
      { __typename: 'Pet', id: '2' },
    ];

    const result = await stack.gql(ENTITIES, { representations }, ALL_CREDENTIALS);

    expect(result.data?.['_entities']).toEqual([null, null, null, { __typename: 'Pet', id: '2', name: 'Cat 2' }]);
    expect(result.errors?.map((error) => [error.path, error.extensions?.['code']])).toEqual([
      [['_entities', 2], 'BAD_USER_INPUT'],
    ]);
    expect(
      stack
        .upstream()
        .map((call) => call.path)
        .sort(),
    ).toEqual(['/api/v3/pet/2', '/api/v3/pet/404', '/api/v3/user/nobody']);
  });

  it('fetches distinct entities concurrently', async () => {
    // An upstream that answers nothing until the test says: the calls made one after the other would stop at one.
    const upstream = await startScriptedUpstream();
    const subgraph = await serveScripted(upstream.url);
    try {
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      upstream.answer((request) => {
        const id = Number(request.url.split('/').pop());
        return {
          until: released,
          then: json(200, { id, name: `Cat ${id}`, photoUrls: [], tags: [], status: 'available' }),
        };
      });
      const representations = ['1', '2', '3', '4', '5'].map((id) => ({ __typename: 'Pet', id }));

      const answer = subgraph.gql(ENTITIES, { representations }, ALL_CREDENTIALS);
      // All five calls are in flight at once, none of them answered.
      await until(() => upstream.requests.length === 5, 'five upstream calls in flight');
      release();
      const result = await answer;

      expect(result.errors).toBeUndefined();
      expect(result.data?.['_entities']).toEqual(
        [1, 2, 3, 4, 5].map((id) => ({ __typename: 'Pet', id: String(id), name: `Cat ${id}` })),
      );
      expect(upstream.requests.map((request) => request.url).sort()).toEqual(
        [1, 2, 3, 4, 5].map((id) => `/api/v3/pet/${id}`),
      );
    } finally {
      await subgraph.close();
      await upstream.close();
    }
  });
});
