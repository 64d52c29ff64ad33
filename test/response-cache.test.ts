/**
 * The optional response cache (RESPONSE_CACHE_TTL_MS): repeated identical queries of one caller
 * are answered from memory; another credential, other variables, a mutation or the end of the
 * lifetime mean a fresh upstream call.
 */
import { describe, expect, it, vi } from 'vitest';
import { credentialSession } from '../src/plugins/response-cache.js';
import { loadConfig } from '../src/config/index.js';
import { fakeClock } from './helpers/clock.js';
import { ALL_CREDENTIALS, API_KEY, BEARER, expectedGet, summary, useStack } from './helpers/stack.js';

const PET = 'query ($id: ID!) { pet(id: $id) { id name status } }';
const INVENTORY = '{ inventory { entries { status quantity } } }';
/** The `placed` quantity of an inventory answer. */
const placed = (result: { data?: Record<string, unknown> | null }) =>
  (result.data?.['inventory'] as { entries: { status: string; quantity: number }[] }).entries.find(
    (entry) => entry.status === 'placed',
  )?.quantity;
const OTHER_CALLER = { authorization: 'Bearer another-callers-token', api_key: 'another-callers-key' };

describe('with RESPONSE_CACHE_TTL_MS set', () => {
  const stack = useStack({ responseCacheTtlMs: 60_000 });

  it('answers a second identical query of the same caller without an upstream call', async () => {
    const first = await stack.gql(PET, { id: '1' }, ALL_CREDENTIALS);
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/pet/1', 'api_key')]);

    const second = await stack.gql(PET, { id: '1' }, ALL_CREDENTIALS);

    expect(second).toEqual(first);
    expect(second.data).toEqual({ pet: { id: '1', name: 'Cat 1', status: 'AVAILABLE' } });
    expect(stack.upstream()).toEqual([]);
  });

  it('does not serve one caller what was fetched with another credential', async () => {
    await stack.gql(PET, { id: '1' }, ALL_CREDENTIALS);
    stack.upstream();

    const other = await stack.gql(PET, { id: '1' }, OTHER_CALLER);

    expect(other.data).toEqual({ pet: { id: '1', name: 'Cat 1', status: 'AVAILABLE' } });
    expect(stack.upstream().map(summary)).toEqual([
      {
        method: 'GET',
        path: '/api/v3/pet/1',
        query: '',
        contentType: undefined,
        authorization: undefined,
        apiKey: 'another-callers-key',
      },
    ]);
  });

  it('keeps answers per variables', async () => {
    await stack.gql(PET, { id: '1' }, ALL_CREDENTIALS);
    stack.upstream();

    const two = await stack.gql(PET, { id: '2' }, ALL_CREDENTIALS);

    expect(two.data).toEqual({ pet: { id: '2', name: 'Cat 2', status: 'AVAILABLE' } });
    expect(stack.upstream().map((request) => request.path)).toEqual(['/api/v3/pet/2']);
  });

  it('serves the same variables sent in another key order from the cache', async () => {
    const query =
      'query ($id: ID!, $status: [PetStatus!]!) { pet(id: $id) { name } petsByStatus(status: $status) { id } }';
    const first = await stack.gql(query, { id: '1', status: ['SOLD'] }, ALL_CREDENTIALS);
    expect(
      stack
        .upstream()
        .map((request) => request.path)
        .sort(),
    ).toEqual(['/api/v3/pet/1', '/api/v3/pet/findByStatus']);

    const reordered = await stack.gql(query, { status: ['SOLD'], id: '1' }, ALL_CREDENTIALS);

    expect(reordered).toEqual(first);
    expect(first.data).toEqual({ pet: { name: 'Cat 1' }, petsByStatus: [{ id: '5' }] });
    expect(stack.upstream()).toEqual([]);
  });

  it('fetches a pet again after a mutation changed it, and answers with the change', async () => {
    await stack.gql(PET, { id: '1' }, ALL_CREDENTIALS);
    const renamed = await stack.gql(
      'mutation { updatePetWithForm(id: 1, name: "Renamed") { id name } }',
      {},
      ALL_CREDENTIALS,
    );
    expect(renamed.errors).toBeUndefined();
    stack.upstream();

    const after = await stack.gql(PET, { id: '1' }, ALL_CREDENTIALS);

    expect(after.data).toEqual({ pet: { id: '1', name: 'Renamed', status: 'AVAILABLE' } });
    expect(stack.upstream().map((request) => request.path)).toEqual(['/api/v3/pet/1']);
  });

  it('fetches a list again after a pet was added, since the new pet may belong in it', async () => {
    const list = '{ petsByStatus(status: [SOLD]) { id } }';
    const before = await stack.gql(list, {}, ALL_CREDENTIALS);
    await stack.gql('mutation { addPet(input: { id: 77, name: "New", status: SOLD }) { id } }', {}, ALL_CREDENTIALS);
    stack.upstream();

    const after = await stack.gql(list, {}, ALL_CREDENTIALS);

    expect(after.data?.['petsByStatus']).toEqual([...(before.data?.['petsByStatus'] as unknown[]), { id: '77' }]);
    expect(stack.upstream().map((request) => request.path)).toEqual(['/api/v3/pet/findByStatus']);
  });

  it('fetches a pet again after it was deleted, though deletePet answers with no pet', async () => {
    await stack.gql(PET, { id: '3' }, ALL_CREDENTIALS);
    await stack.gql('mutation { deletePet(id: 3) }', {}, ALL_CREDENTIALS);
    stack.upstream();

    const after = await stack.gql(PET, { id: '3' }, ALL_CREDENTIALS);

    expect(after.data).toEqual({ pet: null });
    expect(stack.upstream().map((request) => request.path)).toEqual(['/api/v3/pet/3']);
  });

  it("counts a caller's own order in the inventory: placeOrder drops the kept inventory", async () => {
    const before = await stack.gql(INVENTORY, {}, ALL_CREDENTIALS);
    const order = await stack.gql(
      'mutation { placeOrder(input: { petId: "1", quantity: 1, status: "placed" }) { status quantity } }',
      {},
      ALL_CREDENTIALS,
    );
    expect(order).toEqual({ status: 200, data: { placeOrder: { status: 'placed', quantity: 1 } } });
    stack.upstream();

    const after = await stack.gql(INVENTORY, {}, ALL_CREDENTIALS);

    expect(placed(before)).toBe(100);
    expect(placed(after)).toBe(101);
    expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/store/inventory', 'api_key')]);
  });

  it('fetches the inventory again after a pet was added or deleted, which the inventory of a pet store counts', async () => {
    for (const write of [
      'mutation { addPet(input: { id: 78, name: "New", status: AVAILABLE }) { id } }',
      'mutation { deletePet(id: 78) }',
    ]) {
      await stack.gql(INVENTORY, {}, ALL_CREDENTIALS);
      expect((await stack.gql(write, {}, ALL_CREDENTIALS)).errors).toBeUndefined();
      stack.upstream();

      const after = await stack.gql(INVENTORY, {}, ALL_CREDENTIALS);

      expect(placed(after)).toBe(100);
      expect(stack.upstream().map(summary)).toEqual([expectedGet('/api/v3/store/inventory', 'api_key')]);
    }
  });

  it("shows a pet's new status in the lists of its old and new status", async () => {
    const list = '{ sold: petsByStatus(status: [SOLD]) { id } available: petsByStatus(status: [AVAILABLE]) { id } }';
    const before = await stack.gql(list, {}, ALL_CREDENTIALS);
    await stack.gql('mutation { updatePetWithForm(id: 1, status: SOLD) { id } }', {}, ALL_CREDENTIALS);
    stack.upstream();

    const after = await stack.gql(list, {}, ALL_CREDENTIALS);

    const ids = (result: typeof after, key: string) => (result.data?.[key] as { id: string }[]).map(({ id }) => id);
    expect(ids(before, 'available')).toContain('1');
    expect(ids(after, 'available')).not.toContain('1');
    expect(ids(after, 'sold')).toEqual([...ids(before, 'sold'), '1']);
    expect(stack.upstream().map((request) => `${request.path}?${request.query}`)).toEqual([
      '/api/v3/pet/findByStatus?status=sold',
      '/api/v3/pet/findByStatus?status=available',
    ]);
  });

  it('shows a user created after a kept answer for users', async () => {
    const query = '{ user(username: "user1") { username } }';
    await stack.gql(query, {}, ALL_CREDENTIALS);
    const created = await stack.gql(
      'mutation { createUser(input: { username: "newcomer", firstName: "New" }) { username } }',
      {},
      ALL_CREDENTIALS,
    );
    expect(created.data).toEqual({ createUser: { username: 'newcomer' } });
    stack.upstream();

    const user = await stack.gql('{ user(username: "newcomer") { username firstName } }', {}, ALL_CREDENTIALS);
    const again = await stack.gql(query, {}, ALL_CREDENTIALS);

    expect(user.data).toEqual({ user: { username: 'newcomer', firstName: 'New' } });
    expect(again.data).toEqual({ user: { username: 'user1' } });
    // The users kept were dropped with the write: both asked of the upstream again.
    expect(stack.upstream().map((request) => request.path)).toEqual(['/api/v3/user/newcomer', '/api/v3/user/user1']);
  });

  it("answers a revalidation naming the kept answer's ETag with a 304 and no body, without an upstream call", async () => {
    const first = await fetch(stack.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...ALL_CREDENTIALS },
      body: JSON.stringify({ query: PET, variables: { id: '3' } }),
    });
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^[0-9a-f]{64}$/);
    stack.upstream();

    const again = await fetch(stack.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'if-none-match': etag ?? '', ...ALL_CREDENTIALS },
      body: JSON.stringify({ query: PET, variables: { id: '3' } }),
    });

    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(stack.upstream()).toEqual([]);
  });

  it('does not keep an answer with errors', async () => {
    const anonymous = await stack.gql('{ inventory { entries { status } } }');
    expect(anonymous.errors?.[0]?.extensions?.['code']).toBeDefined();
    stack.upstream();

    await stack.gql('{ inventory { entries { status } } }');

    expect(stack.upstream().map((request) => request.path)).toEqual(['/api/v3/store/inventory']);
  });
});

describe('lifetimes', () => {
  const stack = useStack({ responseCacheTtlMs: 150, responseCacheTtlPerType: ['Inventory=0'] });

  it('fetches again once the lifetime is over', async () => {
    // The test's clock: it moves only when the test moves it, however slow the machine.
    fakeClock();
    await stack.gql(PET, { id: '1' }, ALL_CREDENTIALS);
    await stack.gql(PET, { id: '1' }, ALL_CREDENTIALS);
    expect(stack.upstream()).toHaveLength(1);
    // Within its lifetime (149 ms after it was kept), the answer is still served.
    await vi.advanceTimersByTimeAsync(149);
    await stack.gql(PET, { id: '1' }, ALL_CREDENTIALS);
    expect(stack.upstream()).toEqual([]);

    await vi.advanceTimersByTimeAsync(2);
    await stack.gql(PET, { id: '1' }, ALL_CREDENTIALS);

    expect(stack.upstream()).toHaveLength(1);
  });

  it('never keeps an answer holding a type whose lifetime is 0', async () => {
    const inventory = '{ inventory { entries { status quantity } } }';
    await stack.gql(inventory, {}, ALL_CREDENTIALS);
    await stack.gql(inventory, {}, ALL_CREDENTIALS);

    expect(stack.upstream().map((request) => request.path)).toEqual([
      '/api/v3/store/inventory',
      '/api/v3/store/inventory',
    ]);
  });
});

describe('by default', () => {
  const stack = useStack();

  it('makes the upstream call for every query', async () => {
    await stack.gql(PET, { id: '1' }, ALL_CREDENTIALS);
    await stack.gql(PET, { id: '1' }, ALL_CREDENTIALS);

    expect(stack.upstream().map((request) => request.path)).toEqual(['/api/v3/pet/1', '/api/v3/pet/1']);
  });
});

describe('the cache key', () => {
  const request = (values: Record<string, string>) => ({ headers: { get: (name: string) => values[name] ?? null } });

  it('holds a hash of the credentials, never the credentials themselves', () => {
    const session = credentialSession(request({ authorization: `Bearer ${BEARER}`, api_key: API_KEY }));

    expect(session).not.toContain(BEARER);
    expect(session).not.toContain(API_KEY);
    expect(session).not.toEqual(credentialSession(request({ authorization: `Bearer ${BEARER}` })));
    expect(session).not.toEqual(credentialSession(request({ api_key: API_KEY })));
  });

  it('is shared by callers without credentials', () => {
    expect(credentialSession(request({}))).toBeNull();
  });
});

describe('RESPONSE_CACHE_TTL_PER_TYPE', () => {
  it('stops the start with a message naming it when an entry is not Type=milliseconds', () => {
    expect(() => loadConfig([], { RESPONSE_CACHE_TTL_PER_TYPE: 'Inventory=soon' })).toThrow(
      'RESPONSE_CACHE_TTL_PER_TYPE must be a list of Type=milliseconds (e.g. Inventory=1000,Pet=30000), got "Inventory=soon"',
    );
  });
});
