/**
 * OpenTelemetry tracing: off by default, switched on by the standard OTEL_* settings; a server
 * span per GraphQL operation, a client span per upstream call, and the trace context sent
 * upstream as `traceparent`, so that the upstream's spans join the same trace.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/index.js';
import { createGateway } from '../src/gateway.js';
import { otlpTracesUrl, tracesExporter } from '../src/observability/tracing.js';
import { useObserved } from './helpers/observed.js';
import { captureLog, listen, postGraphQL, stop, testConfig } from './helpers/stack.js';

/** `00-<trace id>-<parent span id>-<flags>` */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

// A fresh one per test: closing a gateway shuts its exporter down.
let exporter = new InMemorySpanExporter();
beforeEach(() => {
  exporter = new InMemorySpanExporter();
});
const observed = useObserved();

function parsedTraceparent(value: string | undefined) {
  const match = TRACEPARENT.exec(value ?? '');
  if (!match) throw new Error(`not a traceparent: ${value}`);
  return { traceId: match[1], parentSpanId: match[2] };
}

describe('the OTEL_* settings', () => {
  it('leave tracing off by default', () => {
    expect(tracesExporter(loadConfig([], {}))).toBeUndefined();
  });

  it.each([
    [
      'an OTLP endpoint',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
      'otlp',
      'http://collector:4318/v1/traces',
    ],
    [
      'a traces endpoint, used as is',
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom/traces' },
      'otlp',
      'http://collector:4318/custom/traces',
    ],
    [
      'OTEL_TRACES_EXPORTER=otlp alone (the default collector)',
      { OTEL_TRACES_EXPORTER: 'otlp' },
      'otlp',
      'http://localhost:4318/v1/traces',
    ],
    ['OTEL_TRACES_EXPORTER=console', { OTEL_TRACES_EXPORTER: 'console' }, 'console', 'http://localhost:4318/v1/traces'],
  ])('turn it on with %s', (_, env, kind, url) => {
    const config = loadConfig([], env);

    expect(tracesExporter(config)).toBe(kind);
    expect(otlpTracesUrl(config)).toBe(url);
  });

  it.each([
    [
      'OTEL_TRACES_EXPORTER=none',
      { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
    ],
    ['OTEL_SDK_DISABLED=true', { OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }],
  ])('keep it off with %s, whatever else is set', (_, env) => {
    expect(tracesExporter(loadConfig([], env))).toBeUndefined();
  });

  it.each([
    [{ OTEL_TRACES_EXPORTER: 'jaeger' }, 'OTEL_TRACES_EXPORTER must be one of otlp, console, none, got "jaeger"'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL'],
    [{ OTEL_TRACES_SAMPLER: 'sometimes' }, /^OTEL_TRACES_SAMPLER must be one of always_on, /],
    [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "1.5"'],
  ])('stop the start with a message naming a bad one: %o', (env, message) => {
    expect(() => loadConfig([], env)).toThrow(ConfigError);
    expect(() => loadConfig([], env)).toThrow(message);
  });
});

describe('with tracing on', () => {
  it('makes a server span per operation and a client span per upstream call, and sends their context upstream', async () => {
    const gateway = await observed.serve(undefined, {}, { spanExporter: exporter });

    await gateway.gql('query PetAndOrder { pet(id: 1) { name } order(id: 2) { id } }', {}, { api_key: 'demo' });

    const spans = exporter.getFinishedSpans();
    const operation = spans.find((span) => span.kind === SpanKind.SERVER);
    const calls = spans.filter((span) => span.kind === SpanKind.CLIENT);
    expect(spans).toHaveLength(3);
    expect(operation).toMatchObject({
      name: 'query PetAndOrder',
      attributes: { 'graphql.operation.type': 'query', 'graphql.operation.name': 'PetAndOrder' },
    });
    expect(operation?.resource.attributes['service.name']).toBe('petstore-graphql-gateway');
    expect(calls.map((span) => span.name).sort()).toEqual(['GET getOrderById', 'GET getPetById']);
    for (const call of calls) {
      expect(call.spanContext().traceId).toBe(operation?.spanContext().traceId);
      expect(call.parentSpanContext?.spanId).toBe(operation?.spanContext().spanId);
      expect(call.attributes).toMatchObject({
        'http.request.method': 'GET',
        'http.response.status_code': 200,
        'upstream.service': 'petstore',
        'server.address': '127.0.0.1',
      });
    }

    // What the observed.emulator received: each call's own span as the parent, in the operation's trace.
    const received = observed.emulator.requests.map((request) => ({
      path: request.path,
      ...parsedTraceparent(request.headers['traceparent']),
    }));
    const byName = (name: string) => calls.find((span) => span.name === name) as ReadableSpan;
    expect(received.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      {
        path: '/api/v3/pet/1',
        traceId: operation?.spanContext().traceId,
        parentSpanId: byName('GET getPetById').spanContext().spanId,
      },
      {
        path: '/api/v3/store/order/2',
        traceId: operation?.spanContext().traceId,
        parentSpanId: byName('GET getOrderById').spanContext().spanId,
      },
    ]);
  });

  it("continues the caller's trace (its traceparent)", async () => {
    const gateway = await observed.serve(undefined, {}, { spanExporter: exporter });
    const callerTrace = '0af7651916cd43dd8448eb211c80319c';
    const callerSpan = 'b7ad6b7169203331';

    await gateway.gql('query Order { order(id: 1) { id } }', {}, { traceparent: `00-${callerTrace}-${callerSpan}-01` });

    const operation = exporter.getFinishedSpans().find((span) => span.kind === SpanKind.SERVER);
    expect(operation?.spanContext().traceId).toBe(callerTrace);
    expect(operation?.parentSpanContext?.spanId).toBe(callerSpan);
    expect(parsedTraceparent(observed.emulator.requests[0]?.headers['traceparent']).traceId).toBe(callerTrace);
  });

  it('marks failures: the operation with its error codes, the upstream call with its status', async () => {
    const gateway = await observed.serve(undefined, {}, { spanExporter: exporter });

    await gateway.gql('query Stock { inventory { entries { status } } }');

    const spans = exporter.getFinishedSpans();
    expect(spans.find((span) => span.kind === SpanKind.SERVER)).toMatchObject({
      name: 'query Stock',
      status: { code: SpanStatusCode.ERROR, message: 'UNAUTHENTICATED' },
      attributes: { 'graphql.error.codes': ['UNAUTHENTICATED'] },
    });
    expect(spans.find((span) => span.kind === SpanKind.CLIENT)).toMatchObject({
      name: 'GET getInventory',
      status: { code: SpanStatusCode.ERROR },
      attributes: { 'http.response.status_code': 401, 'error.type': '401' },
    });
  });

  it('sends spans to the OTLP/HTTP endpoint of OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    const exports: { path: string; contentType: string | undefined; body: string }[] = [];
    const collector = await listen(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      exports.push({
        path: request.url ?? '',
        contentType: request.headers['content-type'],
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'pets-under-test' };
    const traced = createGateway(
      testConfig({
        ...loadConfig([], env),
        petstoreUrl: observed.emulator.petstoreUrl,
        plantsUrl: observed.emulator.plantsUrl,
      }),
      { logDestination: captureLog() },
    );
    const served = await listen(traced.handler);
    try {
      await postGraphQL(`${served.url}/graphql`, 'query Order { order(id: 1) { id } }');
    } finally {
      await stop(served.server);
      // Closing exports what is still buffered.
      await traced.close();
      await stop(collector.server);
    }

    expect(exports.map((sent) => [sent.path, sent.contentType])).toEqual([['/v1/traces', 'application/json']]);
    const body = exports[0]?.body ?? '';
    expect(body).toContain('"query Order"');
    expect(body).toContain('"GET getOrderById"');
    expect(body).toContain('"pets-under-test"');
  });
});

describe('with tracing off (the default)', () => {
  it('sends no traceparent upstream', async () => {
    const gateway = await observed.serve();

    await gateway.gql(
      '{ order(id: 1) { id } }',
      {},
      { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    );

    expect(observed.emulator.requests[0]?.headers['traceparent']).toBeUndefined();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
