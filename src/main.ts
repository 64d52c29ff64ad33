/**
 * Starts the gateway: configuration → (embedded emulator when no upstream is configured) →
 * gateway → HTTP server (`server.ts`), in one process, or with WORKERS > 1 in a cluster: this
 * process becomes the primary (`cluster/primary.ts`), which resolves the upstreams once and
 * forks workers that each build a gateway and listen on the shared port. Stops gracefully on
 * SIGTERM/SIGINT: new connections are refused at once, requests in flight finish (within
 * SHUTDOWN_GRACE_MS), then the upstream pools, Redis and tracing close and the process exits.
 * Whatever hangs, the process is gone by a deadline armed as the stop begins
 * ({@link STOP_DEADLINE_AFTER_GRACE_MS} after the grace period), and a stdout or stderr whose
 * reader has gone neither ends it nor keeps it alive.
 *
 * Exit codes:
 * - 0: stopped: its requests finished or were cut at the end of the grace period, and everything
 *   closed (also after `--help`)
 * - 1: it could not start (a bad setting, a port in use), or its stop failed or had not ended by
 *   the deadline (a cluster primary: also when a worker's had not); the last log line says which
 */
import cluster from 'node:cluster';
import { availableCores } from './cluster/cores.js';
import {
  clusterMetrics,
  onCollectMessage,
  onStopMessage,
  primaryRateLimitStore,
  startMessage,
  toPrimary,
  type StartMessage,
} from './cluster/ipc.js';
import { runPrimary } from './cluster/primary.js';
import {
  changedSettings,
  ConfigError,
  helpText,
  loadConfig,
  warningsOf,
  redactUrl,
  startCommand,
  type Config,
} from './config/index.js';
import { createLogger, type Logger } from './observability/logger.js';
import type { RedisStatus } from './redis/connection.js';
import { HEALTH_PATH, METRICS_PATH, READINESS_PATH } from './observability/paths.js';
import { otlpTracesUrl, tracesExporter } from './observability/tracing.js';
import { runtimeStatus, type RuntimeStatus } from './runtime.js';

/** How long a worker waits for the primary's answer about a rate limit or the summed metrics. */
const PRIMARY_TIMEOUT_MS = 1000;
/** How long a process waits at start for Redis to answer (or to fail) before it takes requests. */
const REDIS_START_WAIT_MS = 2000;
const METRICS_TIMEOUT_MS = 5000;
/**
 * How long after SHUTDOWN_GRACE_MS a stop may still take: what closes once the server has (the
 * upstream pools, Redis, tracing, whose buffered spans get at most TRACING_STOP_MS, 1.5 s). Then
 * the process exits 1, whatever is still closing: with the log's flush and a cluster primary's
 * later deadline, every process is gone within SHUTDOWN_GRACE_MS + 2 s.
 */
const STOP_DEADLINE_AFTER_GRACE_MS = 1600;
/** A cluster primary's deadline comes this long after its workers' own, which it then kills. */
const PRIMARY_DEADLINE_LAG_MS = 200;
/** How long the log's last lines may take to be written before the process exits. */
const EXIT_FLUSH_MS = 100;
const EXIT_STOPPED = 0;
const EXIT_FAILED = 1;

type Upstreams = Omit<StartMessage, 'type'>;

/** The gateway and its server, loaded where requests are served: a cluster primary never loads them. */
async function gatewayModules() {
  const [{ createGateway }, { serve }, { workerMetrics }] = await Promise.all([
    import('./gateway.js'),
    import('./server.js'),
    import('./observability/metrics.js'),
  ]);
  return { createGateway, serve, workerMetrics };
}

/** What the start-up lines say of shared state: Redis and how it stands, or that each process keeps its own. */
function sharedStateLine(config: Config, redis: RedisStatus | 'per worker'): string {
  if (config.redisUrl === undefined)
    return 'Shared state: none, each process keeps its own rate limits, cache and APQ documents (set REDIS_URL to share them)';
  const where = `Redis ${redactUrl(config.redisUrl)} (keys under ${config.redisKeyPrefix})`;
  if (redis === 'ready') return `Shared state: ${where}, connected`;
  if (redis === 'per worker') return `Shared state: ${where}, one connection per worker`;
  return (
    `Shared state: ${where}, UNREACHABLE: serving without it (no shared cache, rate limits ` +
    `${config.rateLimitFailClosed ? 'refusing requests' : 'not applied'}) and reconnecting`
  );
}

/** Where an area is served, as the banner says it: its URL (redacted), or that it is not served. */
function servedAt(url: string | undefined, setting: string): string {
  return url === undefined
    ? `not served (${setting} is not set; its fields answer UPSTREAM_NOT_SERVED)`
    : redactUrl(url);
}

/** The start-up banner: where everything is. */
function banner(
  config: Config,
  port: number,
  upstreams: Upstreams,
  workers: number,
  redis: RedisStatus | 'per worker',
  runtime: RuntimeStatus,
): string {
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const changed = changedSettings(config);
  const origin = `http://${shownHost}:${port}`;
  const exporter = tracesExporter(config);
  const tracing =
    exporter === undefined
      ? 'off (set OTEL_EXPORTER_OTLP_ENDPOINT to send spans)'
      : exporter === 'console'
        ? 'spans written to stdout'
        : `OTLP to ${redactUrl(otlpTracesUrl(config))}`;
  const why = config.workers === 'auto' ? 'WORKERS=auto: the cores this process may use' : 'WORKERS';
  const processes = workers === 1 ? '1 process' : `${workers} processes (${why})`;
  return [
    `GraphQL gateway ready: ${origin}/graphql${config.graphiql ? ' (open it in a browser for GraphiQL)' : ''}`,
    upstreams.emulator
      ? `Upstreams: embedded emulator (pet store ${upstreams.petstoreUrl}, plants ${upstreams.plantsUrl})` +
        (config.graphiql ? '; GraphiQL has demo credentials' : '')
      : `Upstreams: pet store ${servedAt(upstreams.petstoreUrl, 'PETSTORE_URL')}, ` +
        `plants ${servedAt(upstreams.plantsUrl, 'PLANTS_URL')}`,
    `Operations: ${origin}${HEALTH_PATH} (liveness), ${origin}${READINESS_PATH} (upstreams reachable)` +
      (config.metrics ? `, ${origin}${METRICS_PATH} (Prometheus)` : ''),
    `Tracing: ${tracing}`,
    `Settings changed from defaults: ${changed.length > 0 ? changed.join(' ') : 'none'}`,
    `Workers: ${processes}`,
    sharedStateLine(config, redis),
    runtime.line,
  ].join('\n');
}

let exiting = false;

/**
 * Ends the process with `code` (the first one asked for) once the log's buffered lines are out,
 * waiting at most {@link EXIT_FLUSH_MS}. Flushed asynchronously: a stdout whose reader has gone is
 * found out here, and the log stops writing; found out by the log's synchronous flush at exit
 * instead, the write would be retried forever and the process never end.
 */
function exit(log: Logger, code: number): void {
  if (exiting) return;
  exiting = true;
  const timer = setTimeout(() => process.exit(code), EXIT_FLUSH_MS);
  log.flush(() => {
    clearTimeout(timer);
    process.exit(code);
  });
}

/**
 * Keeps a stdout or stderr whose reader has gone (EPIPE: the parent exited, a `| tee` was killed,
 * a log shipper restarted) from ending the process (an unheard 'error' event is a crash) or from
 * keeping it alive (see {@link exit}): what is written there is lost, and the log, flushed at once,
 * meets the same error and stops writing.
 */
function surviveLostOutput(log: Logger): void {
  const lost = () => log.flush(() => undefined);
  process.stdout.on('error', lost);
  process.stderr.on('error', lost);
}

/**
 * Runs `stop` and ends the process: {@link EXIT_STOPPED} once it has ended, {@link EXIT_FAILED}
 * when it throws, or when it has not ended by the deadline armed here, which nothing that hangs
 * can clear.
 */
function stopProcess(log: Logger, shutdownGraceMs: number, stop: () => Promise<unknown>): void {
  const deadlineMs = shutdownGraceMs + STOP_DEADLINE_AFTER_GRACE_MS;
  setTimeout(() => {
    log.error(
      `the stop did not end within ${deadlineMs} ms (SHUTDOWN_GRACE_MS + ${STOP_DEADLINE_AFTER_GRACE_MS} ms); ` +
        `exiting with code ${EXIT_FAILED}`,
    );
    exit(log, EXIT_FAILED);
  }, deadlineMs);
  Promise.resolve()
    .then(stop)
    .then(
      () => exit(log, EXIT_STOPPED),
      (error: unknown) => {
        const reason = error instanceof Error ? error.message : String(error);
        log.error({ err: error }, `the stop failed: ${reason}; exiting with code ${EXIT_FAILED}`);
        exit(log, EXIT_FAILED);
      },
    );
}

async function main(): Promise<void> {
  // The command line and the environment are read by src/config/ alone.
  const command = startCommand();
  if (command === 'help') {
    console.log(helpText());
    return;
  }
  if (command === 'print-schema') {
    process.stdout.write(`${(await import('./schema.js')).printSubgraphSdl()}\n`);
    return;
  }
  if (cluster.isWorker) return worker();
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  surviveLostOutput(log);
  // Said once, by the process that prints the banner: a runtime without security fixes is the
  // first thing an operator's scanner flags.
  const runtime = runtimeStatus(process.versions.node, new Date());
  if (runtime.warning !== undefined) log.warn(runtime.warning);
  for (const warning of warningsOf(config)) log.warn(warning);
  const workers = config.workers === 'auto' ? availableCores() : config.workers;
  // loadConfig has already refused a production start without upstreams (unless EMULATOR=true).
  const useEmulator = config.emulator ?? (config.petstoreUrl === undefined && config.plantsUrl === undefined);
  // Loaded only when it runs: its contract validation is not part of a gateway in front of real upstreams.
  const emulator = useEmulator
    ? await (await import('./emulator/server.js')).startEmulator({ recordRequests: false })
    : undefined;
  const upstreams: Upstreams = {
    petstoreUrl: emulator?.petstoreUrl ?? config.petstoreUrl,
    plantsUrl: emulator?.plantsUrl ?? config.plantsUrl,
    emulator: emulator !== undefined,
  };

  if (workers > 1) {
    runPrimary({
      workers,
      upstreams,
      shutdownGraceMs: config.shutdownGraceMs,
      stopDeadlineMs: config.shutdownGraceMs + STOP_DEADLINE_AFTER_GRACE_MS + PRIMARY_DEADLINE_LAG_MS,
      log,
      exit: (code) => exit(log, code),
      onListening: (port) => console.log(banner(config, port, upstreams, workers, 'per worker', runtime)),
      onStopped: async () => {
        await emulator?.close();
        console.log('stopped');
      },
    });
    return;
  }

  const { createGateway, serve } = await gatewayModules();
  const gateway = createGateway({ ...config, ...upstreams });
  // Redis is given a moment to answer before the first request, so that rate limits apply from it
  // on; the start-up lines say whether it did. The gateway serves either way and reconnects by itself.
  const redis = (await gateway.redis?.settled(REDIS_START_WAIT_MS)) ?? 'connecting';
  const serving = await serve(gateway, config);
  let stopping = false;
  const stop = (signal: string) => {
    // A second signal cuts what is still in flight; the deadline armed by the first still holds.
    if (stopping) return void serving.stop(signal).catch(() => undefined);
    stopping = true;
    stopProcess(log, config.shutdownGraceMs, async () => {
      if ((await serving.stop(signal)) === 'cut') return;
      await emulator?.close();
      console.log('stopped');
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Written once the signals are handled: a supervisor (or a test) that sends SIGTERM as soon as it
  // reads this line would otherwise find none, and the process would die of it (no exit code).
  console.log(banner(config, serving.port, upstreams, 1, redis, runtime));
}

/**
 * A cluster worker: waits for the upstreams the primary resolved, builds its gateway (rate
 * limits kept by the primary, /metrics summed by it) and listens on the shared port. It stops
 * when the primary says so, or on its own SIGTERM (the primary then replaces it); a Ctrl-C,
 * which reaches every process of the terminal, is the primary's to handle.
 */
async function worker(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  surviveLostOutput(log);
  const upstreams = await startMessage();
  const { createGateway, serve, workerMetrics } = await gatewayModules();
  const gateway = createGateway(
    { ...config, petstoreUrl: upstreams.petstoreUrl, plantsUrl: upstreams.plantsUrl, emulator: upstreams.emulator },
    {
      // With REDIS_URL the counters are in Redis, shared with other replicas too.
      rateLimitStore:
        config.redisUrl === undefined
          ? primaryRateLimitStore(PRIMARY_TIMEOUT_MS, (failure) =>
              failure
                ? log.warn(`rate limits let requests through until the primary answers: ${failure.message}`)
                : log.info('rate limits are kept by the primary again'),
            )
          : undefined,
      clusterMetrics: () => clusterMetrics(METRICS_TIMEOUT_MS),
    },
  );
  // As in one process: Redis is given a moment to answer before this worker takes requests.
  await gateway.redis?.settled(REDIS_START_WAIT_MS);
  const serving = await serve(gateway, config);
  // The primary sums every worker's metrics for /metrics, this one's included.
  onCollectMessage(workerMetrics);
  toPrimary({ type: 'gateway:listening', port: serving.port });
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return void serving.stop(why).catch(() => undefined);
    stopping = true;
    stopProcess(log, config.shutdownGraceMs, () => serving.stop(why));
  };
  onStopMessage((cut) => stop(cut ? 'stop (cut)' : 'stop'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => undefined);
  // When the primary is gone (killed), node:cluster ends this worker at once (its own
  // 'disconnect' listener calls process.exit): no drain is possible then, nor needed to stop it.
}

main().catch((error: unknown) => {
  console.error(
    error instanceof ConfigError
      ? `Configuration error: ${error.message}`
      : `Could not start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
});
