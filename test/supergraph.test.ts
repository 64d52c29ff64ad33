/**
 * The gateway inside a real supergraph: composed with a second subgraph by a federation
 * composition library and served by a federation gateway runtime (Hive Gateway), with queries
 * that cross the two subgraphs in both directions and credentials that reach the pet store
 * through the router.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices, validate } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { REVIEWS_SDL, startReviewsSubgraph } from './fixtures/reviews-subgraph.js';
import {
  ALL_CREDENTIALS,
  expectedGet,
  postGraphQL,
  startStack,
  stop,
  summariesByPath,
  summary,
  type Stack,
} from './helpers/stack.js';
import { ENFORCES_CREDENTIALS } from './helpers/upstream.js';

let pets: Stack;
let reviews: Awaited<ReturnType<typeof startReviewsSubgraph>>;
let router: Server;
let routerUrl: string;
let subgraphs: { name: string; url: string; typeDefs: ReturnType<typeof parse> }[];

beforeAll(async () => {
  pets = await startStack();
  reviews = await startReviewsSubgraph();
  // The pet store subgraph's SDL as a registry would get it: from _service.
  const service = await pets.gql('{ _service { sdl } }');
  subgraphs = [
    { name: 'pets', url: pets.url, typeDefs: parse((service.data?.['_service'] as { sdl: string }).sdl) },
    { name: 'reviews', url: reviews.url, typeDefs: parse(REVIEWS_SDL) },
  ];
  const composed = composeServices(subgraphs);
  if (composed.errors)
    throw new Error(`composition failed: ${composed.errors.map((error) => error.message).join('; ')}`);

  const runtime = createGatewayRuntime({
    supergraph: composed.supergraphSdl,
    logging: false,
    // The router passes the app's credentials on to the subgraphs; the pet store subgraph then
    // forwards each only to the REST operations that declare it.
    propagateHeaders: {
      fromClientToSubgraphs: ({ request }) => ({
        authorization: request.headers.get('authorization'),
        api_key: request.headers.get('api_key'),
      }),
    },
  });
  router = createServer((request, response) => void runtime(request, response));
  await new Promise<void>((resolve) => router.listen(0, '127.0.0.1', resolve));
  routerUrl = `http://127.0.0.1:${(router.address() as AddressInfo).port}/graphql`;
});

afterAll(async () => {
  await stop(router);
  await reviews.close();
  await pets.close();
});

beforeEach(() => {
  pets.emulator.reset();
  pets.upstream();
});

describe('composition', () => {
  it('composes the two subgraphs without errors', () => {
    const validation = validate(subgraphs);
    const composed = composeServices(subgraphs);

    expect(validation.success ? [] : validation.errors.map((error) => error.message)).toEqual([]);
    expect(composed.errors).toBeUndefined();
    expect(composed.supergraphSdl).toMatch(
      /type Pet\s+@join__type\(graph: PETS, key: "id"\)\s+@join__type\(graph: REVIEWS, key: "id"\)/,
    );
  });
});

describe('queries across the supergraph', () => {
  it('goes from the pet store to reviews and back to the pet store for the authors', async () => {
    const result = await postGraphQL(
      routerUrl,
      '{ pet(id: 1) { name status reviews { body author { username email } } } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      pet: {
        name: 'Cat 1',
        status: 'AVAILABLE',
        reviews: [
          { body: 'Purrs all day', author: { username: 'user1', email: 'email1@test.com' } },
          { body: 'Sleeps on the keyboard', author: { username: 'user2', email: 'email2@test.com' } },
        ],
      },
    });
    expect(summariesByPath(pets)).toEqual([
      expectedGet('/api/v3/pet/1', 'api_key'),
      expectedGet('/api/v3/user/user1', 'none'),
      expectedGet('/api/v3/user/user2', 'none'),
    ]);
  });

  it('goes from reviews to the pet store, one upstream call per distinct pet and user', async () => {
    const result = await postGraphQL(
      routerUrl,
      '{ reviews { body pet { id name } author { firstName } } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      reviews: [
        { body: 'Purrs all day', pet: { id: '1', name: 'Cat 1' }, author: { firstName: 'first name 1' } },
        { body: 'Sleeps on the keyboard', pet: { id: '1', name: 'Cat 1' }, author: { firstName: 'first name 2' } },
        { body: 'Very calm', pet: { id: '2', name: 'Cat 2' }, author: { firstName: 'first name 1' } },
      ],
    });
    expect(summariesByPath(pets)).toEqual([
      expectedGet('/api/v3/pet/1', 'api_key'),
      expectedGet('/api/v3/pet/2', 'api_key'),
      expectedGet('/api/v3/user/user1', 'none'),
      expectedGet('/api/v3/user/user2', 'none'),
    ]);
  });

  it('passes the bearer token through the router to operations that declare it', async () => {
    const result = await postGraphQL(
      routerUrl,
      '{ petsByStatus(status: [SOLD]) { name reviews { body } } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result.data).toEqual({ petsByStatus: [{ name: 'Dog 2', reviews: [] }] });
    expect(pets.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/findByStatus', 'bearer', 'status=sold')]);
  });

  it('forwards no credential through the router to the pet store when the client sends none', async () => {
    await postGraphQL(routerUrl, '{ reviews { body pet { name } } }');

    expect(summariesByPath(pets)).toEqual([expectedGet('/api/v3/pet/1', 'none'), expectedGet('/api/v3/pet/2', 'none')]);
  });

  // The reference server checks no credential: there the pets are served.
  it.runIf(ENFORCES_CREDENTIALS)(
    'passes the pet store refusing a call without credentials through the router as UNAUTHENTICATED, keeping the rest',
    async () => {
      const result = await postGraphQL(routerUrl, '{ reviews { body pet { name } } }');

      // The reviews are served; each pet the pet store refused is an error with its code and upstream.
      expect(result.data).toEqual({
        reviews: [
          { body: 'Purrs all day', pet: { name: null } },
          { body: 'Sleeps on the keyboard', pet: { name: null } },
          { body: 'Very calm', pet: { name: null } },
        ],
      });
      expect(
        new Set(
          result.errors?.map((error) => JSON.stringify([error.extensions?.['code'], error.extensions?.['upstream']])),
        ),
      ).toEqual(
        new Set([JSON.stringify(['UNAUTHENTICATED', { service: 'petstore', operation: 'getPetById', status: 401 }])]),
      );
      expect(
        pets
          .upstream()
          .every(
            (request) => request.headers['api_key'] === undefined && request.headers['authorization'] === undefined,
          ),
      ).toBe(true);
    },
  );
});
