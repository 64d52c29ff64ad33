/**
 * The gateway's own span exporters. `OTEL_TRACES_EXPORTER=console` writes each finished span as
 * one JSON line of the log (the SDK's ConsoleSpanExporter prints multi-line object dumps on
 * stdout, in between the log's lines). The OTLP exporter is watched: a collector that refuses,
 * times out or answers an error is one warning line per outage, and its return one info line,
 * where the SDK says nothing at all.
 */
import { AsyncResource } from 'node:async_hooks';
import { SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from './logger.js';
import { redact, redactFields, REDACTED } from '../secrets.js';

/** @opentelemetry/core, which tracing loads on demand (see `tracing.ts`): only its type is imported here. */
type Core = typeof import('@opentelemetry/core');

/** Longest failure reason a warning quotes: a status text or a socket error, never a response body. */
const MAX_REASON_LENGTH = 200;

/**
 * `attributes` with the value of every attribute named like a secret (by its last dotted
 * segment: `http.request.header.authorization`, `app.password`) replaced by `[redacted]`. The
 * gateway sets none; this keeps one that a later change adds out of the log.
 */
function redactedAttributes(attributes: Attributes): Attributes {
  return Object.fromEntries(
    Object.entries(attributes).map(([key, value]) => {
      const name = key.slice(key.lastIndexOf('.') + 1);
      // redactFields holds the one list of secret names: asked about this attribute's last segment alone.
      const secret = (redactFields({ [name]: value }) as Record<string, unknown>)[name] === REDACTED;
      return [key, secret ? REDACTED : value];
    }),
  );
}

/** The fields of a span's log line: its identity, its place in its trace, its timing, its outcome. */
function spanLogFields(
  span: ReadableSpan,
  { hrTimeToMilliseconds, hrTimeToTimeStamp }: Pick<Core, 'hrTimeToMilliseconds' | 'hrTimeToTimeStamp'>,
): Record<string, unknown> {
  const { traceId, spanId } = span.spanContext();
  return {
    traceId,
    spanId,
    ...(span.parentSpanContext ? { parentSpanId: span.parentSpanContext.spanId } : {}),
    name: span.name,
    kind: SpanKind[span.kind],
    service: span.resource.attributes['service.name'],
    start: hrTimeToTimeStamp(span.startTime),
    durationMs: Math.round(hrTimeToMilliseconds(span.duration) * 1000) / 1000,
    status: SpanStatusCode[span.status.code],
    ...(span.status.message ? { statusMessage: span.status.message } : {}),
    attributes: redactedAttributes(span.attributes),
  };
}

/**
 * An exporter that writes each span as one `info` line of `log` (`{"span":{…},"msg":"span query
 * PetById"}`): pino's JSON, so span lines interleave whole with the request lines, and go
 * through the log's redaction like any other line.
 */
export function logSpanExporter(log: Logger, core: Core): SpanExporter {
  return {
    export(spans, done) {
      for (const span of spans) log.info({ span: spanLogFields(span, core) }, `span ${span.name}`);
      done({ code: core.ExportResultCode.SUCCESS });
    },
    shutdown: () => Promise.resolve(),
  };
}

/**
 * Why an export failed, fit for a log line: the HTTP status and its text, or the socket error
 * (`connect ECONNREFUSED 10.0.0.7:4318`, `Request timed out`); its first line only, without the
 * URL's credentials or query. Never the collector's response body, never a stack.
 */
export function exportFailureReason(error: Error | undefined, url: URL): string {
  if (error === undefined) return 'no reason given';
  const code = 'code' in error ? error.code : undefined;
  // The OTLP exporter's OTLPExporterError carries the HTTP status as its code, the status text as its message.
  const reason =
    typeof code === 'number'
      ? `HTTP ${code}${error.message ? ` ${error.message}` : ''}`
      : // A refused localhost (IPv6 and IPv4 both tried) is an AggregateError with a code and no message.
        error.message || (typeof code === 'string' ? code : error.name);
  const secrets = [url.href, url.search, url.username, url.password].filter((part) => part !== '');
  const firstLine = reason.split('\n', 1)[0] ?? '';
  return redact(firstLine, secrets).slice(0, MAX_REASON_LENGTH);
}

/**
 * `exporter` (the OTLP one, sending to `url`), watched: the first failed export of an outage
 * logs one warning (where to, why, that spans are dropped meanwhile), the first export that
 * succeeds after it one info line. The endpoint is named by its origin: no credentials, no path
 * or query a token could hide in.
 */
export function watchedExporter(exporter: SpanExporter, url: string, log: Logger, core: Core): SpanExporter {
  const target = new URL(url);
  let failing = false;
  // Bound here, where the gateway is built: an export's callback runs in the async context of the
  // request whose span started the batch, and an outage is no request's (no requestId on its line).
  const observe = AsyncResource.bind((result: ExportResult) => {
    if (result.code === core.ExportResultCode.SUCCESS) {
      if (failing) log.info(`tracing: spans are sent to ${target.origin} again`);
      failing = false;
    } else if (!failing) {
      failing = true;
      log.warn(
        `tracing: spans could not be sent to ${target.origin} (${exportFailureReason(result.error, target)}); ` +
          'dropping spans until it answers',
      );
    }
  });
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        observe(result);
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
