/**
 * The "framework ceiling" contender: the gateway itself (same schema, resolvers, loaders,
 * plugins and yoga server, served by node:http as `src/main.ts` does), but with upstream
 * clients that answer from memory. Each distinct upstream call is made once, for real, the
 * first time it is asked (the warm-up run); from then on its decoded answer is served from a
 * map, with no HTTP, no socket and no JSON parsing. What the ceiling costs is GraphQL and the
 * gateway's own code; what the gateway costs on top of it is the upstream path.
 *
 * Usage: the environment of `src/main.ts` (PETSTORE_URL, PLANTS_URL, HOST, PORT, …);
 * prints one JSON line `{ url }` when listening.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config/index.js';
import { createGateway } from '../src/gateway.js';
import { createUpstreamClient, type UpstreamPool, type UpstreamResponse } from '../src/upstream/http.js';

/** A client that makes each distinct read once and then answers it from memory. */
function memoizingClient(...args: Parameters<typeof createUpstreamClient>): UpstreamPool {
  const client = createUpstreamClient(...args);
  const answers = new Map<string, UpstreamResponse>();
  return {
    service: client.service,
    close: () => client.close(),
    ping: (timeoutMs) => client.ping(timeoutMs),
    async request(call) {
      if (call.method !== 'GET') return client.request(call);
      const key = `${call.path}?${JSON.stringify(call.query ?? {})}`;
      const known = answers.get(key);
      if (known !== undefined) return known;
      const response = await client.request(call);
      answers.set(key, response);
      return response;
    },
  };
}

const config = loadConfig();
if (config.petstoreUrl === undefined || config.plantsUrl === undefined)
  throw new Error('ceiling: set PETSTORE_URL and PLANTS_URL');
const gateway = createGateway(
  { ...config, petstoreUrl: config.petstoreUrl, plantsUrl: config.plantsUrl },
  { createUpstreamClient: memoizingClient },
);
const server = createServer(gateway.handler);
server.listen(config.port, config.host, () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/graphql` })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close();
  void gateway.close().then(() => process.exit(0));
});
