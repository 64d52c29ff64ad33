/**
 * Orders through the gateway against the emulator: reading an order, placing one in each body
 * format (int64 ids and DateTime exact on the wire), the credentials each call carries, and the
 * order's pet (batched lookups, partial data when a pet is missing or cannot be read).
 */
import { describe, expect, it } from 'vitest';
import type { BodyFormat } from '../src/upstream/codec.js';
import { ALL_CREDENTIALS, API_KEY, expectedRequest, received, useStack } from './helpers/stack.js';
import { ENFORCES_CREDENTIALS, UPSTREAM } from './helpers/upstream.js';

const MAX_INT64 = '9223372036854775807';

const PLACE_ORDER =
  'mutation ($input: OrderInput!) { placeOrder(input: $input) { id petId quantity shipDate status complete } }';

const stack = useStack();

describe('order(id)', () => {
  it('returns the order with its ship date as an ISO UTC DateTime', async () => {
    const result = await stack.gql(
      '{ order(id: 1) { id petId quantity shipDate status complete } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result).toEqual({
      status: 200,
      data: {
        order: {
          id: '1',
          petId: '1',
          quantity: 100,
          shipDate: '2025-01-01T00:00:00.000Z',
          status: 'placed',
          complete: true,
        },
      },
    });
  });

  it('sends GET /store/order/{orderId} without forwarding any credential', async () => {
    await stack.gql('{ order(id: 2) { id } }', {}, ALL_CREDENTIALS);

    expect(received(stack)).toEqual([{ ...expectedRequest('GET', '/api/v3/store/order/2', 'none'), body: '' }]);
  });

  it('is null, without an error, when the order does not exist', async () => {
    const result = await stack.gql('{ order(id: 404404) { id } }', {}, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { order: null } });
    expect(received(stack).map((request) => [request.method, request.path])).toEqual([
      ['GET', '/api/v3/store/order/404404'],
    ]);
  });

  it.each([['abc'], ['1.5'], ['9223372036854775808'], ['1/../2'], ['']])(
    'rejects the id %j with BAD_USER_INPUT before any upstream call',
    async (id) => {
      const result = await stack.gql('query ($id: ID!) { order(id: $id) { id } }', { id }, ALL_CREDENTIALS);

      expect(result.data).toEqual({ order: null });
      expect(result.errors?.map((error) => [error.path, error.extensions?.['code']])).toEqual([
        [['order'], 'BAD_USER_INPUT'],
      ]);
      expect(stack.upstream()).toEqual([]);
    },
  );
});

/** The order of the placeOrder tests, and the exact body each format must carry upstream. */
const ORDER_INPUT = {
  id: '42',
  petId: MAX_INT64,
  quantity: 3,
  shipDate: '2025-03-20T12:00:00+01:00',
  status: 'approved',
  complete: false,
};

/** An ISO 8601 UTC DateTime (`2025-03-20T11:00:00.000Z`) from `from` to `to`, in epoch milliseconds, both included. */
function utcTimeBetween(from: number, to: number): unknown {
  return expect.toSatisfy(
    (value: unknown) =>
      typeof value === 'string' &&
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) &&
      Date.parse(value) >= from &&
      Date.parse(value) <= to,
    `an ISO UTC DateTime from ${new Date(from).toISOString()} to ${new Date(to).toISOString()}`,
  );
}

const ORDER_BODIES: Record<BodyFormat, { contentType: string; body: string }> = {
  json: {
    contentType: 'application/json',
    body: `{"id":42,"petId":${MAX_INT64},"quantity":3,"shipDate":"2025-03-20T11:00:00.000Z","status":"approved","complete":false}`,
  },
  xml: {
    contentType: 'application/xml',
    body:
      '<?xml version="1.0" encoding="UTF-8"?><order><id>42</id>' +
      `<petId>${MAX_INT64}</petId><quantity>3</quantity><shipDate>2025-03-20T11:00:00.000Z</shipDate>` +
      '<status>approved</status><complete>false</complete></order>',
  },
  form: {
    contentType: 'application/x-www-form-urlencoded',
    body: `id=42&petId=${MAX_INT64}&quantity=3&shipDate=2025-03-20T11%3A00%3A00.000Z&status=approved&complete=false`,
  },
};

describe.each(['json', 'xml', 'form'] as const)('placeOrder with %s bodies', (format) => {
  const stack = useStack({ petstoreBodyFormat: format });

  /**
   * The ship date the pet store stores for ORDER_INPUT placed between `from` and `to`: the one
   * sent, except that the reference server ignores a form-encoded order's shipDate and stores
   * the time it placed the order instead.
   */
  const storedShipDate = (from: number, to: number): unknown =>
    UPSTREAM === 'reference' && format === 'form' ? utcTimeBetween(from, to) : '2025-03-20T11:00:00.000Z';

  it('returns the placed order, the int64 petId exact and the ship date normalised to UTC', async () => {
    const before = Date.now();
    const result = await stack.gql(PLACE_ORDER, { input: ORDER_INPUT }, ALL_CREDENTIALS);
    const after = Date.now();

    expect(result).toEqual({
      status: 200,
      data: {
        placeOrder: {
          id: '42',
          petId: MAX_INT64,
          quantity: 3,
          shipDate: storedShipDate(before, after),
          status: 'approved',
          complete: false,
        },
      },
    });
  });

  it(`sends POST /store/order with the exact ${format} body and no credential`, async () => {
    await stack.gql(PLACE_ORDER, { input: ORDER_INPUT }, ALL_CREDENTIALS);

    expect(received(stack)).toEqual([
      {
        method: 'POST',
        path: '/api/v3/store/order',
        query: '',
        authorization: undefined,
        apiKey: undefined,
        ...ORDER_BODIES[format],
      },
    ]);
  });

  it('stores the order so that order(id) reads it back', async () => {
    const before = Date.now();
    await stack.gql(PLACE_ORDER, { input: ORDER_INPUT }, ALL_CREDENTIALS);
    const after = Date.now();
    stack.upstream();

    const result = await stack.gql('{ order(id: 42) { petId shipDate status complete } }', {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({
      order: { petId: MAX_INT64, shipDate: storedShipDate(before, after), status: 'approved', complete: false },
    });
    expect(received(stack).map((request) => [request.method, request.path])).toEqual([
      ['GET', '/api/v3/store/order/42'],
    ]);
  });
});

describe('placeOrder input checks', () => {
  it.each([
    [
      'a literal that is not a date',
      'mutation { placeOrder(input: { petId: 1, shipDate: "20 March 2025" }) { id } }',
      {},
    ],
    ['a variable without a time zone', PLACE_ORDER, { input: { petId: '1', shipDate: '2025-03-20T12:00:00' } }],
    ['a variable with an impossible date', PLACE_ORDER, { input: { petId: '1', shipDate: '2025-02-30T12:00:00Z' } }],
  ])('rejects %s as shipDate with BAD_USER_INPUT before any upstream call', async (_, query, variables) => {
    const result = await stack.gql(query, variables, ALL_CREDENTIALS);

    expect(result.data).toBeUndefined();
    expect(result.errors?.map((error) => error.extensions?.['code'])).toEqual(['BAD_USER_INPUT']);
    expect(result.errors?.[0]?.message).toMatch(/DateTime must be an ISO 8601 date-time with a time zone/);
    expect(stack.upstream()).toEqual([]);
  });

  it('rejects a petId outside int64 with BAD_USER_INPUT before any upstream call', async () => {
    const result = await stack.gql(PLACE_ORDER, { input: { petId: '9223372036854775808' } }, ALL_CREDENTIALS);

    expect(result.data).toBeNull();
    expect(result.errors?.map((error) => [error.path, error.extensions?.['code']])).toEqual([
      [['placeOrder'], 'BAD_USER_INPUT'],
    ]);
    expect(stack.upstream()).toEqual([]);
  });
});

describe('Order.pet', () => {
  /** Places orders 201… for the given pets, then forgets the calls that made them. */
  async function placeOrdersFor(petIds: readonly string[]): Promise<string[]> {
    const orderIds = petIds.map((_, index) => String(201 + index));
    const mutation = `mutation { ${petIds.map((petId, index) => `p${index}: placeOrder(input: { id: ${orderIds[index]}, petId: ${petId}, quantity: 1 }) { id }`).join(' ')} }`;
    const placed = await stack.gql(mutation, {}, ALL_CREDENTIALS);
    expect(placed.errors).toBeUndefined();
    stack.upstream();
    return orderIds;
  }

  it("returns each order's pet, fetching each distinct pet once, with the api_key only", async () => {
    const orderIds = await placeOrdersFor(['1', '2', '3', '1', '2', '3']);

    const result = await stack.gql(
      `{ ${orderIds.map((id, index) => `o${index + 1}: order(id: ${id}) { id pet { name } }`).join(' ')} }`,
      {},
      ALL_CREDENTIALS,
    );

    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      o1: { id: '201', pet: { name: 'Cat 1' } },
      o2: { id: '202', pet: { name: 'Cat 2' } },
      o3: { id: '203', pet: { name: 'Cat 3' } },
      o4: { id: '204', pet: { name: 'Cat 1' } },
      o5: { id: '205', pet: { name: 'Cat 2' } },
      o6: { id: '206', pet: { name: 'Cat 3' } },
    });
    const noCredential = {
      method: 'GET',
      query: '',
      contentType: undefined,
      authorization: undefined,
      apiKey: undefined,
      body: '',
    };
    const apiKeyOnly = { ...noCredential, apiKey: API_KEY };
    expect(received(stack).sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { ...apiKeyOnly, path: '/api/v3/pet/1' },
      { ...apiKeyOnly, path: '/api/v3/pet/2' },
      { ...apiKeyOnly, path: '/api/v3/pet/3' },
      ...orderIds.map((id) => ({ ...noCredential, path: `/api/v3/store/order/${id}` })),
    ]);
  });

  it('is null, without an error, when the ordered pet does not exist', async () => {
    const [orderId] = await placeOrdersFor(['404404']);

    const result = await stack.gql(`{ order(id: ${orderId}) { id petId pet { name } } }`, {}, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { order: { id: '201', petId: '404404', pet: null } } });
    expect(received(stack).map((request) => [request.method, request.path, request.apiKey])).toEqual([
      ['GET', '/api/v3/store/order/201', undefined],
      ['GET', '/api/v3/pet/404404', API_KEY],
    ]);
  });

  it('is null, without a pet lookup, when the order names no pet (the reference server names pet 0 instead)', async () => {
    await stack.gql('mutation { placeOrder(input: { id: 301, quantity: 1 }) { id } }', {}, ALL_CREDENTIALS);
    stack.upstream();

    const result = await stack.gql('{ order(id: 301) { id petId pet { name } } }', {}, ALL_CREDENTIALS);

    // The reference server's Order has a primitive petId: left out, it is stored as 0, a pet that
    // does not exist, so the pet is looked up and is null. The emulator keeps the order without one.
    const storedPetId = UPSTREAM === 'reference' ? '0' : null;
    expect(result).toEqual({ status: 200, data: { order: { id: '301', petId: storedPetId, pet: null } } });
    const orderLookup = ['GET', '/api/v3/store/order/301'];
    expect(received(stack).map((request) => [request.method, request.path])).toEqual(
      storedPetId === null ? [orderLookup] : [orderLookup, ['GET', `/api/v3/pet/${storedPetId}`]],
    );
  });

  it("forwards no credential to the order's pet lookup when the client sends none", async () => {
    await stack.gql('{ first: order(id: 1) { id status pet { name } } }', {}, {});

    expect(
      received(stack).map((request) => [request.method, request.path, request.authorization, request.apiKey]),
    ).toEqual([
      ['GET', '/api/v3/store/order/1', undefined, undefined],
      ['GET', '/api/v3/pet/1', undefined, undefined],
    ]);
  });

  // The reference server checks no credential: there the pet is read.
  it.runIf(ENFORCES_CREDENTIALS)(
    'keeps the order and reports an UNAUTHENTICATED error at its pet when the pet cannot be read',
    async () => {
      // No credential: the order is public, GET /pet/{petId} is refused with 401.
      const result = await stack.gql('{ first: order(id: 1) { id status pet { name } } }', {}, {});

      expect(result.data).toEqual({ first: { id: '1', status: 'placed', pet: null } });
      expect(result.errors).toHaveLength(1);
      expect(result.errors?.[0]?.path).toEqual(['first', 'pet']);
      expect(result.errors?.[0]?.extensions).toEqual({
        code: 'UNAUTHENTICATED',
        upstream: { service: 'petstore', operation: 'getPetById', status: 401 },
      });
      expect(
        received(stack).map((request) => [request.method, request.path, request.authorization, request.apiKey]),
      ).toEqual([
        ['GET', '/api/v3/store/order/1', undefined, undefined],
        ['GET', '/api/v3/pet/1', undefined, undefined],
      ]);
    },
  );
});
