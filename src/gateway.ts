/**
 * The gateway: a yoga instance wired to the upstream areas. It never listens (`main.ts` does),
 * so tests build their own.
 */
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Config } from './config.js';
import { createContext, type GraphQLContext, type Upstreams } from './context.js';
import { maskError } from './errors.js';
import { createLogger } from './logger.js';
import { createSchema } from './schema.js';
import { useStreamingUploads } from './uploads.js';
import { createUpstreamClient } from './upstream/http.js';
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

/** Builds the gateway for a configuration. */
export function createGateway(config: GatewayConfig): Gateway {
  const clientOptions = {
    connections: config.upstreamConnections,
    timeoutMs: config.upstreamTimeoutMs,
    maxResponseBytes: config.upstreamMaxResponseBytes,
  };
  const petstoreClient = createUpstreamClient('petstore', { ...clientOptions, baseUrl: config.petstoreUrl });
  const plantsClient = createUpstreamClient('plants', { ...clientOptions, baseUrl: config.plantsUrl });
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
    logging: createLogger(config.logLevel),
  });

  return {
    yoga,
    close: async () => {
      await Promise.all([petstoreClient.close(), plantsClient.close()]);
    },
  };
}
