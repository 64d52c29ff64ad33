/**
 * Starts the gateway: configuration → (embedded emulator when no upstream is configured) →
 * gateway → HTTP server. The only module that listens. Stops gracefully on SIGTERM/SIGINT.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { changedSettings, ConfigError, helpText, loadConfig, redactUrl } from './config.js';
import { startEmulator } from './emulator/server.js';
import { createGateway } from './gateway.js';
import { printSubgraphSdl } from './schema.js';

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(helpText());
    return;
  }
  if (process.argv.includes('--print-schema')) {
    process.stdout.write(`${printSubgraphSdl()}\n`);
    return;
  }
  const config = loadConfig();
  const emulator = config.petstoreUrl === undefined || config.plantsUrl === undefined ? await startEmulator({ recordRequests: false }) : undefined;
  const petstoreUrl = emulator?.petstoreUrl ?? config.petstoreUrl ?? '';
  const plantsUrl = emulator?.plantsUrl ?? config.plantsUrl ?? '';
  const gateway = createGateway({ ...config, petstoreUrl, plantsUrl });

  const server = createServer(gateway.yoga);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new ConfigError(`cannot listen on HOST=${config.host} PORT=${config.port}: ${error.code === 'EADDRINUSE' ? 'the port is in use' : (error.code ?? error.message)}`)),
    );
    server.listen(config.port, config.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const changed = changedSettings(config);
  console.log(
    [
      `GraphQL gateway ready: http://${shownHost}:${port}${gateway.yoga.graphqlEndpoint}${config.graphiql ? ' (GraphiQL in a browser)' : ''}`,
      emulator
        ? `Upstreams: embedded emulator (pet store ${emulator.petstoreUrl}, plants ${emulator.plantsUrl})`
        : `Upstreams: pet store ${redactUrl(petstoreUrl)}, plants ${redactUrl(plantsUrl)}`,
      `Settings changed from defaults: ${changed.length > 0 ? changed.join(' ') : 'none'}`,
    ].join('\n'),
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: finishing in-flight requests, then stopping`);
    // Stop accepting; idle keep-alive sockets are closed so close() can complete.
    server.close(() => {
      void Promise.all([gateway.close(), emulator?.close()]).then(() => process.exit(0));
    });
    server.closeIdleConnections();
    setTimeout(() => {
      server.closeAllConnections();
      process.exit(0);
    }, 10_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : `Could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
