/**
 * The gateway: a yoga instance wired to the upstream areas. It never listens (`main.ts` does),
 * so tests build their own.
 */
import { printSchema, type GraphQLSchema } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { named, type NamedPlugin } from './plugins/named.js';
import { createUpstreams, sharedState, type GatewayConfig, type GatewayUpstreams } from './gateway-upstreams.js';
import { ConfigError } from './config/index.js';
import { createContext, useGraphQLContext, type GraphQLContext } from './context.js';
import { credentialSecrets } from './secrets.js';
import { usePersistedQueries } from './plugins/persisted-queries.js';
import { checkTtlPerType, responseCachePlugins } from './plugins/response-cache.js';
import { maskError } from './errors.js';
import { useAnswerCompression } from './plugins/compression.js';
import { createHttpHandler, type HttpHandler, type LaneOptions } from './http/lane.js';
import type { YogaOptions } from './http/plugin-table.js';
import { useEntryPages } from './plugins/entry-pages.js';
import { useExplain } from './plugins/explain.js';
import {
  deferStreamValidation,
  maskedOperationParts,
  refuseUnacceptedStreams,
  useIncrementalDelivery,
  type IncrementalDeliveryOptions,
} from './plugins/incremental-delivery.js';
import { useUpstreamCacheNotice } from './plugins/upstream-cache-notice.js';
import { graphiqlOptions, graphiqlPages } from './plugins/graphiql.js';
import { useOperationsEndpoints } from './observability/endpoints.js';
import { checkReadiness } from './observability/health.js';
import { createObservability, type Observability, type ObservabilityDependencies } from './observability/index.js';
import { logFailure } from './observability/yoga-logger.js';
import { createSchema } from './schema.js';
import type { SharedRedis, SharedState } from './redis/index.js';
import { createSecurity, type Security } from './security/index.js';
import type { RateLimitStore } from './security/rate-limit.js';
import { useStreamingUploads } from './plugins/uploads.js';
import { createUpstreamClient } from './upstream/http.js';
import type { ChangeFeed } from './upstream/changes.js';
import { createLoaders } from './loaders.js';
import { LiveQueries, withLiveDirective } from './live/index.js';
import { loadTools, type McpTool } from './mcp/tools.js';
import { useMcp, type GraphQLServer } from './mcp/plugin.js';

export type { GatewayConfig } from './gateway-upstreams.js';

/** A gateway: its node:http request listener, the yoga instance behind it, and how to release its upstream pools. */
export type Gateway = {
  /** what a node:http server serves: the lean lane for plain GraphQL requests, yoga for the rest (src/http/lane.ts) */
  handler: HttpHandler;
  /**
   * why yoga serves every request: each plugin, request hook or option of yoga's that the front's
   * table does not cover (src/http/plugin-table.ts); empty, the lane serves plain GraphQL requests
   */
  yogaOnly: readonly string[];
  /** yoga with every plugin: serves what the lane does not, and can be called with Fetch requests */
  yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>;
  /** closes the upstream connection pools; in-flight calls finish first */
  close(): Promise<void>;
  /** the Redis connection, with REDIS_URL: its status for the start-up lines */
  redis?: SharedRedis | undefined;
  /** what writes through this gateway changed upstream (src/upstream/changes.ts): the upstream cache and live queries listen */
  changes: ChangeFeed;
  /** live queries, with LIVE_QUERIES (src/live/): the server serves their WebSocket and ends them when it stops */
  live?: GatewayLive | undefined;
};

/** Live queries as a server sees them. */
type GatewayLive = {
  queries: LiveQueries;
  /** serves the graphql-ws WebSocket transport on `server`'s `/graphql` */
  attach(server: import('node:http').Server): void;
};

/** What the gateway is built with besides its configuration; tests and the benchmark replace parts. */
export type GatewayDependencies = ObservabilityDependencies & {
  /**
   * Builds the client of one upstream area. The benchmark's framework ceiling passes one that
   * answers from memory, so the whole stack runs without an upstream call.
   * @default createUpstreamClient (an undici pool per area)
   */
  createUpstreamClient?: typeof createUpstreamClient;
  /** where the rate-limit buckets live without REDIS_URL. @default in this process (a cluster worker: in the primary) */
  rateLimitStore?: RateLimitStore;
};

/** What the gateway's yoga and its lane are built from, once the configuration has passed its checks. */
type GatewayParts = {
  observability: Observability;
  shared: SharedState | undefined;
  security: Security;
  schema: GraphQLSchema;
  upstreams: GatewayUpstreams;
  live: LiveQueries | undefined;
  /** the MCP tools, with MCP (src/mcp/) */
  mcpTools: McpTool[] | undefined;
};

/** Builds the gateway for a configuration. */
export function createGateway(config: GatewayConfig, dependencies: GatewayDependencies = {}): Gateway {
  // The log, metrics, traces, /metrics and /readiness (src/observability/).
  const observability = createObservability(config, dependencies);
  // What replicas share through Redis, with REDIS_URL (src/redis/).
  const shared = sharedState(config, observability);
  const { security, schema } = securedSchema(config, dependencies, observability, shared);
  const mcpTools = config.mcp ? mcpToolsOf(config, schema, security, { observability, shared }) : undefined;
  const upstreams = createUpstreams(
    config,
    dependencies.createUpstreamClient ?? createUpstreamClient,
    observability,
    shared,
  );
  const live = config.liveQueries ? createLive(config, observability, security, upstreams) : undefined;
  const parts: GatewayParts = { observability, shared, security, schema, upstreams, live, mcpTools };
  const built = createGatewayYoga(config, parts);
  const { yoga } = built;
  const { handler, yogaOnly } = createHttpHandler(laneOptions(config, parts, built));

  return {
    handler,
    yoga,
    yogaOnly,
    redis: shared?.redis,
    changes: upstreams.changes,
    live: live && {
      queries: live,
      attach: (server) => {
        // The WebSocket runs no request hook of yoga's: the parts of its streamed answers are masked here.
        const masking = incrementalDelivery(observability);
        live.attach(server, {
          yoga,
          path: '/graphql',
          maxPayloadBytes: config.requestMaxBytes,
          rateLimiter: security.rateLimiter,
          trustedDocumentsOnly: config.trustedDocuments !== undefined,
          maskParts: (stream, args) => maskedOperationParts(stream, args, masking),
        });
      },
    },
    close: async () => {
      upstreams.cache?.close();
      await live?.close();
      await Promise.all([
        upstreams.petstore.close(),
        upstreams.plants.close(),
        observability.close(),
        shared?.redis.close(),
      ]);
    },
  };
}

/**
 * The security of the configuration and the schema it wraps; what was opened before is closed
 * when either fails.
 */
function securedSchema(
  config: GatewayConfig,
  dependencies: GatewayDependencies,
  observability: Observability,
  shared: SharedState | undefined,
): { security: Security; schema: GraphQLSchema } {
  // Limits, CSRF, CORS, rate limits, trusted documents (src/security/). A bad manifest stops here.
  try {
    const security = createSecurity(config, {
      maxFiles: config.uploadMaxFiles,
      rateLimitStore: shared?.rateLimitStore ?? dependencies.rateLimitStore,
      costBudgetStore: shared?.costBudgetStore,
      observeCost:
        observability.metrics &&
        ((estimated, actual) => observability.metrics?.observeOperationCost(estimated, actual)),
      // @defer and @stream's rules, kept with each document's validation, and their refusal to a
      // client that takes no stream (src/plugins/incremental-delivery.ts).
      validationHooks: [deferStreamValidation()],
      validationChecks: [refuseUnacceptedStreams],
      secretsOf: requestSecrets(observability),
    });
    // `@live` is a directive of the schema only while live queries are on: off, a live query is refused as invalid.
    const schema = security.schema(config.liveQueries ? withLiveDirective(createSchema()) : createSchema());
    // A misspelt type in RESPONSE_CACHE_TTL_PER_TYPE would silently cache nothing: refused at start.
    checkTtlPerType(config.responseCacheTtlPerType, schema);
    return { security, schema };
  } catch (error) {
    void shared?.redis.close();
    void observability.close();
    throw error;
  }
}

/**
 * Live queries (LIVE_QUERIES): each run of a live query gets fresh upstream clients, loaders and
 * call budget, its reads recorded for the poller; the first keeps its request's scope (log,
 * metrics, traces), a later run, started by a change rather than by a request, has none.
 */
function createLive(
  config: GatewayConfig,
  observability: Observability,
  security: Security,
  upstreams: GatewayUpstreams,
): LiveQueries {
  const { metrics } = observability;
  return new LiveQueries({
    maxTotal: config.liveQueriesMax,
    maxPerClient: config.liveQueriesPerClientMax,
    trustProxyHops: config.trustProxyHops,
    changes: upstreams.changes,
    poll: {
      intervalMs: config.livePollIntervalMs,
      maxPerSecond: config.livePollMaxPerSecond,
      baseUrls: { petstore: config.petstoreUrl, plants: config.plantsUrl },
      timeoutMs: config.upstreamTimeouts.petstore.totalMs,
      // An area the gateway does not call now (its circuit open) is not polled either.
      held: (service) => upstreams[service].standing?.().circuit === 'open',
    },
    observe: metrics && ((event) => metrics.observeLive(event)),
    renew: (context, recorder, first) => {
      const scope = first ? observability.lane.scopes.scopeOf(context) : undefined;
      const renewed = upstreams.upstreamsFor(security.budget(), scope, (client) => recorder.wrap(client));
      Object.assign(context, renewed, { loaders: createLoaders(renewed.petstore, context.credentials) });
    },
  });
}

/**
 * The MCP tools (MCP_OPERATIONS, MCP_MUTATIONS), checked against the schema (and, with
 * TRUSTED_DOCUMENTS, found in its manifest): one that cannot be a tool stops the start, and what
 * was opened before is closed.
 */
function mcpToolsOf(
  config: GatewayConfig,
  schema: GraphQLSchema,
  security: Security,
  { observability, shared }: { observability: Observability; shared: SharedState | undefined },
): McpTool[] {
  try {
    const { mcpOperations: folder, mcpMutations: mutations } = config;
    return loadTools(schema, { folder, mutations, trusted: security.trustedDocuments });
  } catch (error) {
    void shared?.redis.close();
    void observability.close();
    throw new ConfigError(`MCP_OPERATIONS: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * yoga, the options it was created with and the plugins the gateway gave it, by name: the lane
 * reads them against its table (src/http/plugin-table.ts).
 */
type GatewayYoga = {
  yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>;
  options: YogaOptions;
  plugins: NamedPlugin[];
};

/** Builds yoga with every plugin, in the order they must run. */
function createGatewayYoga(config: GatewayConfig, parts: GatewayParts): GatewayYoga {
  const { observability, security, schema } = parts;
  // GraphiQL with its assets inlined: the page needs no CDN, so it works offline. Those assets
  // are about 50 MB of memory and half a second of start-up: loaded when a browser first asks.
  // The page is rendered and compressed once, and sent with an ETag (src/plugins/graphiql.ts).
  const graphiql = graphiqlPages(async (options) =>
    (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
  );
  // The MCP endpoint calls the yoga it is a plugin of: known once built, below.
  const built: { yoga?: GatewayYoga['yoga'] } = {};
  const self = () => {
    if (built.yoga === undefined) throw new Error('yoga is not built yet');
    return built.yoga;
  };
  const plugins = gatewayPlugins(config, parts, graphiql.plugin, self);
  const options: YogaOptions = {
    schema,
    maskedErrors: { maskError },
    // Its document cache stays; validation results are kept by useValidationRules (src/security/query-limits.ts).
    parserAndValidationCache: { validationCache: false },
    // GraphiQL, CORS, batching and the body limit, as configured.
    ...security.yogaOptions,
    renderGraphiQL: graphiql.render,
    // Example operations for every area; demo credentials only on the embedded emulator; the
    // explain header when EXPLAIN is on.
    graphiql: config.graphiql
      ? graphiql.options(graphiqlOptions({ emulator: config.emulator ?? false, explain: config.explain }))
      : false,
    // Uploads are parsed by useStreamingUploads, which streams files instead of buffering them.
    multipart: false,
    // yoga's landing page names its version; `/` has a page of ours (src/plugins/entry-pages.ts).
    landingPage: false,
    plugins: plugins.map(({ plugin }) => plugin),
    // Expected failures (upstream 4xx, bad input) log one line; unexpected ones keep their stack, server-side.
    logging: observability.logger,
  };
  const yoga = createYoga<Record<string, unknown>, GraphQLContext>(options);
  built.yoga = yoga;
  return { yoga, options, plugins };
}

/** The gateway's yoga plugins, in the order they must run, each under its name in the front's table. */
function gatewayPlugins(
  config: GatewayConfig,
  { observability, shared, security, schema, upstreams, live, mcpTools }: GatewayParts,
  graphiqlPlugin: Plugin,
  self: () => GraphQLServer,
): NamedPlugin[] {
  return [
    // Each operation's GraphQL context: its upstream clients make their calls for its request (their
    // log, metrics and spans), within its call budget (src/context.ts).
    ...named(
      'graphql-context',
      useGraphQLContext((initial) =>
        createContext(
          initial.request,
          upstreams.upstreamsFor(security.budget(), observability.lane.scopes.scopeOf(initial)),
        ),
      ),
    ),
    // First: a browser's visit is answered before the CSRF check refuses it.
    ...named('entry-pages', useEntryPages({ endpoint: '/graphql', graphiql: config.graphiql })),
    // `/mcp` (MCP): each tool call runs its operation through this same yoga.
    ...(mcpTools ? named('mcp', mcpPlugin(config, { schema, observability }, mcpTools, self)) : []),
    ...named('uploads', useStreamingUploads({ maxFileBytes: config.uploadMaxBytes, maxFiles: config.uploadMaxFiles })),
    ...security.plugins,
    // @defer and @stream, their parts' errors masked (src/plugins/incremental-delivery.ts).
    ...named('incremental-delivery', useIncrementalDelivery(incrementalDelivery(observability))),
    // Apollo's automatic persisted queries, unless trusted documents replace them (src/plugins/persisted-queries.ts).
    ...(config.trustedDocuments === undefined
      ? named(
          'persisted-queries',
          usePersistedQueries({ enabled: config.apq, maxDocuments: config.apqMaxDocuments, shared: shared?.apqStore }),
        )
      : []),
    // Off unless RESPONSE_CACHE_TTL_MS is set (src/plugins/response-cache.ts).
    ...named(
      'response-cache',
      responseCachePlugins({
        ttlMs: config.responseCacheTtlMs,
        ttlPerType: config.responseCacheTtlPerType,
        cache: shared?.responseCache,
      }),
    ),
    // GraphiQL's page and large answers compressed for clients that ask (as the lane does): before
    // the observability plugin, which then logs the status sent (a 304 for a current page).
    ...named('graphiql', graphiqlPlugin),
    ...named('compression', useAnswerCompression({ minBytes: config.responseCompressionMinBytes })),
    // `x-gateway-explain: 1` gets extensions.upstream (EXPLAIN; src/plugins/explain.ts): after the
    // response cache has kept the result, before the observer logs it.
    ...(config.explain ? named('explain', useExplain(observability.lane.scopes)) : []),
    // extensions.upstreamCache when part of an answer was served stale (src/plugins/upstream-cache-notice.ts).
    ...(config.upstreamCache.enabled
      ? named('upstream-cache-notice', useUpstreamCacheNotice(observability.lane.scopes))
      : []),
    // Last: it logs and counts results and responses as they leave, every error with its final
    // code; its instrumentation still wraps the whole request, refused ones included. Then
    // /metrics and /readiness, the latter asked through each area's own pool.
    ...named('observability', observability.plugin),
    // `@live` queries (LIVE_QUERIES; src/live/): after the observer, whose execution it runs again on each change.
    ...(live ? named('live-queries', live.plugin as Plugin) : []),
    ...named(
      'operations-endpoints',
      useOperationsEndpoints({
        metrics: observability.metrics,
        readiness: () =>
          // The areas this deployment serves only: one it does not serve is neither ready nor not.
          checkReadiness(
            upstreams.served.map((service) => upstreams[service]),
            config.readinessTimeoutMs,
            {
              redis: shared?.redis,
              redisRequired: config.redisRequired,
            },
          ),
      }),
    ),
  ];
}

/** `/mcp` (MCP): each tool call runs its operation through the gateway's own yoga, `self` (src/mcp/). */
function mcpPlugin(
  config: GatewayConfig,
  { schema, observability }: Pick<GatewayParts, 'schema' | 'observability'>,
  tools: McpTool[],
  self: () => GraphQLServer,
): Plugin {
  const { metrics } = observability;
  return useMcp({
    tools,
    yoga: self,
    corsOrigins: config.corsOrigins,
    maxBodyBytes: config.requestMaxBytes,
    authorizationServers: config.mcpAuthorizationServers,
    // The schema as a resource follows INTROSPECTION: off, an agent sees no more than a GraphQL client.
    schemaSdl: config.introspection ? printSchema(schema) : undefined,
    observe: metrics && ((tool, outcome) => metrics.observeMcpToolCall(tool, outcome)),
  });
}

/**
 * The secrets of a request being served, as its record gathered them (its credentials, the
 * passwords of its variables and document); a request has its record from its start, but should
 * one have none, its credentials are still cleared.
 */
function requestSecrets(observability: Observability): (request: Request) => readonly string[] {
  const { scopes } = observability.lane;
  return (request) => scopes.requestOf(request)?.secrets ?? credentialSecrets(request.headers);
}

/** How the errors of deferred and streamed parts are masked, logged and cleared of the request's secrets. */
function incrementalDelivery(observability: Observability): IncrementalDeliveryOptions {
  const { scopes } = observability.lane;
  return {
    maskError,
    // As the observer logs the errors it masks: an expected one in a line, with its request.
    logMasked: (error, request) =>
      observability.lane.logging(request && scopes.requestOf(request), () => logFailure(observability.log, error)),
    secretsOf: requestSecrets(observability),
  };
}

/** The lane's options: the same yoga, options, plugins, limits and log as yoga's path. */
function laneOptions(
  config: GatewayConfig,
  { observability, security }: GatewayParts,
  { yoga, options, plugins }: GatewayYoga,
): LaneOptions {
  const logging = observability.logger;
  return {
    yoga,
    yogaOptions: options,
    plugins,
    logMasked: (error) => logging.error(error),
    notice: (message) => logging.debug(message),
    observe: observability.lane,
    rateLimiter: security.rateLimiter,
    maxBodyBytes: config.requestMaxBytes,
    maxInputDepth: config.inputMaxDepth,
    compressionMinBytes: config.responseCompressionMinBytes,
    trustedDocuments: security.trustedDocuments,
  };
}
