/**
 * Operations: one request log line, metrics and traces, as one yoga plugin plus one upstream
 * observer; the readiness and metrics endpoints are a plugin of their own (`endpoints.ts`). Every request gets an id
 * (the caller's
 * `x-request-id`, or a new one) that comes back in the response, goes upstream with each call
 * and is on every log line written while it is served.
 */
import { getOperationAST, type DocumentNode, type ExecutionResult, type OperationDefinitionNode } from 'graphql';
import type { Plugin, YogaLogger } from 'graphql-yoga';
import type { Config } from '../config.js';
import type { HeaderSource } from '../credentials.js';
import { createLogger, type DestinationStream, type Logger } from './logger.js';
import { credentialSecrets, secretValues } from '../secrets.js';
import { yogaLogger } from './yoga-logger.js';
import type { UpstreamObserver } from '../upstream/http.js';
import type { UpstreamService } from '../upstream/failure.js';
import { HEALTH_PATH, METRICS_PATH, READINESS_PATH } from './paths.js';
import { createMetrics, type Metrics } from './metrics.js';
import {
  ambientScope,
  duringRequest,
  requestIdFrom,
  runInOperation,
  runInRequest,
  type OperationRecord,
  type RequestRecord,
  type UpstreamCallRecord,
} from './request-context.js';
import { requestLogLine } from './request-log.js';
import {
  createTracing,
  endOperationSpan,
  nameOperationSpan,
  type TracingConfig,
  type TracingDependencies,
} from './tracing.js';

/** The settings observability reads: the log level, the endpoints' switches and the OTEL_* settings. */
export type ObservabilityConfig = TracingConfig &
  Pick<Config, 'logLevel' | 'metrics' | 'readinessTimeoutMs'> & {
    /** base URLs of the upstreams (resolved: the emulator's when it runs), for readiness and span attributes */
    petstoreUrl: string;
    plantsUrl: string;
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

export { HEALTH_PATH, METRICS_PATH, READINESS_PATH } from './paths.js';

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

/** See {@link Observability.lane}. */
export type RequestObservations = {
  beginRequest(
    method: string,
    path: string,
    headers: HeaderSource,
    allHeaders: () => Record<string, string | string[] | undefined>,
  ): RequestRecord;
  beginOperation(request: RequestRecord): OperationRecord;
  paramsRead(
    request: RequestRecord,
    operation: OperationRecord,
    params: { operationName?: unknown; variables?: unknown },
    secrets: readonly string[],
  ): void;
  executing(operation: OperationRecord, definition: OperationDefinitionNode | null | undefined): void;
  resultReady(request: RequestRecord, result: unknown): void;
  refused(request: RequestRecord, code: string): void;
  responseReady(request: RequestRecord, status: number): void;
  /** writes log lines (synchronously, in `write`) as lines of `request`: with its id, its secrets redacted */
  logging(request: RequestRecord | undefined, write: () => void): void;
};

/** GraphQL names only: anything else a client puts in `operationName` stays out of metrics and logs. */
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,127}$/;

/** `extensions.code` of each error of a result (or of each result of a batch); a stream has none to count here. */
function errorCodes(result: unknown): string[] {
  if (Array.isArray(result)) return result.flatMap(errorCodes);
  if (typeof result !== 'object' || result === null || Symbol.asyncIterator in result) return [];
  const { errors } = result as ExecutionResult;
  return (errors ?? []).map((error) => {
    const code = error.extensions?.['code'];
    return typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR';
  });
}

/** Builds the log, metrics and tracing of a gateway. */
export function createObservability(
  config: ObservabilityConfig,
  dependencies: ObservabilityDependencies = {},
): Observability {
  const log = createLogger(config.logLevel, dependencies.logDestination);
  const debug = log.isLevelEnabled('debug');
  const metrics = config.metrics ? createMetrics(dependencies.clusterMetrics) : undefined;
  const tracing = createTracing(config, log, dependencies);
  const baseUrls: Record<UpstreamService, string> = { petstore: config.petstoreUrl, plants: config.plantsUrl };

  /** Counts an operation and ends its span, once. */
  const finishOperation = (operation: OperationRecord) => {
    if (operation.finished) return;
    operation.finished = true;
    operation.ended ??= performance.now();
    metrics?.observeOperation(operation);
    if (operation.span) {
      nameOperationSpan(operation.span, operation);
      endOperationSpan(operation.span, operation.errorCodes, operation.ended);
    }
  };

  /** A request starts: its record, current for everything that runs while it is served. */
  const beginRequest = (
    method: string,
    path: string,
    headers: HeaderSource,
    allHeaders: () => Record<string, string | string[] | undefined>,
  ): RequestRecord => ({
    id: requestIdFrom(headers.get('x-request-id')),
    started: performance.now(),
    method,
    path,
    operations: [],
    upstream: [],
    secrets: credentialSecrets(headers),
    ...(tracing ? { traceParent: tracing.extract(headers) } : {}),
    // Headers are only kept for a debug log, where the logger redacts the credentials among them.
    ...(debug ? { headers: allHeaders() } : {}),
  });

  /** An operation of `request` starts. */
  const beginOperation = (request: RequestRecord): OperationRecord => {
    const operation: OperationRecord = { started: performance.now(), errorCodes: [] };
    if (tracing && request.traceParent) operation.span = tracing.startOperation(request.traceParent);
    request.operations.push(operation);
    return operation;
  };

  /** The operation's parameters are known: its name, and the secrets its variables carry. */
  const paramsRead = (
    request: RequestRecord,
    operation: OperationRecord,
    params: { operationName?: unknown; variables?: unknown },
    secrets: readonly string[],
  ) => {
    if (typeof params.operationName === 'string' && GRAPHQL_NAME.test(params.operationName))
      operation.name = params.operationName;
    if (secrets.length > 0) request.secrets.push(...secrets);
    // Variables are only kept for a debug log, and redacted there.
    if (debug) operation.variables = params.variables;
  };

  /** The operation is about to execute: its type and its name as the document says. */
  const executing = (operation: OperationRecord, definition: OperationDefinitionNode | null | undefined) => {
    if (!definition) return;
    operation.type = definition.operation;
    operation.name = definition.name?.value;
  };

  /**
   * The result is ready to be sent: its errors are counted (the plugins before this one have given each
   * its final code).
   */
  const resultReady = (request: RequestRecord, result: unknown) => {
    const results = Array.isArray(result) ? result : [result];
    // A request refused before any operation ran (unreadable body, no query) still counts its error.
    if (request.operations.length === 0 && errorCodes(result).length > 0) {
      request.operations.push({ started: request.started, ended: performance.now(), errorCodes: [] });
    }
    request.operations.forEach((operation, index) => {
      operation.errorCodes = errorCodes(request.operations.length === results.length ? results[index] : result);
      finishOperation(operation);
    });
  };

  /** A request refused before it was read (a rate limit): counted and logged without building an error. */
  const refused = (request: RequestRecord, code: string) => {
    request.operations.push({ started: request.started, ended: performance.now(), errorCodes: [code] });
  };

  /** The response is ready: the request's log line. The caller sends `x-request-id: request.id` with it. */
  const responseReady = (request: RequestRecord, status: number) => {
    // An operation whose result was never processed (its request failed on the way) is finished here.
    for (const operation of request.operations) finishOperation(operation);
    const line = requestLogLine(request, status);
    // Probes come every few seconds; they are only worth a line when debugging.
    const probe =
      request.method === 'GET' &&
      (request.path === HEALTH_PATH || request.path === READINESS_PATH || request.path === METRICS_PATH);
    duringRequest(request, () => (probe ? log.debug(line.fields, line.message) : log.info(line.fields, line.message)));
  };

  const plugin: Plugin = {
    instrumentation: {
      request({ request }, wrapped) {
        const record = beginRequest(request.method, new URL(request.url).pathname, request.headers, () =>
          Object.fromEntries(request.headers),
        );
        return runInRequest(record, wrapped);
      },
      operation(_payload, wrapped) {
        const request = ambientScope()?.request;
        if (request === undefined) return wrapped();
        const operation = beginOperation(request);
        return (async () => {
          try {
            await runInOperation(request, operation, wrapped);
          } finally {
            operation.ended = performance.now();
          }
        })();
      },
    },
    onParams({ params }) {
      const scope = ambientScope();
      if (scope?.operation === undefined) return;
      paramsRead(scope.request, scope.operation, params, secretValues(params.variables, params.query));
    },
    onExecute({ args }) {
      const operation = ambientScope()?.operation;
      if (operation !== undefined)
        executing(operation, getOperationAST(args.document as DocumentNode, args.operationName as string | undefined));
    },
    onResultProcess({ result }) {
      const request = ambientScope()?.request;
      if (request !== undefined) resultReady(request, result);
    },
    onResponse({ response }) {
      const request = ambientScope()?.request;
      if (request === undefined) return;
      response.headers.set('x-request-id', request.id);
      responseReady(request, response.status);
    },
  };

  const observeUpstream: UpstreamObserver = (call) => {
    // The lane's calls carry their request; those of requests yoga serves find it ambient.
    const scope = call.scope ?? ambientScope();
    const request = scope?.request;
    const span = tracing?.startUpstreamCall(scope?.operation?.span, {
      service: call.service,
      operation: call.operation,
      method: call.method,
      baseUrl: baseUrls[call.service],
    });
    if (call.shared) {
      // Counted as it joins. Its span is the wait for the call it joined; the upstream sees only that one.
      metrics?.observeSharedCall(call);
      span?.setAttribute('upstream.shared', true);
    }
    // Recorded at its start: an answer can be sent while a call is still in flight (a failed
    // non-null field ends the operation at once), and the log line then shows it unfinished.
    const record: UpstreamCallRecord = {
      service: call.service,
      operation: call.operation,
      method: call.method,
      ...(call.shared ? { shared: true } : {}),
    };
    request?.upstream.push(record);
    return {
      headers: {
        ...(request ? { 'x-request-id': request.id } : {}),
        ...(span && tracing ? tracing.headersFor(span) : {}),
      },
      end(outcome) {
        metrics?.observeUpstreamCall(call, outcome);
        Object.assign(record, outcome);
        if (span && tracing) tracing.endUpstreamCall(span, outcome);
      },
    };
  };

  return {
    logger: yogaLogger(log),
    log,
    plugin,
    metrics,
    observeUpstream,
    lane: {
      beginRequest,
      beginOperation,
      paramsRead,
      executing,
      resultReady,
      refused,
      responseReady,
      logging: duringRequest,
    },
    close: async () => tracing?.shutdown(),
  };
}
