/**
 * Configuration: environment variables and the equivalent command-line flags, read once into
 * one frozen, typed object and validated at start. This is the only module that reads
 * `process.env`; a bad value stops the start with a message naming the setting.
 */
import { parseArgs } from 'node:util';
import type { BodyFormat } from './upstream/codec.js';
import type { UpstreamClientOptions } from './upstream/http.js';
import type { UpstreamService } from './upstream/failure.js';

/**
 * One setting, described once: the field it fills, its environment variable (its flag is derived
 * from it: `PETSTORE_URL` → `--petstore-url`, see {@link flagName}), its parser, its default and
 * its meaning (the text of `--help`). The type of each field of {@link Config} is derived from
 * its parser, and is `| undefined` exactly when the setting has no default.
 */
type Setting = {
  /** the field of the values read */
  key: string;
  /** the environment variable; the flag is its {@link flagName} */
  env: string;
  /** the value when nothing is set, as it would be written in the variable; undefined: unset */
  default: string | undefined;
  /** the default when NODE_ENV=production, where it differs */
  productionDefault?: string;
  /** what it means, for `--help` */
  description: string;
  /** reads a set value; throws a ConfigError naming `env` when it is malformed or out of range */
  parse: (raw: string, env: string) => unknown;
};

/**
 * The values a table of settings gives: each setting's field, typed by its parser (`| undefined` when
 * it has no default).
 */
type SettingValues<T extends readonly Setting[]> = {
  readonly [S in T[number] as S['key']]: S extends { default: string }
    ? ReturnType<S['parse']>
    : ReturnType<S['parse']> | undefined;
};

/** A setting that is missing its pair, malformed or out of range. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const integer = (min: number, max: number) => (raw: string, env: string) => {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max)
    throw new ConfigError(`${env} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
};
const oneOf =
  <T extends string>(...values: T[]) =>
  (raw: string, env: string): T => {
    const value = values.find((candidate) => candidate === raw.toLowerCase());
    if (!value) throw new ConfigError(`${env} must be one of ${values.join(', ')}, got "${raw}"`);
    return value;
  };
const url = (raw: string, env: string) => {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${env} must be an absolute http(s) URL`);
  }
  // The URL is not echoed: it may carry credentials.
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new ConfigError(`${env} must be an http(s) URL`);
  if (parsed.search || parsed.hash) throw new ConfigError(`${env} must not have a query or fragment`);
  return parsed.toString().replace(/\/+$/, '');
};
const flag = (raw: string, env: string) => oneOf('true', 'false')(raw, env) === 'true';
/** A Redis URL: `redis://` or `rediss://` (TLS), with an optional password and database index (`/2`). */
const redisUrl = (raw: string, env: string) => {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    // Not echoed: it may carry a password.
    throw new ConfigError(`${env} must be a redis:// or rediss:// URL`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new ConfigError(`${env} must be a redis:// or rediss:// URL, not ${parsed.protocol}//`);
  if (parsed.hostname === '') throw new ConfigError(`${env} must name a host`);
  if (!/^\/?\d*$/.test(parsed.pathname)) throw new ConfigError(`${env}: its path can only be a database index (/0)`);
  return raw;
};
const text = (raw: string) => raw;
/** `auto` (the cores this process may use) or a number of processes. */
const workers = (raw: string, env: string): number | 'auto' =>
  raw.toLowerCase() === 'auto' ? 'auto' : integer(1, 256)(raw, env);
/** A number from 0 to 1 (a sampling ratio). */
const ratio = (raw: string, env: string) => {
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || value > 1)
    throw new ConfigError(`${env} must be a number from 0 to 1, got "${raw}"`);
  return value;
};
/**
 * `Inventory=1000,Pet.tags=0`: a lifetime in milliseconds per type name or schema coordinate, kept as
 * its checked entries.
 */
const ttlPerType = (raw: string, env: string): readonly string[] =>
  raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      if (!/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)?=\d+$/.test(entry))
        throw new ConfigError(
          `${env} must be a list of Type=milliseconds (e.g. Inventory=1000,Pet=30000), got "${entry}"`,
        );
      return entry;
    });

/** `*` or a comma-separated list of origins (`https://app.example.com`: scheme, host, port; no path). */
const origins = (raw: string, env: string): readonly string[] => {
  const list = raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  for (const origin of list) {
    let parsed: URL | undefined;
    try {
      parsed = origin === '*' ? undefined : new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (origin !== '*' && parsed?.origin !== origin)
      throw new ConfigError(
        `${env} must be * or a comma-separated list of origins such as https://app.example.com, got "${origin}"`,
      );
  }
  return Object.freeze(list);
};

/**
 * Every setting of the gateway, each described once: its field, variable (and so flag), parser, default and meaning
 * (also the source of `--help` and of {@link Config}).
 */
export const SETTINGS = [
  {
    key: 'host',
    env: 'HOST',
    // Outside production GraphiQL has demo credentials and mutations are open: loopback only, unless asked.
    default: '127.0.0.1',
    productionDefault: '0.0.0.0',
    description: 'interface to listen on (0.0.0.0: every interface, as a container needs)',
    parse: (raw: string) => raw,
  },
  {
    key: 'port',
    env: 'PORT',
    default: '4000',
    description: 'port to listen on (0 picks a free one)',
    parse: integer(0, 65535),
  },
  {
    key: 'petstoreUrl',
    env: 'PETSTORE_URL',
    default: undefined,
    description: 'pet store base URL, ending in /api/v3 (unset with PLANTS_URL: embedded emulator)',
    parse: url,
  },
  {
    key: 'plantsUrl',
    env: 'PLANTS_URL',
    default: undefined,
    description: 'plant area base URL (unset with PETSTORE_URL: embedded emulator)',
    parse: url,
  },
  {
    key: 'emulator',
    env: 'EMULATOR',
    default: undefined,
    description:
      'true: serve the embedded emulator whatever the URLs say; false: never (unset: when neither URL is set, ' +
      'outside production)',
    parse: flag,
  },
  {
    key: 'workers',
    env: 'WORKERS',
    default: '1',
    productionDefault: 'auto',
    description:
      'processes serving requests: a number, or auto for the cores the process may use (its CPU quota included)',
    parse: workers,
  },
  {
    key: 'upstreamDedupe',
    env: 'UPSTREAM_DEDUPE',
    default: 'true',
    description:
      'identical upstream GETs in flight at the same time (same URL, Accept and credential) share one call: true or ' +
      'false',
    parse: flag,
  },
  {
    key: 'petstoreBodyFormat',
    env: 'PETSTORE_BODY_FORMAT',
    default: 'json',
    description: 'body format of POST/PUT /pet, POST /store/order, POST /user, PUT /user/{username}: json, xml or form',
    parse: oneOf<BodyFormat>('json', 'xml', 'form'),
  },
  {
    key: 'petstoreAccept',
    env: 'PETSTORE_ACCEPT',
    default: 'json',
    description: 'response format asked of the pet store: json or xml',
    parse: oneOf('json', 'xml'),
  },
  {
    key: 'upstreamTimeoutMs',
    env: 'UPSTREAM_TIMEOUT_MS',
    default: '10000',
    description: 'deadline of one upstream call, connect to last byte, retries included, in milliseconds',
    parse: integer(1, 600_000),
  },
  {
    key: 'upstreamConnectTimeoutMs',
    env: 'UPSTREAM_CONNECT_TIMEOUT_MS',
    default: undefined,
    description: 'time to connect to an upstream (TCP and TLS), in milliseconds (default: the call deadline)',
    parse: integer(1, 600_000),
  },
  {
    key: 'upstreamHeadersTimeoutMs',
    env: 'UPSTREAM_HEADERS_TIMEOUT_MS',
    default: undefined,
    description: 'time from sending a request to the response headers, in milliseconds (default: the call deadline)',
    parse: integer(1, 600_000),
  },
  {
    key: 'upstreamBodyTimeoutMs',
    env: 'UPSTREAM_BODY_TIMEOUT_MS',
    default: undefined,
    description: 'time from the response headers to the last body byte, in milliseconds (default: the call deadline)',
    parse: integer(1, 600_000),
  },
  {
    key: 'petstoreTimeoutMs',
    env: 'PETSTORE_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_TIMEOUT_MS for the pet store only',
    parse: integer(1, 600_000),
  },
  {
    key: 'petstoreConnectTimeoutMs',
    env: 'PETSTORE_CONNECT_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_CONNECT_TIMEOUT_MS for the pet store only',
    parse: integer(1, 600_000),
  },
  {
    key: 'petstoreHeadersTimeoutMs',
    env: 'PETSTORE_HEADERS_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_HEADERS_TIMEOUT_MS for the pet store only',
    parse: integer(1, 600_000),
  },
  {
    key: 'petstoreBodyTimeoutMs',
    env: 'PETSTORE_BODY_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_BODY_TIMEOUT_MS for the pet store only',
    parse: integer(1, 600_000),
  },
  {
    key: 'plantsTimeoutMs',
    env: 'PLANTS_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_TIMEOUT_MS for the plant area only',
    parse: integer(1, 600_000),
  },
  {
    key: 'plantsConnectTimeoutMs',
    env: 'PLANTS_CONNECT_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_CONNECT_TIMEOUT_MS for the plant area only',
    parse: integer(1, 600_000),
  },
  {
    key: 'plantsHeadersTimeoutMs',
    env: 'PLANTS_HEADERS_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_HEADERS_TIMEOUT_MS for the plant area only',
    parse: integer(1, 600_000),
  },
  {
    key: 'plantsBodyTimeoutMs',
    env: 'PLANTS_BODY_TIMEOUT_MS',
    default: undefined,
    description: 'UPSTREAM_BODY_TIMEOUT_MS for the plant area only',
    parse: integer(1, 600_000),
  },
  {
    key: 'upstreamRetries',
    env: 'UPSTREAM_RETRIES',
    default: '2',
    description: 'retries of an upstream GET after a connection error or a 502/503/504 (0: none)',
    parse: integer(0, 10),
  },
  {
    key: 'upstreamRetryBackoffMs',
    env: 'UPSTREAM_RETRY_BACKOFF_MS',
    default: '50',
    description: 'wait before the first retry, doubled for each further one and jittered, in milliseconds',
    parse: integer(1, 60_000),
  },
  {
    key: 'upstreamRetryBackoffMaxMs',
    env: 'UPSTREAM_RETRY_BACKOFF_MAX_MS',
    default: '1000',
    description: 'longest wait before one retry, in milliseconds',
    parse: integer(1, 600_000),
  },
  {
    key: 'upstreamConnections',
    env: 'UPSTREAM_CONNECTIONS',
    default: '32',
    description: 'parallel connections (and calls) per upstream',
    parse: integer(1, 1024),
  },
  {
    key: 'upstreamMaxResponseBytes',
    env: 'UPSTREAM_MAX_RESPONSE_BYTES',
    default: String(10 * 1024 * 1024),
    description: 'largest upstream response body, in bytes',
    parse: integer(1, 2 ** 31),
  },
  {
    key: 'uploadMaxBytes',
    env: 'UPLOAD_MAX_BYTES',
    default: String(10 * 1024 * 1024),
    description: 'largest uploaded file, in bytes',
    parse: integer(1, 2 ** 31),
  },
  {
    key: 'uploadMaxFiles',
    env: 'UPLOAD_MAX_FILES',
    default: '5',
    description: 'most files in one multipart upload request',
    parse: integer(1, 100),
  },
  {
    key: 'logLevel',
    env: 'LOG_LEVEL',
    default: 'info',
    description: 'least severe log level written: debug, info, warn or error',
    parse: oneOf('debug', 'info', 'warn', 'error'),
  },
  {
    key: 'metrics',
    env: 'METRICS',
    default: 'true',
    description: 'serve Prometheus metrics at /metrics: true or false',
    parse: flag,
  },
  {
    key: 'readinessTimeoutMs',
    env: 'READINESS_TIMEOUT_MS',
    default: '2000',
    description: 'how long /readiness waits for each upstream to answer, in milliseconds',
    parse: integer(1, 60_000),
  },
  {
    key: 'otelSdkDisabled',
    env: 'OTEL_SDK_DISABLED',
    default: 'false',
    description: 'true turns OpenTelemetry tracing off whatever the other OTEL_* settings say',
    parse: flag,
  },
  {
    key: 'otelTracesExporter',
    env: 'OTEL_TRACES_EXPORTER',
    default: undefined,
    description: 'where spans go: otlp, console or none (unset: otlp if an OTLP endpoint is set, else tracing is off)',
    parse: oneOf('otlp', 'console', 'none'),
  },
  {
    key: 'otlpEndpointUrl',
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    default: undefined,
    description: 'OTLP/HTTP collector base URL; traces go to {it}/v1/traces (setting it turns tracing on)',
    parse: url,
  },
  {
    key: 'otlpTracesEndpointUrl',
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    default: undefined,
    description: 'full OTLP/HTTP URL for traces, used as is (setting it turns tracing on)',
    parse: url,
  },
  {
    key: 'otelServiceName',
    env: 'OTEL_SERVICE_NAME',
    default: 'petstore-graphql-gateway',
    description: 'service.name of the spans',
    parse: (raw: string) => raw,
  },
  {
    key: 'otelTracesSampler',
    env: 'OTEL_TRACES_SAMPLER',
    default: 'parentbased_always_on',
    description:
      'sampler: always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or ' +
      'parentbased_traceidratio',
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
    parse: ratio,
  },
  {
    key: 'graphiql',
    env: 'GRAPHIQL',
    default: 'true',
    productionDefault: 'false',
    description:
      'serve GraphiQL at /graphql to browsers: true or false (false with TRUSTED_DOCUMENTS, which it cannot use)',
    parse: flag,
  },
  {
    key: 'shutdownGraceMs',
    env: 'SHUTDOWN_GRACE_MS',
    default: '10000',
    description: 'on SIGTERM/SIGINT, time in-flight requests get to finish, in milliseconds',
    parse: integer(0, 600_000),
  },
  {
    key: 'nodeEnv',
    env: 'NODE_ENV',
    default: 'development',
    description: 'production: INTROSPECTION and GRAPHIQL default to false',
    parse: (raw: string) => raw,
  },
  {
    key: 'introspection',
    env: 'INTROSPECTION',
    default: 'true',
    productionDefault: 'false',
    description: 'answer introspection (__schema, __type) and the federation SDL (_service): true or false',
    parse: flag,
  },
  {
    key: 'requestMaxBytes',
    env: 'REQUEST_MAX_BYTES',
    default: String(1024 * 1024),
    description: 'largest request body that is not an upload, in bytes',
    parse: integer(1, 2 ** 31),
  },
  {
    key: 'batchMaxOperations',
    env: 'BATCH_MAX_OPERATIONS',
    default: '0',
    description: 'most operations in one batched request (a JSON array body); 0 turns batching off',
    parse: integer(0, 1000),
  },
  {
    key: 'queryMaxDepth',
    env: 'QUERY_MAX_DEPTH',
    default: '10',
    description: 'deepest nesting of fields in an operation',
    parse: integer(1, 1000),
  },
  {
    key: 'queryMaxAliases',
    env: 'QUERY_MAX_ALIASES',
    default: '50',
    description: 'most aliases in an operation',
    parse: integer(0, 100_000),
  },
  {
    key: 'queryMaxTokens',
    env: 'QUERY_MAX_TOKENS',
    default: '2000',
    description: 'most tokens (names, punctuation, values) in a document',
    parse: integer(1, 10_000_000),
  },
  {
    key: 'inputMaxDepth',
    env: 'INPUT_MAX_DEPTH',
    default: '100',
    description:
      'deepest nesting of arrays and objects in variables and extensions, of brackets in a document, and of ' +
      'fragments spreading one another (checked before parsing)',
    // graphql-js parses recursively: past about 1,500 levels its stack overflows.
    parse: integer(1, 500),
  },
  {
    key: 'queryMaxDirectives',
    env: 'QUERY_MAX_DIRECTIVES',
    default: '20',
    description: 'most directives in an operation',
    parse: integer(0, 100_000),
  },
  {
    key: 'queryMaxCost',
    env: 'QUERY_MAX_COST',
    default: '1000',
    description: 'highest estimated cost of an operation (1 per scalar, 2 per object, times 1.5 per level)',
    parse: integer(1, 100_000_000),
  },
  {
    key: 'listArgumentMaxItems',
    env: 'LIST_ARGUMENT_MAX_ITEMS',
    default: '100',
    description: 'most items in one list argument (pets ids, tags, statuses, users, photo URLs)',
    parse: integer(1, 1_000_000),
  },
  {
    key: 'upstreamMaxCallsPerOperation',
    env: 'UPSTREAM_MAX_CALLS_PER_OPERATION',
    default: '200',
    description: 'most upstream calls one operation makes; further calls fail with UPSTREAM_FANOUT_LIMIT',
    parse: integer(1, 1_000_000),
  },
  {
    key: 'rateLimitPerMinute',
    env: 'RATE_LIMIT_PER_MINUTE',
    default: '0',
    description: 'requests per minute of one client (its credential, else its address); 0: no limit',
    parse: integer(0, 100_000_000),
  },
  {
    key: 'rateLimitAddressPerMinute',
    env: 'RATE_LIMIT_ADDRESS_PER_MINUTE',
    default: '0',
    description: 'requests per minute from one address, whatever credentials they carry; 0: no limit',
    parse: integer(0, 100_000_000),
  },
  {
    key: 'trustProxyHops',
    env: 'TRUST_PROXY_HOPS',
    default: '0',
    description: 'proxies in front of the gateway whose X-Forwarded-For entry gives the client address',
    parse: integer(0, 10),
  },
  {
    key: 'csrfPrevention',
    env: 'CSRF_PREVENTION',
    default: 'true',
    description: 'require a CSRF header (x-graphql-csrf) on GET, form and multipart requests: true or false',
    parse: flag,
  },
  {
    key: 'corsOrigins',
    env: 'CORS_ORIGINS',
    default: undefined,
    description: 'origins whose pages may call the gateway (comma-separated), or *; unset: same origin only',
    parse: origins,
  },
  {
    key: 'trustedDocuments',
    env: 'TRUSTED_DOCUMENTS',
    default: undefined,
    description: 'path of a trusted documents manifest (JSON: hash -> document); set: only those documents run',
    parse: (raw: string) => raw,
  },
  {
    key: 'responseCacheTtlMs',
    env: 'RESPONSE_CACHE_TTL_MS',
    default: '0',
    description:
      'serve repeated identical queries of one caller from memory for this long, in milliseconds; 0: no response cache',
    parse: integer(0, 86_400_000),
  },
  {
    key: 'responseCacheTtlPerType',
    env: 'RESPONSE_CACHE_TTL_PER_TYPE',
    default: undefined,
    description:
      'cache lifetime of answers holding a type or field, in milliseconds: Type=ms,Type.field=ms (e.g. Inventory=1000)',
    parse: ttlPerType,
  },
  {
    key: 'apq',
    env: 'APQ',
    default: 'true',
    description:
      'automatic persisted queries (Apollo APQ): a document sent once with its sha256 hash runs by hash after; ' +
      'true or false (off while TRUSTED_DOCUMENTS is set)',
    parse: flag,
  },
  {
    key: 'apqMaxDocuments',
    env: 'APQ_MAX_DOCUMENTS',
    default: '1000',
    description: 'most APQ documents kept in this process (without REDIS_URL); the least recently used go first',
    parse: integer(1, 1_000_000),
  },
  {
    key: 'redisUrl',
    env: 'REDIS_URL',
    default: undefined,
    description:
      'redis:// or rediss:// URL (password and database index allowed) of the Redis that every process and ' +
      'replica shares: rate-limit counters, response cache, APQ documents',
    parse: redisUrl,
  },
  {
    key: 'redisKeyPrefix',
    env: 'REDIS_KEY_PREFIX',
    default: 'rest-graphql-gateway:',
    description: 'prefix of every key the gateway writes to Redis, so that several deployments can share one',
    parse: text,
  },
  {
    key: 'redisTimeoutMs',
    env: 'REDIS_TIMEOUT_MS',
    default: '100',
    description: 'longest wait for one Redis command, in milliseconds; then the request goes on without it',
    parse: integer(1, 60_000),
  },
  {
    key: 'redisRequired',
    env: 'REDIS_REQUIRED',
    default: 'false',
    description: '/readiness answers 503 while Redis is unreachable (otherwise it is reported as degraded, 200)',
    parse: flag,
  },
  {
    key: 'rateLimitFailClosed',
    env: 'RATE_LIMIT_FAIL_CLOSED',
    default: 'false',
    description: 'while Redis is unreachable, refuse requests with 503 instead of letting them through unlimited',
    parse: flag,
  },
] as const satisfies readonly Setting[];

/** The values of the gateway's settings as they were set, or defaulted: one field per entry of {@link SETTINGS}. */
type SettingsAsSet = SettingValues<typeof SETTINGS>;

/**
 * The twelve timeout settings (a deadline and three phases, shared and per area): {@link Config} has
 * them resolved, one object per area.
 */
type TimeoutKey = `${'upstream' | UpstreamService}${'' | 'Connect' | 'Headers' | 'Body'}TimeoutMs`;

/** The timeouts of one upstream area, in milliseconds, each resolved to the value that applies. */
export type UpstreamTimeouts = UpstreamClientOptions['timeouts'];

/**
 * The gateway's configuration. One field per entry of {@link SETTINGS}, named by its `key` and
 * typed by its parser (its variable, flag, default and meaning are in that entry, in `--help` and
 * in the README's table), except the twelve timeout settings, which come resolved, one object
 * per upstream area.
 */
export type Config = Readonly<
  Omit<SettingsAsSet, TimeoutKey> & {
    /**
     * Each area's timeouts. Each comes from the area's own setting (`PETSTORE_HEADERS_TIMEOUT_MS`),
     * else the shared one (`UPSTREAM_HEADERS_TIMEOUT_MS`), else the area's call deadline
     * (`PETSTORE_TIMEOUT_MS`, else `UPSTREAM_TIMEOUT_MS`): with only `UPSTREAM_TIMEOUT_MS` set, it
     * bounds every phase, as it did before the phases could be set apart.
     * @default every timeout of both areas is UPSTREAM_TIMEOUT_MS's default
     */
    upstreamTimeouts: Readonly<Record<UpstreamService, UpstreamTimeouts>>;
  }
>;

/** Settings → values: flags first, then the environment, then the default; empty counts as unset. */
function readSettings<T extends readonly Setting[]>(
  settings: T,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): SettingValues<T> {
  let flags: Record<string, string | boolean | undefined>;
  try {
    flags = parseArgs({
      args: [...argv],
      options: Object.fromEntries(
        settings.map((setting) => [flagName(setting.env).slice(2), { type: 'string' as const }]),
      ),
      strict: true,
    }).values;
  } catch (error) {
    throw new ConfigError(commandLineError(error, settings));
  }
  const values: Record<string, unknown> = {};
  // NODE_ENV=production switches the settings that have a production default to it.
  const production =
    [flags['node-env'], env['NODE_ENV']].find((value) => typeof value === 'string' && value !== '') === 'production';
  for (const setting of settings) {
    const given = flags[flagName(setting.env).slice(2)];
    // An empty value (`PORT=` in an env file) means "not set", as it does for most tools.
    const fallback =
      production && setting.productionDefault !== undefined ? setting.productionDefault : setting.default;
    const raw =
      [typeof given === 'string' ? given : undefined, env[setting.env]].find(
        (value) => value !== undefined && value !== '',
      ) ?? fallback;
    if (raw !== undefined) values[setting.key] = setting.parse(raw, setting.env);
  }
  // Each value came from its own setting's parser, so each field has the type SettingValues gives it.
  return values as SettingValues<T>;
}

/** What is wrong with the command line, with the setting meant when a flag is misspelt. */
function commandLineError(error: unknown, settings: readonly Setting[]): string {
  const message = error instanceof Error ? error.message : 'unreadable command line';
  const unknown = /^Unknown option '(--?[^']*)'/.exec(message)?.[1];
  if (unknown === undefined) return `${message.split('. ')[0] ?? message}; see --help`;
  const flags = [...settings.map((setting) => flagName(setting.env)), '--help', '--print-schema'];
  const meant = closestName(unknown.replace(/=.*/, ''), flags);
  const setting = settings.find((each) => flagName(each.env) === meant);
  const suggestion = meant === undefined ? '' : ` Did you mean ${meant}${setting ? ` (${setting.env})` : ''}?`;
  return `Unknown option '${unknown}'.${suggestion} See --help for every setting.`;
}

/**
 * The candidate closest to `name` (edit distance, a swap of neighbours counting one), when it is
 * close enough to be a misspelling of it: for "did you mean" messages.
 */
export function closestName(name: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (best === undefined || distance < best.distance) best = { candidate, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(name.length / 3)) ? best.candidate : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => rows[i]?.[j] ?? Infinity;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        distance = Math.min(distance, at(i - 2, j - 2) + 1);
      (rows[i] as number[])[j] = distance;
    }
  }
  return at(a.length, b.length);
}

const EMULATOR_SETTINGS = [
  {
    key: 'host',
    env: 'EMULATOR_HOST',
    default: '127.0.0.1',
    description: 'interface the emulator listens on',
    parse: (raw: string) => raw,
  },
  {
    key: 'port',
    env: 'EMULATOR_PORT',
    default: '4010',
    description: 'port the emulator listens on',
    parse: integer(0, 65535),
  },
] as const satisfies readonly Setting[];

/**
 * Settings of the emulator run alone (`npm run emulator`): `host` (EMULATOR_HOST, default 127.0.0.1) and `port`
 * (EMULATOR_PORT, default 4010).
 */
export type EmulatorConfig = Readonly<SettingValues<typeof EMULATOR_SETTINGS>>;

/**
 * Reads the settings of `npm run emulator`.
 * @throws ConfigError naming the bad setting
 */
export function loadEmulatorConfig(
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): EmulatorConfig {
  return Object.freeze(readSettings(EMULATOR_SETTINGS, argv, env));
}

/** `PETSTORE_URL` → `--petstore-url`. */
export function flagName(env: string): string {
  return `--${env.toLowerCase().replace(/_/g, '-')}`;
}

/** What `npm start` is asked to do: print `--help`, print the subgraph SDL (`--print-schema`), or serve. */
export type StartCommand = 'help' | 'print-schema' | 'serve';

/** Reads the command from the command line; either flag wins over every setting, and `--help` over `--print-schema`. */
export function startCommand(argv: readonly string[] = process.argv.slice(2)): StartCommand {
  if (argv.includes('--help')) return 'help';
  if (argv.includes('--print-schema')) return 'print-schema';
  return 'serve';
}

/** The text of `--help`. */
export function helpText(): string {
  const rows = SETTINGS.map((setting) => {
    const production = 'productionDefault' in setting ? `; ${setting.productionDefault} when NODE_ENV=production` : '';
    const defaults = setting.default !== undefined ? ` (default ${setting.default}${production})` : '';
    return `  ${flagName(setting.env).padEnd(32)} ${setting.env.padEnd(30)} ${setting.description}${defaults}`;
  });
  return [
    'Usage: npm start -- [flags]   (each flag can also be set by its environment variable)',
    '',
    ...rows,
    `  ${'--print-schema'.padEnd(63)} print the subgraph SDL (for a schema registry) and exit`,
    `  ${'--help'.padEnd(63)} print this and exit`,
  ].join('\n');
}

/**
 * The settings as they were set, of each configuration loadConfig returned: its timeouts are resolved, so no longer say
 * which variables set them.
 */
const settingsAsSet = new WeakMap<Config, SettingsAsSet>();

/**
 * Reads the configuration from command-line flags (first) and environment variables.
 * @throws ConfigError naming the bad setting
 */
export function loadConfig(
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): Config {
  const set = graphiqlChecked(readSettings(SETTINGS, argv, env), argv, env);
  checkUpstreams(set);
  const {
    upstreamTimeoutMs,
    upstreamConnectTimeoutMs,
    upstreamHeadersTimeoutMs,
    upstreamBodyTimeoutMs,
    petstoreTimeoutMs,
    petstoreConnectTimeoutMs,
    petstoreHeadersTimeoutMs,
    petstoreBodyTimeoutMs,
    plantsTimeoutMs,
    plantsConnectTimeoutMs,
    plantsHeadersTimeoutMs,
    plantsBodyTimeoutMs,
    ...settings
  } = set;
  // Each phase: the area's own setting, else the shared one, else the area's deadline.
  const area = (totalMs: number, connectMs = totalMs, headersMs = totalMs, bodyMs = totalMs): UpstreamTimeouts =>
    Object.freeze({ totalMs, connectMs, headersMs, bodyMs });
  const config: Config = Object.freeze({
    ...settings,
    upstreamTimeouts: Object.freeze({
      petstore: area(
        petstoreTimeoutMs ?? upstreamTimeoutMs,
        petstoreConnectTimeoutMs ?? upstreamConnectTimeoutMs,
        petstoreHeadersTimeoutMs ?? upstreamHeadersTimeoutMs,
        petstoreBodyTimeoutMs ?? upstreamBodyTimeoutMs,
      ),
      plants: area(
        plantsTimeoutMs ?? upstreamTimeoutMs,
        plantsConnectTimeoutMs ?? upstreamConnectTimeoutMs,
        plantsHeadersTimeoutMs ?? upstreamHeadersTimeoutMs,
        plantsBodyTimeoutMs ?? upstreamBodyTimeoutMs,
      ),
    }),
  });
  settingsAsSet.set(config, set);
  return config;
}

/**
 * GraphiQL sends documents as text, which trusted-documents mode refuses: with TRUSTED_DOCUMENTS
 * it is off, and asking for both is refused.
 */
function graphiqlChecked(set: SettingsAsSet, argv: readonly string[], env: NodeJS.ProcessEnv): SettingsAsSet {
  if (set.trustedDocuments === undefined || !set.graphiql) return set;
  const asked =
    (env['GRAPHIQL'] ?? '') !== '' || argv.some((arg) => arg === '--graphiql' || arg.startsWith('--graphiql='));
  if (asked)
    throw new ConfigError(
      'GRAPHIQL=true cannot be used with TRUSTED_DOCUMENTS: GraphiQL sends documents as text, which only ' +
        'the documents of the manifest may be; unset GRAPHIQL',
    );
  return { ...set, graphiql: false };
}

/** Refuses upstream URLs set by halves, and a start without upstreams where demo data must not be served. */
function checkUpstreams(set: Pick<SettingsAsSet, 'emulator' | 'petstoreUrl' | 'plantsUrl' | 'nodeEnv'>): void {
  if (set.emulator === true) return;
  const neither = set.petstoreUrl === undefined && set.plantsUrl === undefined;
  if (neither && (set.emulator === false || set.nodeEnv === 'production')) {
    // Demo data must never be served by a production deployment that forgot its upstreams.
    const when = set.emulator === false ? 'when EMULATOR=false' : 'when NODE_ENV=production';
    throw new ConfigError(
      `PETSTORE_URL and PLANTS_URL must be set ${when} ` +
        "(or set EMULATOR=true to serve the embedded emulator's demo data)",
    );
  }
  if ((set.petstoreUrl === undefined) !== (set.plantsUrl === undefined)) {
    const missing = set.petstoreUrl === undefined ? 'PETSTORE_URL' : 'PLANTS_URL';
    throw new ConfigError(
      `${missing} must be set too: set both upstream URLs, or neither to use the embedded emulator`,
    );
  }
}

/**
 * The settings whose value differs from the default, for the start-up banner (URLs shown without
 * credentials), in the order of {@link SETTINGS}.
 * @param config a configuration loadConfig returned (a copy does not say which timeout settings were set)
 */
export function changedSettings(config: Config): string[] {
  const set = settingsAsSet.get(config);
  if (set === undefined) throw new TypeError('changedSettings needs the configuration loadConfig returned, not a copy');
  return SETTINGS.flatMap((setting) => {
    const value = set[setting.key];
    const defaultText =
      set.nodeEnv === 'production' && 'productionDefault' in setting ? setting.productionDefault : setting.default;
    const defaultValue = defaultText === undefined ? undefined : setting.parse(defaultText, setting.env);
    if (value === defaultValue) return [];
    const shown = typeof value === 'string' && setting.key.endsWith('Url') ? redactUrl(value) : String(value);
    return [`${setting.env}=${shown}`];
  });
}

/** A URL without user info, safe to print. */
export function redactUrl(value: string): string {
  const parsed = new URL(value);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString().replace(/\/+$/, '');
}
