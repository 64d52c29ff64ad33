/**
 * The context of one GraphQL request: the caller's credentials, the request's loaders and the
 * upstream areas. Made for each operation by {@link useGraphQLContext}.
 */
import type { Plugin } from 'graphql-yoga';
import { readCredentials, type Credentials, type HeaderSource } from './credentials.js';
import { createLoaders, type Loaders } from './loaders.js';
import type { UpstreamCallBudget } from './security/fan-out.js';
import type { PetstoreApi } from './upstream/petstore.js';
import type { PlantsApi } from './upstream/plants.js';

/** The upstream areas, shared by all requests (they hold the connection pools), as one operation sees them. */
export type Upstreams = {
  petstore: PetstoreApi;
  plants: PlantsApi;
  /** the operation's budget of upstream calls (UPSTREAM_MAX_CALLS_PER_OPERATION): demand control reads the calls made */
  budget?: UpstreamCallBudget;
};

/** What every resolver receives as its context. */
export type GraphQLContext = Upstreams & {
  credentials: Credentials;
  loaders: Loaders;
};

/** Builds the context of one request. */
export function createContext(request: { headers: HeaderSource }, upstreams: Upstreams): GraphQLContext {
  const credentials = readCredentials(request.headers);
  const { petstore, plants, budget } = upstreams;
  return { petstore, plants, budget, credentials, loaders: createLoaders(petstore, credentials) };
}

/** yoga's initial context of an operation, as far as the GraphQL context is made from it. */
type InitialContext = { request: { headers: HeaderSource } };

/**
 * The yoga plugin that makes each operation's GraphQL context, through `make`: yoga's initial
 * context (its request, its parameters) is extended in place when yoga's envelop is made for the
 * operation (`onEnveloped`, on both HTTP paths and for WebSocket operations). Not through yoga's
 * `context` option: that is an `onContextBuilding` hook, and envelop runs those through chains
 * of promise stand-ins that cost each request more than the context itself (docs/architecture.md,
 * "One request pipeline"). A context is so made before its document is parsed; its loaders are
 * made when first used.
 */
export function useGraphQLContext(make: (initial: InitialContext) => GraphQLContext): Plugin {
  return {
    onEnveloped({ context, extendContext }) {
      // envelop is also made without a request (for its schema): there is no operation to serve then.
      const initial = context as Partial<InitialContext> | undefined;
      if (initial?.request !== undefined) extendContext(make(initial as InitialContext) as never);
    },
  };
}
