/**
 * Operations: one request log line, metrics, traces and the readiness and metrics endpoints,
 * as one yoga plugin plus one upstream observer. Every request gets an id (the caller's
 * `x-request-id`, or a new one) that comes back in the response, goes upstream with each call
 * and is on every log line written while it is served.
 */
import { getOperationAST, type ExecutionResult } from 'graphql';
import type { Plugin, YogaLogger } from 'graphql-yoga';
import type { Config } from '../config.js';
import { readCredentials } from '../credentials.js';
import { createLogger, secretValues, yogaLogger, type DestinationStream, type Logger } from '../logger.js';
import type { UpstreamObserver, UpstreamService } from '../upstream/http.js';
import { checkReadiness } from './health.js';
import { createMetrics } from './metrics.js';
import { currentOperation, currentRequest, requestIdFrom, runInOperation, runInRequest, type OperationRecord, type RequestRecord, type UpstreamCallRecord } from './request-context.js';
import { requestLogLine } from './request-log.js';
import { createTracing, endOperationSpan, nameOperationSpan, type TracingConfig, type TracingDependencies } from './tracing.js';

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
};

/** Paths answered by the gateway besides GraphQL. */
export const READINESS_PATH = '/readiness';
export const METRICS_PATH = '/metrics';
/** yoga's own liveness endpoint: 200 while the process serves requests. */
export const HEALTH_PATH = '/health';

/** The observability of one gateway. */
export type Observability = {
  /** the log, as yoga's logger */
  logger: YogaLogger;
  /** the log itself */
  log: Logger;
  /** last in the gateway's plugins, so that it sees results and responses as they leave */
  plugin: Plugin;
  /** given to the upstream clients: metrics, spans, log entries and headers of each upstream call */
  observeUpstream: UpstreamObserver;
  /** exports the spans still buffered */
  close(): Promise<void>;
};

/** GraphQL names only: anything else a client puts in `operationName` stays out of metrics and logs. */
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,127}$/;

/**
 * The credential values of a request: each credential header whole and, for `Bearer x`, the
 * token alone. Shorter than 4 characters they are left alone (redacting "a" garbles every line).
 */
function credentialValues(headers: Headers): string[] {
  const { bearer, apiKey } = readCredentials(headers);
  return [headers.get('authorization'), bearer, headers.get('api_key'), apiKey].filter((value): value is string => (value?.length ?? 0) >= 4);
}

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
export function createObservability(config: ObservabilityConfig, dependencies: ObservabilityDependencies = {}): Observability {
  const log = createLogger(config.logLevel, dependencies.logDestination);
  const metrics = config.metrics ? createMetrics() : undefined;
  const tracing = createTracing(config, dependencies);
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

  const plugin: Plugin = {
    instrumentation: {
      request({ request }, wrapped) {
        const record: RequestRecord = {
          id: requestIdFrom(request.headers.get('x-request-id')),
          started: performance.now(),
          method: request.method,
          path: new URL(request.url).pathname,
          operations: [],
          upstream: [],
          secrets: credentialValues(request.headers),
          ...(tracing ? { traceParent: tracing.extract(request.headers) } : {}),
          // Headers are only kept for a debug log, where the logger redacts the credentials among them.
          ...(log.isLevelEnabled('debug') ? { headers: Object.fromEntries(request.headers) } : {}),
        };
        return runInRequest(record, wrapped);
      },
      operation(_payload, wrapped) {
        const request = currentRequest();
        if (request === undefined) return wrapped();
        const operation: OperationRecord = { started: performance.now(), errorCodes: [] };
        if (tracing && request.traceParent) operation.span = tracing.startOperation(request.traceParent);
        request.operations.push(operation);
        return (async () => {
          try {
            await runInOperation(request, operation, wrapped);
          } finally {
            operation.ended = performance.now();
          }
        })();
      },
    },
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (request.method !== 'GET') return;
      if (url.pathname === METRICS_PATH && metrics) {
        const { contentType, body } = await metrics.render();
        endResponse(new fetchAPI.Response(body, { headers: { 'content-type': contentType, 'cache-control': 'no-store' } }));
      } else if (url.pathname === READINESS_PATH) {
        const readiness = await checkReadiness(
          (['petstore', 'plants'] as const).map((service) => ({ service, baseUrl: baseUrls[service] })),
          config.readinessTimeoutMs,
        );
        const failing = Object.entries(readiness.upstreams).flatMap(([service, result]) => (result.ready ? [] : [`${service} (${result.reason})`]));
        const body = failing.length > 0 ? { ...readiness, message: `not ready: ${failing.join(', ')}` } : readiness;
        endResponse(fetchAPI.Response.json(body, { status: readiness.status === 'ready' ? 200 : 503, headers: { 'cache-control': 'no-store' } }));
      }
    },
    onParams({ params }) {
      const operation = currentOperation();
      if (operation === undefined) return;
      if (typeof params.operationName === 'string' && GRAPHQL_NAME.test(params.operationName)) operation.name = params.operationName;
      currentRequest()?.secrets.push(...secretValues(params.variables, params.query));
      // Variables are only kept for a debug log, and redacted there.
      if (log.isLevelEnabled('debug')) operation.variables = params.variables;
    },
    onExecute({ args }) {
      const operation = currentOperation();
      if (operation === undefined) return;
      const definition = getOperationAST(args.document, args.operationName);
      if (definition) {
        operation.type = definition.operation;
        operation.name = definition.name?.value;
      }
    },
    // Errors are counted in the result as it is sent: the plugins before this one have given every error its final code.
    onResultProcess({ result }) {
      const request = currentRequest();
      if (request === undefined) return;
      const results = Array.isArray(result) ? result : [result];
      // A request refused before any operation ran (unreadable body, no query) still counts its error.
      if (request.operations.length === 0 && errorCodes(result).length > 0) {
        request.operations.push({ started: request.started, ended: performance.now(), errorCodes: [] });
      }
      request.operations.forEach((operation, index) => {
        operation.errorCodes = errorCodes(request.operations.length === results.length ? results[index] : result);
        finishOperation(operation);
      });
    },
    onResponse({ response }) {
      const request = currentRequest();
      if (request === undefined) return;
      // An operation whose result was never processed (its request failed on the way) is finished here.
      for (const operation of request.operations) finishOperation(operation);
      response.headers.set('x-request-id', request.id);
      const line = requestLogLine(request, response.status);
      // Probes come every few seconds; they are only worth a line when debugging.
      const probe = request.method === 'GET' && (request.path === HEALTH_PATH || request.path === READINESS_PATH || request.path === METRICS_PATH);
      if (probe) log.debug(line.fields, line.message);
      else log.info(line.fields, line.message);
    },
  };

  const observeUpstream: UpstreamObserver = (call) => {
    const request = currentRequest();
    const span = tracing?.startUpstreamCall(currentOperation()?.span, { ...call, baseUrl: baseUrls[call.service] });
    // Recorded at its start: an answer can be sent while a call is still in flight (a failed
    // non-null field ends the operation at once), and the log line then shows it unfinished.
    const record: UpstreamCallRecord = { ...call };
    request?.upstream.push(record);
    return {
      headers: { ...(request ? { 'x-request-id': request.id } : {}), ...(span && tracing ? tracing.headersFor(span) : {}) },
      end(outcome) {
        metrics?.observeUpstreamCall(call, outcome);
        Object.assign(record, outcome);
        if (span && tracing) tracing.endUpstreamCall(span, outcome);
      },
    };
  };

  return { logger: yogaLogger(log), log, plugin, observeUpstream, close: async () => tracing?.shutdown() };
}
