/**
 * The context of one GraphQL request: the caller's credentials, the request's loaders and the
 * upstream areas. Created per request by yoga.
 */
import { readCredentials, type Credentials, type HeaderSource } from './credentials.js';
import { createLoaders, type Loaders } from './loaders.js';
import type { PetstoreApi } from './upstream/petstore.js';
import type { PlantsApi } from './upstream/plants.js';

/** The upstream areas, shared by all requests (they hold the connection pools). */
export type Upstreams = {
  petstore: PetstoreApi;
  plants: PlantsApi;
};

/** What every resolver receives as its context. */
export type GraphQLContext = Upstreams & {
  credentials: Credentials;
  loaders: Loaders;
};

/** Builds the context of one request. */
export function createContext(request: { headers: HeaderSource }, upstreams: Upstreams): GraphQLContext {
  const credentials = readCredentials(request.headers);
  return { ...upstreams, credentials, loaders: createLoaders(upstreams.petstore, credentials) };
}
