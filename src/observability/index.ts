/**
 * Operations: one request log line, metrics and traces, as one yoga plugin plus one upstream
 * observer; the readiness and metrics endpoints are a plugin of their own (`endpoints.ts`). Every request gets an id
 * (the caller's
 * `x-request-id`, or a new one) that comes back in the response, goes upstream with each call
 * and is on every log line written while it is served.
 */
import { getOperationAST, type DocumentNode } from 'graphql';
import type { Plugin, YogaLogger } from 'graphql-yoga';
import type { Config } from '../config/index.js';
import { createLogger, type DestinationStream, type Logger } from './logger.js';
import { documentSecrets, variableSecrets } from '../secrets.js';
import { yogaLogger } from './yoga-logger.js';
import type { UpstreamObserver } from '../upstream/http.js';
import type { UpstreamService } from '../upstream/failure.js';
import { createMetrics, type Metrics } from './metrics.js';
import { LogScope, setRequestId, type UpstreamCallRecord } from './request-context.js';
import { RequestObserver, type RequestObservations } from './request-observer.js';
import { createTracing, type Tracing, type TracingConfig, type TracingDependencies } from './tracing.js';

/** The settings observability reads: the log level, the endpoints' switches and the OTEL_* settings. */
export type ObservabilityConfig = TracingConfig &
  Pick<Config, 'logLevel' | 'requestLogSample' | 'metrics' | 'readinessTimeoutMs'> & {
    /** base URLs of the upstreams (resolved: the emulator's when it runs), for span attributes; unset: not served */
    petstoreUrl: string | undefined;
    plantsUrl: string | undefined;
  };

/** What observability may be built with instead of its defaults (tests capture the log and the spans). */
export type ObservabilityDependencies = TracingDependencies & {
  /** where the log goes. @default stdout */
  logDestination?: DestinationStream;
  /**
   * the text of /metrics, when another process sums it (a cluster worker asks the primary). @default
   * this process's metrics
   */
  clusterMetrics?: () => Promise<string>;
};

export type { RequestObservations } from './request-observer.js';

/** The observability of one gateway. */
export type Observability = {
  /** the log, as yoga's logger */
  logger: YogaLogger;
  /** the log itself */
  log: Logger;
  /** last in the gateway's plugins, so that it sees results and responses as they leave */
  plugin: Plugin;
  /** the metrics, for /metrics (`endpoints.ts`); undefined when METRICS is off */
  metrics: Metrics | undefined;
  /** given to the upstream clients: metrics, spans, log entries and headers of each upstream call */
  observeUpstream: UpstreamObserver;
  /**
   * the same observations for requests the gateway's own HTTP lane serves (src/http/), in the order
   * yoga's hooks make them
   */
  lane: RequestObservations;
  /** exports the spans still buffered */
  close(): Promise<void>;
};

/** Builds the log, metrics and tracing of a gateway. */
export function createObservability(
  config: ObservabilityConfig,
  dependencies: ObservabilityDependencies = {},
): Observability {
  const logScope = new LogScope();
  const log = createLogger(config.logLevel, dependencies.logDestination, logScope);
  const metrics = config.metrics ? createMetrics(dependencies.clusterMetrics) : undefined;
  const tracing = createTracing(config, log, dependencies);
  // An area that is not served makes no call, so its '' is never a span's.
  const baseUrls: Record<UpstreamService, string> = {
    petstore: config.petstoreUrl ?? '',
    plants: config.plantsUrl ?? '',
  };
  const lane = new RequestObserver(log, metrics, tracing, logScope, config.requestLogSample);
  return {
    logger: yogaLogger(log),
    log,
    plugin: observabilityPlugin(lane),
    metrics,
    observeUpstream: upstreamObserver(metrics, tracing, baseUrls, lane),
    lane,
    close: async () => tracing?.shutdown(),
  };
}

/**
 * The yoga plugin: the observations of each request yoga serves, made from its hooks. A request's
 * record is found by its `Request`, an operation's by its context object (`RequestScopes`).
 */
function observabilityPlugin(observe: RequestObservations): Plugin {
  const { scopes } = observe;
  return {
    instrumentation: {
      request({ request }, wrapped) {
        const { method, url, headers } = request;
        observe.beginRequest(method, new URL(url).pathname, headers, () => Object.fromEntries(headers), request);
        return wrapped();
      },
      operation({ context, request }, wrapped) {
        const record = scopes.requestOf(request);
        if (record === undefined) return wrapped();
        const operation = observe.beginOperation(record, context);
        return (async () => {
          try {
            await wrapped();
          } finally {
            operation.ended = performance.now();
          }
        })();
      },
    },
    onParams({ params, context }) {
      const scope = scopes.scopeOf(context);
      if (scope?.operation === undefined) return;
      observe.paramsRead(scope.request, scope.operation, params, variableSecrets(params.variables));
    },
    onParse({ context }) {
      // Secrets written into the document, found from its syntax tree, are redacted from the
      // request's log lines too; the operation's type and name are as the document says. (Read
      // here rather than as it executes: a hook in each phase costs every request its share.)
      return ({ result }) => {
        const scope = scopes.scopeOf(context);
        if (scope === undefined || result instanceof Error || result === null) return;
        const document = result as DocumentNode;
        scope.request.secrets.push(...documentSecrets(document));
        if (scope.operation === undefined) return;
        const { operationName } = (context as { params?: { operationName?: unknown } }).params ?? {};
        observe.documentRead(
          scope.operation,
          getOperationAST(document, typeof operationName === 'string' ? operationName : undefined),
        );
      };
    },
    onResultProcess({ request, result }) {
      const record = scopes.requestOf(request);
      if (record !== undefined) observe.resultReady(record, result);
    },
    onResponse({ request, response }) {
      const record = scopes.requestOf(request);
      if (record === undefined) return;
      setRequestId(response.headers, record.id);
      observe.responseReady(record, response.status);
    },
  };
}

/** The upstream observer: metrics, a span, a log entry and the headers of each upstream call. */
function upstreamObserver(
  metrics: Metrics | undefined,
  tracing: Tracing | undefined,
  baseUrls: Record<UpstreamService, string>,
  observe: RequestObservations,
): UpstreamObserver {
  return (call) => {
    // Each operation's upstream clients carry its scope (given by the context factory).
    const scope = call.scope;
    const request = scope?.request;
    const span = tracing?.startUpstreamCall(observe.spanOf(scope), {
      service: call.service,
      operation: call.operation,
      method: call.method,
      baseUrl: baseUrls[call.service],
    });
    if (call.cached !== undefined) span?.setAttribute('upstream.cached', call.cached);
    if (call.shared) {
      // Counted as it joins. Its span is the wait for the call it joined; the upstream sees only that one.
      metrics?.observeSharedCall(call);
      span?.setAttribute('upstream.shared', true);
    }
    // Recorded at its start: an answer can be sent while a call is still in flight (a failed
    // non-null field ends the operation at once), and the log line then shows it unfinished.
    // (Fields set one by one, not spread in: this runs for every upstream call.)
    const record: UpstreamCallRecord = {
      service: call.service,
      operation: call.operation,
      method: call.method,
      template: call.template,
      batched: call.batched === true,
      for: scope?.operation,
    };
    if (call.shared) record.shared = true;
    if (call.cached !== undefined) {
      record.cached = call.cached;
      record.ageSeconds = call.ageSeconds;
    }
    request?.upstream.push(record);
    const headers: Record<string, string> = span && tracing ? tracing.headersFor(span) : {};
    if (request) setRequestId(headers, request.id);
    return {
      headers,
      end(outcome) {
        metrics?.observeUpstreamCall(call, outcome);
        Object.assign(record, outcome);
        if (span && tracing) tracing.endUpstreamCall(span, outcome);
      },
    };
  };
}
