/**
 * The limits on what one request may ask for: list arguments, the upstream calls of one
 * operation, batching, body sizes, and the shape limits of an operation (depth, aliases,
 * tokens, directives, cost), each at its default and when configured.
 */
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamCallBudget } from '../src/security/fan-out.js';
import type { UpstreamClient, UpstreamRequest } from '../src/upstream/http.js';
import { multipartBody, postMultipart, uploadParts } from './helpers/multipart.js';
import {
  ALL_CREDENTIALS,
  GRAPHQL_POST_HEADERS,
  startStack,
  useStack,
  type GraphQLResponse,
  type Stack,
} from './helpers/stack.js';

const stack = useStack();

/** The codes of a result's errors. */
const codes = (result: GraphQLResponse) => (result.errors ?? []).map((error) => error.extensions?.['code']);

/** `{ message, path, code }` of each error. */
const errorsOf = (result: GraphQLResponse) =>
  (result.errors ?? []).map(({ message, path, extensions }) => ({ message, path, code: extensions?.['code'] }));

const ids = (count: number) => Array.from({ length: count }, (_, index) => String(index + 1));

/** A second stack on the same emulator with some settings changed, for the tests in the enclosing describe. */
function useStackWith(overrides: Parameters<typeof startStack>[0]): () => Stack {
  let other: Stack | undefined;
  beforeAll(async () => {
    // The shared stack starts first (its beforeAll was registered first), so its emulator is there.
    other = await startStack(overrides, stack.emulator);
  });
  afterAll(() => other?.close());
  return () => {
    if (!other) throw new Error('not started');
    return other;
  };
}

describe('list arguments (LIST_ARGUMENT_MAX_ITEMS, default 100)', () => {
  it('pets(ids) with 100 ids is answered', async () => {
    const result = await stack.gql(
      'query ($ids: [ID!]!) { pets(ids: $ids) { id } }',
      { ids: ids(100) },
      ALL_CREDENTIALS,
    );

    expect(result.errors).toBeUndefined();
    expect(result.data?.['pets']).toHaveLength(100);
    expect(stack.upstream()).toHaveLength(100);
  });

  it.each([
    ['pets(ids)', 'query ($list: [ID!]!) { pets(ids: $list) { id } }', ids(101), 'ids', 'pets'],
    [
      'petsByTags(tags)',
      'query ($list: [String!]!) { petsByTags(tags: $list) { id } }',
      ids(101).map((id) => `tag${id}`),
      'tags',
      'petsByTags',
    ],
    [
      'petsByStatus(status)',
      'query ($list: [PetStatus!]!) { petsByStatus(status: $list) { id } }',
      Array.from({ length: 101 }, () => 'SOLD'),
      'status',
      'petsByStatus',
    ],
    [
      'createUsers(input)',
      'mutation ($list: [UserInput!]!) { createUsers(input: $list) { username } }',
      ids(101).map((id) => ({ username: `u${id}`, password: 'pw' })),
      'input',
      'createUsers',
    ],
  ])(
    '%s with 101 items fails with BAD_USER_INPUT before any upstream call',
    async (_, query, list, argument, field) => {
      const result = await stack.gql(query, { list }, ALL_CREDENTIALS);

      expect(result.data).toBeNull();
      expect(errorsOf(result)).toEqual([
        { message: `${argument} has 101 items; at most 100 are allowed`, path: [field], code: 'BAD_USER_INPUT' },
      ]);
      expect(stack.upstream()).toEqual([]);
    },
  );

  it('holds for lists inside input objects too: addPet with 101 photo URLs', async () => {
    const result = await stack.gql(
      'mutation ($urls: [String!]!) { addPet(input: { name: "Rex", photoUrls: $urls }) { id } }',
      { urls: ids(101) },
      ALL_CREDENTIALS,
    );

    expect(errorsOf(result)).toEqual([
      { message: 'input.photoUrls has 101 items; at most 100 are allowed', path: ['addPet'], code: 'BAD_USER_INPUT' },
    ]);
    expect(stack.upstream()).toEqual([]);
  });

  it('leaves _entities to the call budget: 150 representations of 10 pets are answered with 10 calls', async () => {
    const representations = Array.from({ length: 150 }, (_, index) => ({
      __typename: 'Pet',
      id: String((index % 10) + 1),
    }));

    const result = await stack.gql(
      'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Pet { id } } }',
      { r: representations },
      ALL_CREDENTIALS,
    );

    expect(result.errors).toBeUndefined();
    expect(result.data?.['_entities']).toHaveLength(150);
    expect(stack.upstream()).toHaveLength(10);
  });

  describe('set to 2', () => {
    const small = useStackWith({ listArgumentMaxItems: 2 });

    it('answers two ids and refuses three', async () => {
      const two = await small().gql('{ pets(ids: [1, 2]) { id } }', {}, ALL_CREDENTIALS);
      const three = await small().gql('{ pets(ids: [1, 2, 3]) { id } }', {}, ALL_CREDENTIALS);

      expect(two).toEqual({ status: 200, data: { pets: [{ id: '1' }, { id: '2' }] } });
      expect(errorsOf(three)).toEqual([
        { message: 'ids has 3 items; at most 2 are allowed', path: ['pets'], code: 'BAD_USER_INPUT' },
      ]);
      expect(stack.upstream().map((request) => request.path)).toEqual(['/api/v3/pet/1', '/api/v3/pet/2']);
    });
  });
});

describe('upstream calls per operation (UPSTREAM_MAX_CALLS_PER_OPERATION)', () => {
  const budget = useStackWith({ upstreamMaxCallsPerOperation: 3 });

  it('refuses 5 pets whole before any call, with COST_ESTIMATED_TOO_EXPENSIVE: one call per distinct id', async () => {
    const result = await budget().gql('{ pets(ids: [1, 2, 3, 4, 5, 5]) { id } }', {}, ALL_CREDENTIALS);

    expect(result.status).toBe(400);
    expect(result.data).toBeUndefined();
    expect(errorsOf(result)).toEqual([
      {
        message:
          'This operation may make 5 upstream calls, over the 3 allowed per operation; ask for fewer items per operation',
        code: 'COST_ESTIMATED_TOO_EXPENSIVE',
      },
    ]);
    expect(stack.upstream()).toEqual([]);
  });

  it('counts calls of every field: four aliased lookups are four calls, refused whole', async () => {
    const result = await budget().gql(
      '{ a: pet(id: 1) { id } b: inventory { entries { status } } c: user(username: "user1") { username } d: order(id: 1) { id } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(codes(result)).toEqual(['COST_ESTIMATED_TOO_EXPENSIVE']);
    expect(stack.upstream()).toEqual([]);
  });

  it('still refuses, as a backstop, a call past the budget that no estimate foresaw: UPSTREAM_FANOUT_LIMIT at once', async () => {
    const sent: string[] = [];
    const client: UpstreamClient = {
      service: 'petstore',
      request: (call) => {
        sent.push(call.operation);
        return Promise.resolve({ status: 200, body: {} });
      },
      close: () => Promise.resolve(),
    };
    const calls = new UpstreamCallBudget(3);
    const limited = calls.limit(client);
    const call: UpstreamRequest = { operation: 'getPetById', method: 'GET', path: '/pet/1' };

    const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => limited.request(call)));

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    expect((outcomes[3] as PromiseRejectedResult).reason).toMatchObject({
      message: 'This operation needs more than 3 upstream calls; ask for fewer items per operation',
      extensions: { code: 'UPSTREAM_FANOUT_LIMIT' },
    });
    expect(sent).toHaveLength(3);
    expect(calls.made).toBe(3);
  });

  it('gives each operation its own budget', async () => {
    const first = await budget().gql('{ pets(ids: [1, 2, 3]) { id } }', {}, ALL_CREDENTIALS);
    const second = await budget().gql('{ pets(ids: [4, 5, 6]) { id } }', {}, ALL_CREDENTIALS);

    expect([first.errors, second.errors]).toEqual([undefined, undefined]);
    expect(stack.upstream()).toHaveLength(6);
  });

  it('is 200 by default: 150 distinct pets in one operation are fetched', async () => {
    const result = await stack.gql(
      '{ a: pets(ids: [' +
        ids(100).join(',') +
        ']) { id } b: pets(ids: [' +
        ids(150).slice(100).join(',') +
        ']) { id } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result.errors).toBeUndefined();
    expect(stack.upstream()).toHaveLength(150);
  });
});

describe('batched requests (BATCH_MAX_OPERATIONS)', () => {
  const post = (url: string, body: unknown) =>
    fetch(url, {
      method: 'POST',
      headers: { ...GRAPHQL_POST_HEADERS, ...ALL_CREDENTIALS },
      body: JSON.stringify(body),
    });

  it('are off by default: an array body is refused with 400 BAD_REQUEST', async () => {
    const response = await post(stack.url, [{ query: '{ pet(id: 1) { id } }' }]);

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [{ message: 'Batching is not supported.', extensions: { code: 'BAD_REQUEST' } }],
    });
    expect(stack.upstream()).toEqual([]);
  });

  describe('set to 2', () => {
    const batching = useStackWith({ batchMaxOperations: 2 });

    it('answers a batch of two operations with two results', async () => {
      const response = await post(batching().url, [
        { query: '{ pet(id: 1) { id } }' },
        { query: '{ pet(id: 2) { id } }' },
      ]);

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual([{ data: { pet: { id: '1' } } }, { data: { pet: { id: '2' } } }]);
    });

    it('refuses a batch of three with 413, before running any of them', async () => {
      const response = await post(batching().url, [
        { query: '{ pet(id: 1) { id } }' },
        { query: '{ pet(id: 2) { id } }' },
        { query: '{ pet(id: 3) { id } }' },
      ]);

      expect(response.status).toBe(413);
      expect(await response.json()).toEqual({
        errors: [{ message: 'Batching is limited to 2 operations per request.', extensions: { code: 'BAD_REQUEST' } }],
      });
      expect(stack.upstream()).toEqual([]);
    });
  });
});

describe('request body size (REQUEST_MAX_BYTES)', () => {
  const small = useStackWith({ requestMaxBytes: 1024, uploadMaxBytes: 4096 });
  const bodyOf = (size: number) => {
    const head = JSON.stringify({ query: '{ pet(id: 1) { id } }', variables: { padding: '' } });
    return head.replace('"padding":""', `"padding":"${'x'.repeat(size - head.length)}"`);
  };
  const send = (body: string) =>
    fetch(small().url, {
      method: 'POST',
      headers: { ...GRAPHQL_POST_HEADERS, ...ALL_CREDENTIALS },
      body,
    });

  it('answers a body of exactly the limit', async () => {
    const response = await send(bodyOf(1024));

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { pet: { id: '1' } } });
  });

  it('refuses a body one byte over it with 413 PAYLOAD_TOO_LARGE', async () => {
    const response = await send(bodyOf(1025));

    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      errors: [{ message: 'The request body is larger than 1024 bytes', extensions: { code: 'PAYLOAD_TOO_LARGE' } }],
    });
    expect(stack.upstream()).toEqual([]);
  });

  it('refuses a chunked body (no Content-Length) as soon as it passes the limit', async () => {
    const chunks = [bodyOf(2048)];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const response = await fetch(small().url, {
      method: 'POST',
      headers: { ...GRAPHQL_POST_HEADERS },
      body,
      duplex: 'half',
    } as RequestInit);

    expect(response.status).toBe(413);
    expect(((await response.json()) as GraphQLResponse).errors?.[0]?.extensions).toEqual({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('lets an upload be larger: a 4 KiB file goes through a gateway whose JSON limit is 1 KiB', async () => {
    const upload = uploadParts(
      { query: 'mutation ($file: File!) { uploadPetImage(petId: 1, file: $file) { code } }', variables: {} },
      { filename: 'a.png', contentType: 'image/png', content: Buffer.alloc(4096, 1) },
    );

    const result = await postMultipart(small().url, multipartBody(upload), { headers: ALL_CREDENTIALS });

    expect(result).toEqual({ status: 200, data: { uploadPetImage: { code: 200 } } });
  });
});

describe('operation shape limits', () => {
  it('let GraphiQL load the schema with the defaults (its introspection query)', async () => {
    const result = await stack.gql(getIntrospectionQuery());

    expect(result.errors).toBeUndefined();
    expect(result.data?.['__schema']).toBeDefined();
  });

  describe('configured small', () => {
    const strict = useStackWith({
      queryMaxDepth: 3,
      queryMaxAliases: 2,
      queryMaxTokens: 40,
      queryMaxDirectives: 1,
      queryMaxCost: 20,
    });

    it.each([
      ['depth 3', '{ pet(id: 1) { tags { name } } }', []],
      ['depth 4', '{ order(id: 1) { pet { tags { name } } } }', ['QUERY_TOO_DEEP']],
      ['2 aliases', '{ a: pet(id: 1) { id } b: pet(id: 2) { id } }', []],
      ['3 aliases', '{ a: pet(id: 1) { id } b: pet(id: 2) { id } c: pet(id: 3) { id } }', ['TOO_MANY_ALIASES']],
      ['1 directive', '{ pet(id: 1) { id @include(if: true) } }', []],
      ['2 directives', '{ pet(id: 1) { id @include(if: true) name @skip(if: false) } }', ['TOO_MANY_DIRECTIVES']],
      // 2 for pet + 1.5 × (1 + 1) = 5; eight fields make 2 + 1.5 × 8 = 14; tags { name } adds 1.5 × (2 + 1.5) = 5.25
      ['cost 19.25', '{ pet(id: 1) { id name status photoUrls id name status photoUrls tags { name } } }', []],
      [
        'cost 20.75',
        '{ pet(id: 1) { id name status photoUrls id name status photoUrls id tags { name } } }',
        ['QUERY_TOO_COSTLY'],
      ],
      // `{ pets ( ids : [` and `] ) { id } }` are 12 tokens, each id one more.
      ['40 tokens', `{ pets(ids: [${ids(28).join(' ')}]) { id } }`, []],
      ['41 tokens', `{ pets(ids: [${ids(29).join(' ')}]) { id } }`, ['TOO_MANY_TOKENS']],
    ])('%s (answered alike when it comes again, from the kept validation)', async (_, query, expected) => {
      for (let round = 0; round < 2; round++) {
        const result = await strict().gql(query, {}, ALL_CREDENTIALS);

        expect(codes(result)).toEqual(expected);
        expect(result.status).toBe(expected.length === 0 ? 200 : 400);
      }
    });

    it('names the limit in the message', async () => {
      const result = await strict().gql('{ order(id: 1) { pet { tags { name } } } }', {}, ALL_CREDENTIALS);

      expect(result.errors?.map((error) => error.message)).toEqual(['Query depth limit of 3 exceeded, found 4.']);
      expect(stack.upstream()).toEqual([]);
    });
  });
});
