/**
 * What a gateway is wired to (src/gateway.ts builds the rest): both upstream areas' clients, with
 * their cache, their feed of changes and their contract sample, observed and shared with the other
 * replicas through Redis (REDIS_URL); and the upstreams one operation sees through them.
 */
import { redisSettings, upstreamClientSettings, type Config } from './config/index.js';
import type { Upstreams } from './context.js';
import { ContractSampler } from './contract/sampling.js';
import type { Observability } from './observability/index.js';
import type { RequestScope } from './observability/request-context.js';
import { createSharedState, type SharedState } from './redis/index.js';
import type { UpstreamCallBudget } from './security/fan-out.js';
import { UpstreamCache } from './upstream/cache.js';
import { MemoryCacheStore } from './upstream/cache-store.js';
import { LocalChangeFeed, type ChangeFeed } from './upstream/changes.js';
import type { UpstreamService } from './upstream/failure.js';
import type { createUpstreamClient, UpstreamClient, UpstreamClientOptions, UpstreamPool } from './upstream/http.js';
import { createPetstoreApi } from './upstream/petstore.js';
import { createPlantsApi } from './upstream/plants.js';
import { unservedArea } from './upstream/unserved.js';

const SERVICES: readonly UpstreamService[] = ['petstore', 'plants'];

/**
 * The configuration with the upstreams resolved (to their URLs or to the emulator's); an area
 * whose URL is undefined is not served (`upstream/unserved.ts`).
 */
export type GatewayConfig = Omit<Config, 'petstoreUrl' | 'plantsUrl'> & {
  petstoreUrl: string | undefined;
  plantsUrl: string | undefined;
  /** the upstreams are the embedded emulator: GraphiQL opens with its demo credentials. @default false */
  emulator?: boolean;
};

/** Connects to REDIS_URL when it is set: Redis errors counted in /metrics, each outage logged once. */
export function sharedState(config: GatewayConfig, observability: Observability): SharedState | undefined {
  const redis = redisSettings(config);
  if (redis === undefined) return undefined;
  const { logger, metrics } = observability;
  return createSharedState(redis, {
    error: (operation) => metrics?.observeRedisError(operation),
    outage: (lost, reason) =>
      lost
        ? logger.warn(
            `Redis unreachable (${reason}): cache bypassed, rate limits ` +
              `${config.rateLimitFailClosed ? 'refusing requests (RATE_LIMIT_FAIL_CLOSED)' : 'not applied'}, ` +
              'APQ documents and upstream circuits kept in this process only; reconnecting',
          )
        : logger.info('Redis reachable again: state shared again'),
  });
}

/** Both areas' upstream clients, and the upstreams one operation sees through them. */
export type GatewayUpstreams = {
  petstore: UpstreamPool;
  plants: UpstreamPool;
  /** the areas this deployment serves (those whose URL is set), as readiness checks them */
  served: readonly UpstreamService[];
  /**
   * the upstreams of one operation, through its budget of calls, for `scope` when the lane names
   * it; `record` wraps the pet store's client (a live query's run records its reads)
   */
  upstreamsFor: (
    budget: UpstreamCallBudget,
    scope?: RequestScope,
    record?: (client: UpstreamClient) => UpstreamClient,
  ) => Upstreams;
  /** what writes changed (src/upstream/changes.ts) */
  changes: ChangeFeed;
  /** the upstream cache, when UPSTREAM_CACHE is on */
  cache: UpstreamCache | undefined;
};

/**
 * The options of one area's upstream client: those of its configuration, its retries logged, its
 * calls observed, its circuit's changes logged and shown in /metrics, and shared with the other
 * replicas through Redis (with REDIS_URL).
 */
function clientOptions(
  config: GatewayConfig,
  service: UpstreamService,
  baseUrl: string,
  observability: Observability,
  shared: SharedState | undefined,
  { cache, changes }: { cache: UpstreamCache | undefined; changes: ChangeFeed },
): UpstreamClientOptions {
  const { logger, metrics } = observability;
  metrics?.observeCircuit(service, 'closed');
  return {
    ...upstreamClientSettings(config, service, baseUrl),
    cache,
    changes,
    onCache: ({ operation, result }) => metrics?.observeUpstreamCache(service, operation, result),
    onRetry: ({ operation, retry, delayMs, reason, scope }) =>
      observability.lane.logging(scope?.request, () =>
        logger.debug(`upstream ${service} ${operation}: retry ${retry} in ${delayMs} ms after ${reason}`),
      ),
    onRetryRefused: (call) => metrics?.observeRetryRefused(call),
    observer: observability.observeUpstream,
    onCircuitChange: (state) => {
      metrics?.observeCircuit(service, state);
      if (state === 'open') logger.warn(`upstream ${service}: circuit open, calls fail at once (UPSTREAM_UNAVAILABLE)`);
      else if (state === 'half-open') logger.info(`upstream ${service}: circuit half-open, the next call is a trial`);
      else logger.info(`upstream ${service}: circuit closed, calls go through again`);
    },
    news: shared?.areaNews,
  };
}

/** Builds both areas' upstream clients. */
export function createUpstreams(
  config: GatewayConfig,
  createClient: typeof createUpstreamClient,
  observability: Observability,
  shared: SharedState | undefined,
): GatewayUpstreams {
  const { logger } = observability;
  // Writes tell what they changed here, before their answer is sent; with REDIS_URL, every replica hears it.
  const local = new LocalChangeFeed((error) => logger.error(error));
  const changes = shared?.changeFeed(local, (message) => logger.warn(message)) ?? local;
  // The upstream cache (UPSTREAM_CACHE, off by default): in Redis with REDIS_URL, else in this process.
  const cache = config.upstreamCache.enabled
    ? new UpstreamCache(
        shared?.upstreamCacheStore() ??
          new MemoryCacheStore({ maxEntries: config.upstreamCacheMaxEntries, maxBytes: config.upstreamCacheMaxBytes }),
        { defaults: config.upstreamCache.defaults },
        changes,
      )
    : undefined;
  // An area without a URL is not served: its calls are refused at once, and readiness leaves it out.
  const baseUrls: Readonly<Record<UpstreamService, string | undefined>> = {
    petstore: config.petstoreUrl,
    plants: config.plantsUrl,
  };
  const area = (service: UpstreamService): UpstreamPool => {
    const baseUrl = baseUrls[service];
    if (baseUrl === undefined) return unservedArea(service);
    return createClient(service, clientOptions(config, service, baseUrl, observability, shared, { cache, changes }));
  };
  const [petstoreClient, plantsClient] = [area('petstore'), area('plants')];
  const served = SERVICES.filter((service) => baseUrls[service] !== undefined);
  // A sample of the answers is checked against the documents (UPSTREAM_CONTRACT_SAMPLE; src/contract/sampling.ts).
  const sampler = new ContractSampler({
    fraction: config.upstreamContractSample,
    log: observability.log,
    metrics: observability.metrics,
  });
  const [petstore, plants] = [sampler.wrap(petstoreClient), sampler.wrap(plantsClient)];
  // Each operation sees the upstreams through its own budget of calls (UPSTREAM_MAX_CALLS_PER_OPERATION).
  // The lane names the request each operation is for; yoga's requests find theirs ambient.
  const upstreamsFor: GatewayUpstreams['upstreamsFor'] = (budget, scope, record) => ({
    petstore: createPetstoreApi((record ?? same)(budget.limit(petstore, scope)), {
      bodyFormat: config.petstoreBodyFormat,
      accept: config.petstoreAccept,
      changes,
    }),
    plants: createPlantsApi(budget.limit(plants, scope)),
    budget,
  });
  return { petstore: petstoreClient, plants: plantsClient, served, upstreamsFor, changes, cache };
}

const same = (client: UpstreamClient) => client;
