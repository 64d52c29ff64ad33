/**
 * The gateway: a yoga instance wired to the upstream areas. It never listens (`main.ts` does),
 * so tests build their own.
 */
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createYoga, type YogaLogger, type YogaServerInstance } from 'graphql-yoga';
import { upstreamTimeouts, type Config } from './config.js';
import { createContext, type GraphQLContext, type Upstreams } from './context.js';
import { maskError } from './errors.js';
import { createLogger } from './logger.js';
import { createSchema } from './schema.js';
import { useStreamingUploads } from './uploads.js';
import { createUpstreamClient, type UpstreamClientOptions, type UpstreamService } from './upstream/http.js';
import { createPetstoreApi } from './upstream/petstore.js';
import { createPlantsApi } from './upstream/plants.js';

/** The configuration with both upstreams resolved (to their URLs or to the emulator's). */
export type GatewayConfig = Omit<Config, 'petstoreUrl' | 'plantsUrl'> & { petstoreUrl: string; plantsUrl: string };

/** A gateway: the yoga instance (a request handler) and how to release its upstream pools. */
export type Gateway = {
  yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>;
  /** closes the upstream connection pools; in-flight calls finish first */
  close(): Promise<void>;
};

/** The options of one area's upstream client: its own timeouts, the shared pool size, cap and retry policy. */
function clientOptions(config: GatewayConfig, service: UpstreamService, logger: YogaLogger): UpstreamClientOptions {
  const timeouts = upstreamTimeouts(config, service);
  return {
    baseUrl: service === 'petstore' ? config.petstoreUrl : config.plantsUrl,
    connections: config.upstreamConnections,
    timeoutMs: timeouts.totalMs,
    connectTimeoutMs: timeouts.connectMs,
    headersTimeoutMs: timeouts.headersMs,
    bodyTimeoutMs: timeouts.bodyMs,
    maxResponseBytes: config.upstreamMaxResponseBytes,
    retries: config.upstreamRetries,
    retryBackoffMs: config.upstreamRetryBackoffMs,
    retryBackoffMaxMs: config.upstreamRetryBackoffMaxMs,
    onRetry: ({ operation, retry, delayMs, reason }) => logger.debug(`upstream ${service} ${operation}: retry ${retry} in ${delayMs} ms after ${reason}`),
  };
}

/** Builds the gateway for a configuration. */
export function createGateway(config: GatewayConfig): Gateway {
  const logging = createLogger(config.logLevel);
  const petstoreClient = createUpstreamClient('petstore', clientOptions(config, 'petstore', logging));
  const plantsClient = createUpstreamClient('plants', clientOptions(config, 'plants', logging));
  const upstreams: Upstreams = {
    petstore: createPetstoreApi(petstoreClient, { bodyFormat: config.petstoreBodyFormat, accept: config.petstoreAccept }),
    plants: createPlantsApi(plantsClient),
  };

  const yoga = createYoga<Record<string, unknown>, GraphQLContext>({
    schema: createSchema(),
    context: ({ request }) => createContext(request, upstreams),
    maskedErrors: { maskError },
    graphiql: config.graphiql,
    // GraphiQL with its assets inlined: the page needs no CDN, so it works offline.
    renderGraphiQL,
    // Uploads are parsed by useStreamingUploads, which streams files instead of buffering them.
    multipart: false,
    plugins: [useStreamingUploads({ maxFileBytes: config.uploadMaxBytes, maxFiles: 5 })],
    // Expected failures (upstream 4xx, bad input) log one line; unexpected ones keep their stack, server-side.
    logging,
  });

  return {
    yoga,
    close: async () => {
      await Promise.all([petstoreClient.close(), plantsClient.close()]);
    },
  };
}
