/**
 * Per-request DataLoaders. They are created for each GraphQL request (never shared), so a
 * value fetched with one caller's credential is never served to another, and within a request
 * each distinct pet, order or user is fetched once, all of them concurrently (the upstream
 * pool's connection limit bounds how many calls run in parallel).
 */
import DataLoader from 'dataloader';
import type { Credentials } from './credentials.js';
import { isNotFound } from './errors.js';
import type { OrderPayload, PetPayload, UserPayload } from './upstream/payloads.js';
import type { PetstoreApi } from './upstream/petstore.js';

/** The loaders of one request. */
export type Loaders = {
  /** pet by canonical int64 id; null when the pet does not exist */
  petById: DataLoader<string, PetPayload | null>;
  /** order by canonical int64 id; null when the order does not exist */
  orderById: DataLoader<string, OrderPayload | null>;
  /** user by user name; null when the user does not exist */
  userByName: DataLoader<string, UserPayload | null>;
};

/**
 * One value or one Error per key, in key order, as the DataLoader contract asks: a missing
 * entity is null and a failed call fails only its own key.
 */
function eachKey<V>(fetch: (key: string) => Promise<V>) {
  return (keys: readonly string[]) =>
    Promise.all(keys.map((key) => fetch(key).catch((error: unknown) => (isNotFound(error) ? null : toError(error)))));
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error('upstream call failed');
}

/**
 * Creates the loaders of one request, bound to its caller's credentials. Each is made when the
 * request first uses it: most requests use one of the three, or none.
 */
export function createLoaders(
  petstore: Pick<PetstoreApi, 'getPetById' | 'getOrderById' | 'getUserByName'>,
  credentials: Credentials,
): Loaders {
  return new RequestLoaders(petstore, credentials);
}

/**
 * The loaders of one request, each made on first use. A class rather than an object literal
 * with getters: a literal's getters are closures of each call, so V8 gives every such object a
 * hidden class of its own, allocated in the old generation, and through it the request's
 * objects outlived the request until the next full collection (bench/PROFILE.md).
 */
class RequestLoaders implements Loaders {
  #petById: Loaders['petById'] | undefined;
  #orderById: Loaders['orderById'] | undefined;
  #userByName: Loaders['userByName'] | undefined;

  constructor(
    private readonly petstore: Pick<PetstoreApi, 'getPetById' | 'getOrderById' | 'getUserByName'>,
    private readonly credentials: Credentials,
  ) {}

  get petById(): Loaders['petById'] {
    return (this.#petById ??= new DataLoader(eachKey((id) => this.petstore.getPetById(this.credentials, id, true))));
  }

  get orderById(): Loaders['orderById'] {
    return (this.#orderById ??= new DataLoader(eachKey((id) => this.petstore.getOrderById(id, true))));
  }

  get userByName(): Loaders['userByName'] {
    return (this.#userByName ??= new DataLoader(eachKey((username) => this.petstore.getUserByName(username, true))));
  }
}

/** Seeds the pet loader with pets a list or a mutation returned, so later lookups in the request reuse them. */
export function primePets(loaders: Loaders, pets: readonly PetPayload[]): void {
  for (const pet of pets) if (pet.id !== undefined) loaders.petById.clear(pet.id).prime(pet.id, pet);
}
