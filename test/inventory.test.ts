/**
 * Inventory through the gateway against the emulator: quantities by order status, sorted, and
 * the api_key that GET /store/inventory needs (and nothing else).
 */
import { describe, expect, it } from 'vitest';
import { ALL_CREDENTIALS, BEARER, expectedRequest, received, useStack } from './helpers/stack.js';
import { ENFORCES_CREDENTIALS } from './helpers/upstream.js';

const INVENTORY = '{ inventory { entries { status quantity } } }';

const stack = useStack();

/** The seeded orders' quantities by status. */
const SEEDED = { approved: 50, delivered: 50, placed: 100 };

/** Inventory entries as the graph lists them: one per status, sorted by status. */
function entriesOf(quantities: Record<string, number>) {
  return Object.entries(quantities)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, quantity]) => ({ status, quantity }));
}

describe('inventory', () => {
  it('lists the quantity of the seeded orders by status, sorted by status', async () => {
    const result = await stack.gql(INVENTORY, {}, ALL_CREDENTIALS);

    expect(result).toEqual({
      status: 200,
      data: {
        inventory: {
          entries: [
            { status: 'approved', quantity: 50 },
            { status: 'delivered', quantity: 50 },
            { status: 'placed', quantity: 100 },
          ],
        },
      },
    });
  });

  it('sends GET /store/inventory with the api_key and withholds the bearer token', async () => {
    await stack.gql(INVENTORY, {}, ALL_CREDENTIALS);

    expect(received(stack)).toEqual([{ ...expectedRequest('GET', '/api/v3/store/inventory', 'api_key'), body: '' }]);
  });

  it('forwards neither an api_key nor the bearer token when the client sends only a bearer token', async () => {
    await stack.gql(INVENTORY, {}, { authorization: `Bearer ${BEARER}` });

    expect(received(stack)).toEqual([{ ...expectedRequest('GET', '/api/v3/store/inventory', 'none'), body: '' }]);
  });

  // The reference server checks no credential: there the inventory is served.
  it.runIf(ENFORCES_CREDENTIALS)(
    'is UNAUTHENTICATED without an api_key, even with a bearer token, which is not forwarded',
    async () => {
      const result = await stack.gql(INVENTORY, {}, { authorization: `Bearer ${BEARER}` });

      expect(result.data).toBeNull();
      expect(result.errors).toHaveLength(1);
      expect(result.errors?.[0]?.path).toEqual(['inventory']);
      expect(result.errors?.[0]?.extensions).toEqual({
        code: 'UNAUTHENTICATED',
        upstream: { service: 'petstore', operation: 'getInventory', status: 401 },
      });
      expect(received(stack)).toEqual([{ ...expectedRequest('GET', '/api/v3/store/inventory', 'none'), body: '' }]);
    },
  );

  it.each([
    {
      change: 'adds an entry for the status of',
      order: '{ id: 77, petId: 1, quantity: 7, status: "shipped" }',
      entries: entriesOf({ ...SEEDED, shipped: 7 }),
    },
    {
      change: 'adds to its status the quantity of',
      order: '{ id: 78, petId: 2, quantity: 5, status: "approved" }',
      entries: entriesOf({ ...SEEDED, approved: 55 }),
    },
  ])('$change a newly placed order', async ({ order, entries }) => {
    const placed = await stack.gql(`mutation { placeOrder(input: ${order}) { id } }`, {}, ALL_CREDENTIALS);
    expect(placed.errors).toBeUndefined();
    stack.upstream();

    const result = await stack.gql(INVENTORY, {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ inventory: { entries } });
    expect(received(stack).map((request) => [request.method, request.path])).toEqual([
      ['GET', '/api/v3/store/inventory'],
    ]);
  });
});
