/**
 * The per-request loaders (`src/loaders.ts`) over a fake pet store whose lookups count their
 * calls: one call per distinct key, null for a missing entity, a failure confined to its key,
 * priming from list results, and no cache shared between requests.
 */
import { describe, expect, it } from 'vitest';
import type { Credentials } from '../src/credentials.js';
import { createLoaders, primePets } from '../src/loaders.js';
import { type UpstreamClient } from '../src/upstream/http.js';
import { UpstreamError } from '../src/upstream/failure.js';
import type { OrderPayload, PetPayload, UserPayload } from '../src/upstream/payloads.js';
import { createPetstoreApi, type PetstoreApi } from '../src/upstream/petstore.js';

type Lookup<V> = (key: string, credentials: Credentials) => Promise<V>;

/** A pet store whose three lookups (the only operations the loaders call) are scripted and record their calls. */
function fakePetstore(
  lookups: { pet?: Lookup<PetPayload>; order?: Lookup<OrderPayload>; user?: Lookup<UserPayload> } = {},
) {
  const calls: string[] = [];
  // createLoaders takes a whole PetstoreApi; every other operation goes to a client that fails
  // the test if it is ever called.
  const unused: UpstreamClient = {
    service: 'petstore',
    request: (call) => Promise.reject(new Error(`the loaders called ${call.operation}`)),
    close: () => Promise.resolve(),
  };
  const petstore: PetstoreApi = {
    ...createPetstoreApi(unused, { bodyFormat: 'json', accept: 'json' }),
    getPetById(credentials, id) {
      calls.push(`getPetById ${id}`);
      return (lookups.pet ?? ((key) => Promise.resolve({ id: key, name: `Pet ${key}` })))(id, credentials);
    },
    getOrderById(id) {
      calls.push(`getOrderById ${id}`);
      return (lookups.order ?? ((key) => Promise.resolve({ id: key, quantity: 1 })))(id, {});
    },
    getUserByName(username) {
      calls.push(`getUserByName ${username}`);
      return (lookups.user ?? ((key) => Promise.resolve({ username: key })))(username, {});
    },
  };
  return { petstore, calls };
}

const notFound = (operation: string) =>
  new UpstreamError({ service: 'petstore', operation, failure: 'status', message: 'Pet not found', status: 404 });

describe('within one request', () => {
  it('fetches each distinct pet once, answering in the order asked', async () => {
    const { petstore, calls } = fakePetstore();
    const loaders = createLoaders(petstore, {});

    const pets = await loaders.petById.loadMany(['1', '2', '1', '3', '2']);

    expect(pets).toEqual([
      { id: '1', name: 'Pet 1' },
      { id: '2', name: 'Pet 2' },
      { id: '1', name: 'Pet 1' },
      { id: '3', name: 'Pet 3' },
      { id: '2', name: 'Pet 2' },
    ]);
    expect(calls).toEqual(['getPetById 1', 'getPetById 2', 'getPetById 3']);
  });

  it('fetches each distinct order and user once', async () => {
    const { petstore, calls } = fakePetstore();
    const loaders = createLoaders(petstore, {});

    await Promise.all([
      loaders.orderById.load('5'),
      loaders.orderById.load('5'),
      loaders.userByName.load('ann'),
      loaders.userByName.load('ann'),
      loaders.userByName.load('bo'),
    ]);

    expect(calls).toEqual(['getOrderById 5', 'getUserByName ann', 'getUserByName bo']);
  });

  it('reuses a pet already fetched by an earlier load', async () => {
    const { petstore, calls } = fakePetstore();
    const loaders = createLoaders(petstore, {});
    await loaders.petById.load('1');

    const pet = await loaders.petById.load('1');

    expect(pet).toEqual({ id: '1', name: 'Pet 1' });
    expect(calls).toEqual(['getPetById 1']);
  });

  it('calls the pet store with the credentials of the request', async () => {
    const seen: Credentials[] = [];
    const { petstore } = fakePetstore({
      pet: (id, credentials) => {
        seen.push(credentials);
        return Promise.resolve({ id });
      },
    });

    await createLoaders(petstore, { apiKey: 'key-of-ann' }).petById.load('1');

    expect(seen).toEqual([{ apiKey: 'key-of-ann' }]);
  });
});

describe('missing and failing keys', () => {
  it.each([
    ['pet', 'petById', 'getPetById'],
    ['order', 'orderById', 'getOrderById'],
    ['user', 'userByName', 'getUserByName'],
  ] as const)('a %s the upstream answers 404 for is null', async (kind, loader, operation) => {
    const { petstore, calls } = fakePetstore({ [kind]: () => Promise.reject(notFound(operation)) });
    const loaders = createLoaders(petstore, {});

    await expect(loaders[loader].load('404')).resolves.toBeNull();
    expect(calls).toEqual([`${operation} 404`]);
  });

  it('another upstream error fails only its own key, with that error', async () => {
    const failure = new UpstreamError({
      service: 'petstore',
      operation: 'getPetById',
      failure: 'status',
      message: 'There was an error processing your request',
      status: 500,
    });
    const { petstore, calls } = fakePetstore({
      pet: (id) => (id === '2' ? Promise.reject(failure) : Promise.resolve({ id })),
    });
    const loaders = createLoaders(petstore, {});

    const pets = await loaders.petById.loadMany(['1', '2', '3']);

    expect(pets).toEqual([{ id: '1' }, failure, { id: '3' }]);
    expect(pets[1]).toBe(failure);
    expect(calls).toEqual(['getPetById 1', 'getPetById 2', 'getPetById 3']);
  });

  it('a timeout is an error, not null: only a 404 answer means missing', async () => {
    const timeout = new UpstreamError({
      service: 'petstore',
      operation: 'getPetById',
      failure: 'timeout',
      message: 'petstore did not answer getPetById within 200 ms',
    });
    const { petstore } = fakePetstore({ pet: () => Promise.reject(timeout) });

    await expect(createLoaders(petstore, {}).petById.load('1')).rejects.toBe(timeout);
  });

  it('a failure that is not an Error becomes an Error without its content', async () => {
    // What is tested: a rejection that is no Error.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    const { petstore } = fakePetstore({ pet: () => Promise.reject('secret-token-in-a-string') });

    await expect(createLoaders(petstore, {}).petById.load('1')).rejects.toEqual(new Error('upstream call failed'));
  });
});

describe('primePets', () => {
  it('makes a later load of a primed pet answer from the cache, without a call', async () => {
    const { petstore, calls } = fakePetstore();
    const loaders = createLoaders(petstore, {});

    primePets(loaders, [{ id: '5', name: 'Rex' }, { name: 'a pet without an id is skipped' }]);

    await expect(loaders.petById.load('5')).resolves.toEqual({ id: '5', name: 'Rex' });
    expect(calls).toEqual([]);
  });

  it('replaces a pet already loaded, so a lookup after a change sees the new state', async () => {
    const { petstore, calls } = fakePetstore();
    const loaders = createLoaders(petstore, {});
    await loaders.petById.load('5');

    primePets(loaders, [{ id: '5', name: 'Renamed' }]);

    await expect(loaders.petById.load('5')).resolves.toEqual({ id: '5', name: 'Renamed' });
    expect(calls).toEqual(['getPetById 5']);
  });
});

describe('between requests', () => {
  it('the loaders of two requests with two credentials never share a cached pet', async () => {
    const { petstore, calls } = fakePetstore({
      pet: (id, credentials) => Promise.resolve({ id, name: `as seen by ${credentials.bearer ?? 'nobody'}` }),
    });
    const ann = createLoaders(petstore, { bearer: 'token-of-ann' });
    const bo = createLoaders(petstore, { bearer: 'token-of-bo' });

    const annSees = await ann.petById.load('1');
    const boSees = await bo.petById.load('1');

    expect([annSees, boSees]).toEqual([
      { id: '1', name: 'as seen by token-of-ann' },
      { id: '1', name: 'as seen by token-of-bo' },
    ]);
    expect(calls).toEqual(['getPetById 1', 'getPetById 1']);
  });

  it('a pet primed in one request is not seen by another', async () => {
    const { petstore, calls } = fakePetstore();
    const first = createLoaders(petstore, {});
    const second = createLoaders(petstore, {});
    primePets(first, [{ id: '1', name: 'primed in the first request' }]);

    await expect(second.petById.load('1')).resolves.toEqual({ id: '1', name: 'Pet 1' });
    expect(calls).toEqual(['getPetById 1']);
  });

  it('the loaders of two requests each fetch the order and the user', async () => {
    const { petstore, calls } = fakePetstore();
    const first = createLoaders(petstore, {});
    const second = createLoaders(petstore, {});

    await first.orderById.load('5');
    await first.userByName.load('ann');
    await second.orderById.load('5');
    await second.userByName.load('ann');

    expect(calls).toEqual(['getOrderById 5', 'getUserByName ann', 'getOrderById 5', 'getUserByName ann']);
  });
});
