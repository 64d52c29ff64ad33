/**
 * Settings of what the gateway tells its operators: logs, Prometheus metrics, readiness, and
 * OpenTelemetry traces.
 */
import { flag, integer, oneOf, ratio, type Setting, url } from './parse.js';

/** Logs, metrics, readiness and traces. */
export const OBSERVABILITY_SETTINGS = [
  {
    key: 'logLevel',
    env: 'LOG_LEVEL',
    default: 'info',
    description: 'least severe log level written: debug, info, warn or error',
    details:
      "least severe level written as JSON lines on stdout: `debug` (adds each request's headers and " +
      'variables, secrets redacted, and each retry), `info`, `warn`, `error`. See ' +
      '[Logs](operations.md#logs)',
    parse: oneOf('debug', 'info', 'warn', 'error'),
  },
  {
    key: 'requestLogSample',
    env: 'REQUEST_LOG_SAMPLE',
    default: '1',
    productionDefault: '0.01',
    description: 'share of the requests that went well whose info line is written; a failed one always is',
    details:
      'share of the requests that went well whose `info` line is written, from 0 to 1 (`0`: only failed ' +
      'requests); a failed request always has its line. See [Logs](operations.md#logs)',
    parse: ratio,
  },
  {
    key: 'metrics',
    env: 'METRICS',
    default: 'true',
    description: 'serve Prometheus metrics at /metrics: true or false',
    details: 'serve Prometheus metrics at `GET /metrics` (see [Metrics](metrics.md))',
    parse: flag,
  },
  {
    key: 'readinessTimeoutMs',
    env: 'READINESS_TIMEOUT_MS',
    default: '2000',
    description: 'how long /readiness waits for each upstream to answer, in milliseconds',
    details: 'how long `GET /readiness` waits for each upstream to answer',
    parse: integer(1, 60_000),
  },
  {
    key: 'otelSdkDisabled',
    env: 'OTEL_SDK_DISABLED',
    default: 'false',
    description: 'true turns OpenTelemetry tracing off whatever the other OTEL_* settings say',
    details: '`true` turns tracing off whatever else is set',
    parse: flag,
  },
  {
    key: 'otelTracesExporter',
    env: 'OTEL_TRACES_EXPORTER',
    default: undefined,
    description: 'where spans go: otlp, console or none (unset: otlp if an OTLP endpoint is set, else tracing is off)',
    details:
      '`otlp`, `console` (spans written to stdout) or `none`; unset: `otlp` when an OTLP endpoint is set, else ' +
      'tracing is off',
    parse: oneOf('otlp', 'console', 'none'),
  },
  {
    key: 'otlpEndpointUrl',
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    default: undefined,
    description: 'OTLP/HTTP collector base URL; traces go to {it}/v1/traces (setting it turns tracing on)',
    details:
      'OTLP/HTTP collector base URL (spans go to `{it}/v1/traces`); setting it turns tracing on; unset: no ' +
      'spans unless `OTEL_TRACES_EXPORTER` asks. See [Tracing](operations.md#tracing)',
    parse: url,
  },
  {
    key: 'otlpTracesEndpointUrl',
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    default: undefined,
    description: 'full OTLP/HTTP URL for traces, used as is (setting it turns tracing on)',
    details:
      'full OTLP/HTTP URL for spans, used as is; wins over the one above and also turns tracing on; unset: ' +
      '`{OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`',
    parse: url,
  },
  {
    key: 'otelServiceName',
    env: 'OTEL_SERVICE_NAME',
    default: 'petstore-graphql-gateway',
    description: 'service.name of the spans',
    details: '`service.name` of the spans',
    parse: (raw: string) => raw,
  },
  {
    key: 'otelTracesSampler',
    env: 'OTEL_TRACES_SAMPLER',
    default: 'parentbased_always_on',
    description:
      'sampler: always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or ' +
      'parentbased_traceidratio',
    details:
      '`always_on`, `always_off`, `traceidratio`, `parentbased_always_on`, `parentbased_always_off`, ' +
      '`parentbased_traceidratio`',
    parse: oneOf(
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ),
  },
  {
    key: 'otelTracesSamplerArg',
    env: 'OTEL_TRACES_SAMPLER_ARG',
    default: '1',
    description: 'ratio of traces sampled by the traceidratio samplers, from 0 to 1',
    details: 'the share of traces the `traceidratio` samplers keep, from `0` (none) to `1` (all)',
    parse: ratio,
  },
] as const satisfies readonly Setting[];
