/**
 * OpenTelemetry tracing, off unless the standard `OTEL_*` settings ask for it: a server span per
 * GraphQL operation (a child of the caller's `traceparent`, when it sent one) and a client span
 * per upstream call, whose context goes upstream as `traceparent`. Spans are given their parent
 * explicitly, so nothing is registered globally and several gateways can live in one process.
 * Spans go to an OTLP collector (an outage is one warning line of the log, its end one more) or,
 * with OTEL_TRACES_EXPORTER=console, into the log, one JSON line each (`span-exporters.ts`). A
 * stop waits at most {@link TRACING_STOP_MS} for the spans still buffered.
 */
import { createRequire } from 'node:module';
import {
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { Sampler, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Config } from '../config/index.js';
import type { Logger } from './logger.js';
import { logSpanExporter, watchedExporter } from './span-exporters.js';
import type { HeaderSource } from '../credentials.js';
import type { UpstreamCallOutcome } from '../upstream/http.js';
import type { UpstreamService } from '../upstream/failure.js';

/**
 * The SDK, the OTLP exporter and the W3C propagator, loaded on the first gateway that traces:
 * about 0.15 s and 8 MB at start that a gateway with tracing off (the default) never pays. These
 * packages are CommonJS (no `exports` map: `import` loads the same `build/src` files), so a
 * synchronous `require` keeps `createTracing` synchronous and loads the very modules an `import`
 * would, test doubles included.
 */
const requireOnDemand = createRequire(import.meta.url);

type Sdk = {
  core: typeof import('@opentelemetry/core');
  otlp: typeof import('@opentelemetry/exporter-trace-otlp-http');
  resources: typeof import('@opentelemetry/resources');
  traceBase: typeof import('@opentelemetry/sdk-trace-base');
};

function loadSdk(): Sdk {
  return {
    core: requireOnDemand('@opentelemetry/core') as Sdk['core'],
    otlp: requireOnDemand('@opentelemetry/exporter-trace-otlp-http') as Sdk['otlp'],
    resources: requireOnDemand('@opentelemetry/resources') as Sdk['resources'],
    traceBase: requireOnDemand('@opentelemetry/sdk-trace-base') as Sdk['traceBase'],
  };
}

/** The settings tracing reads. */
export type TracingConfig = Pick<
  Config,
  | 'otelSdkDisabled'
  | 'otelTracesExporter'
  | 'otlpEndpointUrl'
  | 'otlpTracesEndpointUrl'
  | 'otelServiceName'
  | 'otelTracesSampler'
  | 'otelTracesSamplerArg'
>;

/**
 * Where spans go, or undefined when tracing is off: `OTEL_TRACES_EXPORTER` when it is set;
 * otherwise OTLP as soon as an OTLP endpoint is configured. (The OpenTelemetry SDKs default to
 * OTLP on localhost; a gateway that nobody asked to trace sends nothing anywhere.)
 */
export function tracesExporter(config: TracingConfig): 'otlp' | 'console' | undefined {
  if (config.otelSdkDisabled) return undefined;
  if (config.otelTracesExporter !== undefined)
    return config.otelTracesExporter === 'none' ? undefined : config.otelTracesExporter;
  return config.otlpEndpointUrl !== undefined || config.otlpTracesEndpointUrl !== undefined ? 'otlp' : undefined;
}

/** The OTLP/HTTP URL spans are sent to, as the OpenTelemetry specification derives it. */
export function otlpTracesUrl(config: TracingConfig): string {
  return config.otlpTracesEndpointUrl ?? `${config.otlpEndpointUrl ?? 'http://localhost:4318'}/v1/traces`;
}

function sampler(
  config: TracingConfig,
  { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler }: Sdk['traceBase'],
): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.otelTracesSamplerArg);
  switch (config.otelTracesSampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}

/** The tracing of one gateway. */
export type Tracing = {
  /** the caller's trace context from its `traceparent` and `tracestate` headers (the root context when it sent none) */
  extract(headers: HeaderSource): Context;
  /**
   * starts the span of one GraphQL operation, begun at `startTime` (a `performance.now()` time);
   * name it with {@link nameOperationSpan} once its name is known
   */
  startOperation(parent: Context, startTime: number): Span;
  /** starts the span of one upstream call, a child of the operation's span (when there is one) */
  startUpstreamCall(
    parent: Span | undefined,
    call: { service: UpstreamService; operation: string; method: string; baseUrl: string },
  ): Span;
  /** ends an upstream call's span with what happened */
  endUpstreamCall(span: Span, outcome: UpstreamCallOutcome): void;
  /** the `traceparent` (and `tracestate`) headers that make the upstream's spans children of `span` */
  headersFor(span: Span): Record<string, string>;
  /**
   * exports the spans still buffered and stops, within {@link TRACING_STOP_MS}; never rejects (a
   * failed last export has had its warning)
   */
  shutdown(): Promise<void>;
};

/** What tracing may be built with instead of what the configuration says (tests: an in-memory exporter). */
export type TracingDependencies = {
  /** receives every span as soon as it ends (a SimpleSpanProcessor); tracing is on whatever the settings say */
  spanExporter?: SpanExporter;
};

/**
 * How long a stop waits for the spans still buffered to be sent, in milliseconds. The OTLP
 * exporter gives a collector up to OTEL_EXPORTER_OTLP_TIMEOUT (10 s by default) per export and
 * retries within it: a collector that accepts connections and never answers would hold the
 * gateway's stop that long. The gateway closes after its requests (within SHUTDOWN_GRACE_MS) and
 * a stop must end within 2 s of that grace, so tracing gets 1.5 s of them: after that the spans
 * still unsent are dropped, with a warning, and the stop goes on.
 */
export const TRACING_STOP_MS = 1500;

/** Shuts `provider` down, waiting for it at most {@link TRACING_STOP_MS}. */
async function stopWithin(provider: { shutdown(): Promise<void> }, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(resolve, TRACING_STOP_MS, 'late');
  });
  // A last export that failed has been reported by the watched exporter; the stop goes on without it.
  const stopped = provider.shutdown().then(
    () => 'stopped' as const,
    () => 'failed' as const,
  );
  try {
    if ((await Promise.race([stopped, late])) === 'late')
      log.warn(`tracing: spans not sent within ${TRACING_STOP_MS} ms of the stop are dropped`);
  } finally {
    clearTimeout(timer);
  }
}

/** Where spans go: the test's exporter, the log (console), or an OTLP collector, watched. */
function spanProcessor(
  config: TracingConfig,
  kind: 'otlp' | 'console' | undefined,
  log: Logger,
  sdk: Sdk,
  spanExporter: SpanExporter | undefined,
) {
  const { BatchSpanProcessor, SimpleSpanProcessor } = sdk.traceBase;
  if (spanExporter) return new SimpleSpanProcessor(spanExporter);
  // One line per span as it ends, in the log's own stream (the SDK's console exporter dumps objects on stdout).
  if (kind === 'console') return new SimpleSpanProcessor(logSpanExporter(log, sdk.core));
  const url = otlpTracesUrl(config);
  return new BatchSpanProcessor(watchedExporter(new sdk.otlp.OTLPTraceExporter({ url }), url, log, sdk.core));
}

/**
 * Builds the tracing of a gateway, or undefined when it is off. `log` receives the spans with
 * OTEL_TRACES_EXPORTER=console, and the warning when an OTLP collector cannot be reached.
 */
export function createTracing(
  config: TracingConfig,
  log: Logger,
  dependencies: TracingDependencies = {},
): Tracing | undefined {
  const kind = tracesExporter(config);
  if (dependencies.spanExporter === undefined && kind === undefined) return undefined;
  const sdk = loadSdk();
  const { BasicTracerProvider } = sdk.traceBase;
  const { defaultResource, resourceFromAttributes } = sdk.resources;
  const processor = spanProcessor(config, kind, log, sdk, dependencies.spanExporter);
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': config.otelServiceName })),
    sampler: sampler(config, sdk.traceBase),
    spanProcessors: [processor],
  });
  const tracer: Tracer = provider.getTracer('petstore-graphql-gateway');
  const propagator = new sdk.core.W3CTraceContextPropagator();

  return {
    // The W3C propagator asks for its two headers by name; it never lists the carrier's keys.
    extract: (headers) =>
      propagator.extract(ROOT_CONTEXT, headers, {
        keys: () => ['traceparent', 'tracestate'],
        get: (carrier: typeof headers, key) => carrier.get(key) ?? undefined,
      }),
    startOperation: (parent, startTime) =>
      tracer.startSpan('GraphQL Operation', { kind: SpanKind.SERVER, startTime }, parent),
    startUpstreamCall(parent, call) {
      const { hostname, port, protocol } = new URL(call.baseUrl);
      return tracer.startSpan(
        `${call.method} ${call.operation}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'http.request.method': call.method,
            'server.address': hostname,
            'server.port': Number(port || (protocol === 'https:' ? 443 : 80)),
            'upstream.service': call.service,
            'upstream.operation': call.operation,
          },
        },
        parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT,
      );
    },
    endUpstreamCall(span, outcome) {
      if (outcome.status !== undefined) span.setAttribute('http.response.status_code', outcome.status);
      if (outcome.retries > 0) span.setAttribute('http.request.resend_count', outcome.retries);
      if (outcome.failure !== undefined) {
        span.setAttribute(
          'error.type',
          outcome.status !== undefined && outcome.failure === 'status' ? String(outcome.status) : outcome.failure,
        );
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
    headersFor(span) {
      const headers: Record<string, string> = {};
      propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
      return headers;
    },
    shutdown: () => stopWithin(provider, log),
  };
}

/**
 * Names an operation's span as OpenTelemetry's GraphQL conventions do (`query PetById`) and records its name and type.
 */
export function nameOperationSpan(span: Span, operation: { name?: string; type?: string }): void {
  if (operation.type === undefined) return;
  span.updateName(operation.name === undefined ? operation.type : `${operation.type} ${operation.name}`);
  span.setAttribute('graphql.operation.type', operation.type);
  if (operation.name !== undefined) span.setAttribute('graphql.operation.name', operation.name);
}

/**
 * Ends an operation's span (at `endedAt`, a `performance.now()` time), marked as failed when its result carried errors.
 */
export function endOperationSpan(span: Span, errorCodes: readonly string[], endedAt: number): void {
  if (errorCodes.length > 0) {
    span.setAttribute('graphql.error.codes', [...new Set(errorCodes)]);
    span.setStatus({ code: SpanStatusCode.ERROR, message: [...new Set(errorCodes)].join(', ') });
  }
  span.end(endedAt);
}
