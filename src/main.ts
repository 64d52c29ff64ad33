/**
 * Starts the gateway: configuration → (embedded emulator when no upstream is configured) →
 * gateway → HTTP server. The only module that listens. Stops gracefully on SIGTERM/SIGINT:
 * new connections are refused at once, idle keep-alive connections closed, requests in flight
 * finish (within SHUTDOWN_GRACE_MS), then the upstream pools close and the process exits 0.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { changedSettings, ConfigError, helpText, loadConfig, redactUrl } from './config.js';
import { startEmulator } from './emulator/server.js';
import { createGateway } from './gateway.js';
import { HEALTH_PATH, METRICS_PATH, READINESS_PATH } from './observability/index.js';
import { otlpTracesUrl, tracesExporter } from './observability/tracing.js';
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
  // loadConfig has already refused a production start without upstreams (unless EMULATOR=true).
  const useEmulator = config.emulator ?? (config.petstoreUrl === undefined && config.plantsUrl === undefined);
  const emulator = useEmulator ? await startEmulator({ recordRequests: false }) : undefined;
  const petstoreUrl = emulator?.petstoreUrl ?? config.petstoreUrl ?? '';
  const plantsUrl = emulator?.plantsUrl ?? config.plantsUrl ?? '';
  const gateway = createGateway({ ...config, petstoreUrl, plantsUrl, emulator: emulator !== undefined });

  const server = createServer(gateway.handler);
  // The answers being written, so that a stop can see what is in flight and close each connection once its answer is out.
  const answering = new Set<ServerResponse>();
  let stopping = false;
  server.prependListener('request', (_request, response: ServerResponse) => {
    answering.add(response);
    // While stopping, an answer closes its connection: nothing more will be served on it.
    if (stopping) response.setHeader('connection', 'close');
    response.once('close', () => {
      answering.delete(response);
      // An answer whose headers were out before the stop leaves its connection idle, not closed.
      if (stopping) setImmediate(() => server.closeIdleConnections());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new ConfigError(`cannot listen on HOST=${config.host} PORT=${config.port}: ${error.code === 'EADDRINUSE' ? 'the port is in use' : (error.code ?? error.message)}`)),
    );
    server.listen(config.port, config.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const changed = changedSettings(config);
  const origin = `http://${shownHost}:${port}`;
  const exporter = tracesExporter(config);
  console.log(
    [
      `GraphQL gateway ready: ${origin}${gateway.yoga.graphqlEndpoint}${config.graphiql ? ' (open it in a browser for GraphiQL)' : ''}`,
      emulator
        ? `Upstreams: embedded emulator (pet store ${emulator.petstoreUrl}, plants ${emulator.plantsUrl})${config.graphiql ? '; GraphiQL has demo credentials' : ''}`
        : `Upstreams: pet store ${redactUrl(petstoreUrl)}, plants ${redactUrl(plantsUrl)}`,
      `Operations: ${origin}${HEALTH_PATH} (liveness), ${origin}${READINESS_PATH} (upstreams reachable)${config.metrics ? `, ${origin}${METRICS_PATH} (Prometheus)` : ''}`,
      `Tracing: ${exporter === undefined ? 'off (set OTEL_EXPORTER_OTLP_ENDPOINT to send spans)' : exporter === 'console' ? 'spans written to stdout' : `OTLP to ${redactUrl(otlpTracesUrl(config))}`}`,
      `Settings changed from defaults: ${changed.length > 0 ? changed.join(' ') : 'none'}`,
    ].join('\n'),
  );

  /** Cuts what is still in flight and exits: at the end of the grace period, or on a second signal. */
  const cut = (why: string) => {
    console.log(`${why}: closing ${answering.size} unfinished request(s) and stopping`);
    server.closeAllConnections();
    process.exit(0);
  };
  const stop = async (signal: string) => {
    if (stopping) return cut(`${signal} again`);
    stopping = true;
    console.log(`${signal}: refusing new connections, finishing ${answering.size} in-flight request(s) within ${config.shutdownGraceMs} ms`);
    const graceTimer = setTimeout(() => cut('grace period over'), config.shutdownGraceMs);
    for (const response of answering) if (!response.headersSent) response.setHeader('connection', 'close');
    // close() stops listening at once and calls back when the last connection has ended;
    // keep-alive connections with no request in flight are closed now, not at their idle timeout.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await closed;
    // No request is in flight any more, so the pools have no call to wait for.
    await Promise.all([gateway.close(), emulator?.close()]);
    clearTimeout(graceTimer);
    console.log('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : `Could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
