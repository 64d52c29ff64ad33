/**
 * Where spans go, seen from the operator's side: a collector that cannot be reached is one
 * warning line per outage and one line when it answers again, never a stack or the URL's
 * credentials; a collector that never answers does not hold the stop; OTEL_TRACES_EXPORTER=console
 * writes each span as one JSON line of the log.
 */
import { once } from 'node:events';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { SpanStatusCode } from '@opentelemetry/api';
import * as core from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../src/observability/logger.js';
import { exportFailureReason, logSpanExporter } from '../src/observability/span-exporters.js';
import { TRACING_STOP_MS } from '../src/observability/tracing.js';
import { useObserved } from './helpers/observed.js';
import { captureLog, serveObserved, stop, type CapturedLog } from './helpers/stack.js';

const observed = useObserved();
/** What a test started and stops when it ends, in this order (a gateway before its collector). */
const started: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const stopIt of started.splice(0)) await stopIt();
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** Waits (polling, not sleeping a fixed time) until `check` passes. */
const eventually = (check: () => void) => vi.waitFor(check, { timeout: 10_000, interval: 20 });

/** A port on 127.0.0.1 that nothing listens on: connections to it are refused. */
async function refusingPort(): Promise<number> {
  const server = createNetServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A collector on `port` that answers 200 to each POST /v1/traces and keeps what it received. */
async function answeringCollector(port: number): Promise<{ server: Server; received: string[] }> {
  const received: string[] = [];
  const server = createHttpServer((request, response) => {
    received.push(`${request.method} ${request.url}`);
    request.resume();
    request.on('end', () => {
      const known = request.method === 'POST' && request.url === '/v1/traces';
      response.writeHead(known ? 200 : 404, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return { server, received };
}

/** Each export the OTLP exporter reports as failed, as it reports it (after the gateway has heard of it). */
function failedExports(): unknown[] {
  const failures: unknown[] = [];
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with `.call(this, …)`, on its exporter
  const original = OTLPTraceExporter.prototype.export;
  vi.spyOn(OTLPTraceExporter.prototype, 'export').mockImplementation(function (this: OTLPTraceExporter, spans, done) {
    original.call(this, spans, (result) => {
      done(result);
      if (result.code !== core.ExportResultCode.SUCCESS) failures.push(result.error);
    });
  });
  return failures;
}

const tracingLines = (log: CapturedLog) =>
  log.lines().filter((line) => typeof line['msg'] === 'string' && line['msg'].startsWith('tracing:'));

describe('an OTLP collector that cannot be reached', () => {
  it('is one warning line however many exports fail, and one line when it answers again', async () => {
    // Exports as soon as spans end, and no retry within an export: each request's spans are one failed export.
    vi.stubEnv('OTEL_BSP_SCHEDULE_DELAY', '10');
    vi.stubEnv('OTEL_EXPORTER_OTLP_TIMEOUT', '750');
    const port = await refusingPort();
    const failures = failedExports();
    const gateway = await serveObserved(observed.emulator, {
      otlpEndpointUrl: `http://otel-user:otel-secret-pass@127.0.0.1:${port}`,
    });
    started.push(() => gateway.close());

    for (let request = 1; request <= 3; request++) {
      await gateway.gql('query Order { order(id: 1) { id } }');
      await eventually(() => expect(failures.length).toBeGreaterThanOrEqual(request));
    }

    const [warning, ...others] = tracingLines(gateway.log);
    expect(others).toEqual([]);
    expect(warning).toMatchObject({
      level: 'warn',
      msg:
        `tracing: spans could not be sent to http://127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port}); ` +
        'dropping spans until it answers',
    });
    // An outage is no request's: no request id on its line; and no error object, no stack.
    expect(Object.keys(warning ?? {}).sort()).toEqual(['hostname', 'level', 'msg', 'pid', 'time']);

    const collector = await answeringCollector(port);
    started.push(() => stop(collector.server));
    await gateway.gql('query Order { order(id: 1) { id } }');
    await eventually(() => expect(tracingLines(gateway.log)).toHaveLength(2));

    expect(tracingLines(gateway.log)[1]).toMatchObject({
      level: 'info',
      msg: `tracing: spans are sent to http://127.0.0.1:${port} again`,
    });
    expect(collector.received[0]).toBe('POST /v1/traces');
    expect(gateway.log.text()).not.toMatch(/otel-user|otel-secret-pass|"stack"|\bat .*\.[jt]s:\d/);
  });

  it.each([
    ['an HTTP status', Object.assign(new Error('Service Unavailable'), { code: 503 }), 'HTTP 503 Service Unavailable'],
    [
      'a refused localhost (an AggregateError without a message)',
      Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' }),
      'ECONNREFUSED',
    ],
    ['a timeout', new Error('Request timed out'), 'Request timed out'],
    [
      "a message quoting the URL's credentials",
      new Error('getaddrinfo ENOTFOUND http://user:p4ssw0rd@collector:4318/v1/traces\n    at lookup (dns.js:1)'),
      'getaddrinfo ENOTFOUND [redacted]',
    ],
  ])('is reported with its reason: %s', (_, error, reason) => {
    expect(exportFailureReason(error, new URL('http://user:p4ssw0rd@collector:4318/v1/traces'))).toBe(reason);
  });
});

describe('an OTLP collector that never answers', () => {
  it('does not hold the gateway’s stop: close() resolves once TRACING_STOP_MS have passed', async () => {
    const requests: string[] = [];
    // Accepts each export and never answers it (the exporter would wait OTEL_EXPORTER_OTLP_TIMEOUT, 10 s, and retry).
    const collector = createHttpServer((request) => {
      requests.push(`${request.method} ${request.url}`);
    });
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
    const { port } = collector.address() as AddressInfo;
    started.push(() => stop(collector));
    const gateway = await serveObserved(observed.emulator, { otlpEndpointUrl: `http://127.0.0.1:${port}` });
    await gateway.gql('query Order { order(id: 1) { id } }');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });

    let closed = false;
    const closing = gateway.close().then(() => {
      closed = true;
    });
    // The stop sends the buffered spans: the collector has the export, and keeps it waiting.
    await eventually(() => expect(requests).toEqual(['POST /v1/traces']));
    expect(closed).toBe(false);

    await vi.advanceTimersByTimeAsync(TRACING_STOP_MS);

    await expect(closing).resolves.toBeUndefined();
    expect(tracingLines(gateway.log)).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: `tracing: spans not sent within ${TRACING_STOP_MS} ms of the stop are dropped`,
      }),
    ]);
  });
});

describe('OTEL_TRACES_EXPORTER=console', () => {
  it('writes each span as one JSON line of the log, with its trace, timing, status and attributes', async () => {
    const dumps = vi.spyOn(console, 'dir');
    const gateway = await observed.serve(undefined, { otelTracesExporter: 'console' });
    const callerTrace = '0af7651916cd43dd8448eb211c80319c';
    const callerSpan = 'b7ad6b7169203331';

    await gateway.gql('query Order { order(id: 1) { id } }', {}, { traceparent: `00-${callerTrace}-${callerSpan}-01` });

    // Every line of the log parses as JSON, each span's included.
    const lines = gateway.log.lines();
    const spans = lines.filter((line) => 'span' in line);
    expect(
      gateway.log
        .text()
        .split('\n')
        .filter((text) => text.includes('"span":{')),
    ).toHaveLength(2);
    expect(dumps).not.toHaveBeenCalled();
    const [call, operation] = spans;
    const timing = { start: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/), durationMs: expect.any(Number) };
    expect(operation).toMatchObject({
      level: 'info',
      msg: 'span query Order',
      span: {
        traceId: callerTrace,
        spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
        parentSpanId: callerSpan,
        name: 'query Order',
        kind: 'SERVER',
        service: 'petstore-graphql-gateway',
        ...timing,
        status: 'UNSET',
        attributes: { 'graphql.operation.type': 'query', 'graphql.operation.name': 'Order' },
      },
    });
    expect(call).toMatchObject({
      level: 'info',
      msg: 'span GET getOrderById',
      span: {
        traceId: callerTrace,
        parentSpanId: (operation?.['span'] as Record<string, unknown>)['spanId'],
        name: 'GET getOrderById',
        kind: 'CLIENT',
        ...timing,
        status: 'UNSET',
        attributes: {
          'http.request.method': 'GET',
          'http.response.status_code': 200,
          'server.address': '127.0.0.1',
          'upstream.service': 'petstore',
          'upstream.operation': 'getOrderById',
        },
      },
    });
  });

  it('writes a failed span with its status and message, and no attribute named like a secret', () => {
    const log = captureLog();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(logSpanExporter(createLogger('info', log), core))],
    });
    const span = provider.getTracer('test').startSpan('query Stock', {
      attributes: {
        'graphql.operation.name': 'Stock',
        'http.request.header.authorization': 'Bearer abc123',
        'app.password': 'hunter22',
      },
    });
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'UNAUTHENTICATED' });
    span.end();

    expect(log.lines()).toEqual([
      expect.objectContaining({
        msg: 'span query Stock',
        span: expect.objectContaining({
          status: 'ERROR',
          statusMessage: 'UNAUTHENTICATED',
          attributes: {
            'graphql.operation.name': 'Stock',
            'http.request.header.authorization': '[redacted]',
            'app.password': '[redacted]',
          },
        }),
      }),
    ]);
    expect(log.text()).not.toMatch(/abc123|hunter22/);
  });
});
