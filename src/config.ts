/**
 * Configuration: environment variables and the equivalent command-line flags, read once into
 * one frozen, typed object and validated at start. This is the only module that reads
 * `process.env`; a bad value stops the start with a message naming the setting.
 */
import { parseArgs } from 'node:util';
import type { BodyFormat } from './upstream/codec.js';

/** The gateway's configuration. */
export type Config = Readonly<{
  /** interface to listen on. @default '0.0.0.0' */
  host: string;
  /** port to listen on (0 picks a free one). @default 4000 */
  port: number;
  /** pet store base URL (ends in /api/v3); undefined runs the embedded emulator */
  petstoreUrl: string | undefined;
  /** plant area base URL; undefined runs the embedded emulator */
  plantsUrl: string | undefined;
  /** body format of the pet store's (J/X/F) operations. @default 'json' */
  petstoreBodyFormat: BodyFormat;
  /** response format asked of the pet store. @default 'json' */
  petstoreAccept: 'json' | 'xml';
  /** deadline of one upstream call, connect to last byte, retries included, in milliseconds. @default 10000 */
  upstreamTimeoutMs: number;
  /** time to establish a connection to an upstream; unset: the call's deadline */
  upstreamConnectTimeoutMs: number | undefined;
  /** time from sending a request to an upstream's response headers; unset: the call's deadline */
  upstreamHeadersTimeoutMs: number | undefined;
  /** time from an upstream's response headers to its last body byte; unset: the call's deadline */
  upstreamBodyTimeoutMs: number | undefined;
  /** the pet store's call deadline; unset: upstreamTimeoutMs */
  petstoreTimeoutMs: number | undefined;
  /** the pet store's connect timeout; unset: upstreamConnectTimeoutMs */
  petstoreConnectTimeoutMs: number | undefined;
  /** the pet store's headers timeout; unset: upstreamHeadersTimeoutMs */
  petstoreHeadersTimeoutMs: number | undefined;
  /** the pet store's whole-body timeout; unset: upstreamBodyTimeoutMs */
  petstoreBodyTimeoutMs: number | undefined;
  /** the plant area's call deadline; unset: upstreamTimeoutMs */
  plantsTimeoutMs: number | undefined;
  /** the plant area's connect timeout; unset: upstreamConnectTimeoutMs */
  plantsConnectTimeoutMs: number | undefined;
  /** the plant area's headers timeout; unset: upstreamHeadersTimeoutMs */
  plantsHeadersTimeoutMs: number | undefined;
  /** the plant area's whole-body timeout; unset: upstreamBodyTimeoutMs */
  plantsBodyTimeoutMs: number | undefined;
  /** retries of an upstream GET after a connection error or a 502/503/504 (never of a POST, PUT or DELETE). @default 2 */
  upstreamRetries: number;
  /** wait before the first retry, doubled for each further one and jittered, in milliseconds. @default 50 */
  upstreamRetryBackoffMs: number;
  /** longest wait before one retry, in milliseconds. @default 1000 */
  upstreamRetryBackoffMaxMs: number;
  /** parallel connections (and so parallel calls) per upstream. @default 32 */
  upstreamConnections: number;
  /** largest upstream response body, in bytes. @default 10485760 */
  upstreamMaxResponseBytes: number;
  /** largest uploaded file, in bytes. @default 10485760 */
  uploadMaxBytes: number;
  /** serve GraphiQL on GET /graphql from a browser. @default true */
  graphiql: boolean;
  /** least severe log level written. @default 'info' */
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** on SIGTERM/SIGINT, how long in-flight requests may take to finish before their connections are cut, in milliseconds. @default 10000 */
  shutdownGraceMs: number;
}>;

/** A setting that is missing its pair, malformed or out of range. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Setting<C, K extends keyof C> = {
  key: K;
  env: string;
  default: string | undefined;
  description: string;
  parse: (raw: string, env: string) => C[K];
};

const integer = (min: number, max: number) => (raw: string, env: string) => {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) throw new ConfigError(`${env} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
};
const oneOf = <T extends string>(...values: T[]) => (raw: string, env: string): T => {
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
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`${env} must be an http(s) URL`);
  if (parsed.search || parsed.hash) throw new ConfigError(`${env} must not have a query or fragment`);
  return parsed.toString().replace(/\/+$/, '');
};
const flag = (raw: string, env: string) => oneOf('true', 'false')(raw, env) === 'true';

/** Every setting, with its variable, default and meaning (also the source of `--help`). */
export const SETTINGS = [
  { key: 'host', env: 'HOST', default: '0.0.0.0', description: 'interface to listen on', parse: (raw: string) => raw },
  { key: 'port', env: 'PORT', default: '4000', description: 'port to listen on (0 picks a free one)', parse: integer(0, 65535) },
  { key: 'petstoreUrl', env: 'PETSTORE_URL', default: undefined, description: 'pet store base URL, ending in /api/v3 (unset with PLANTS_URL: embedded emulator)', parse: url },
  { key: 'plantsUrl', env: 'PLANTS_URL', default: undefined, description: 'plant area base URL (unset with PETSTORE_URL: embedded emulator)', parse: url },
  { key: 'petstoreBodyFormat', env: 'PETSTORE_BODY_FORMAT', default: 'json', description: 'body format of POST/PUT /pet, POST /store/order, POST /user, PUT /user/{username}: json, xml or form', parse: oneOf<BodyFormat>('json', 'xml', 'form') },
  { key: 'petstoreAccept', env: 'PETSTORE_ACCEPT', default: 'json', description: 'response format asked of the pet store: json or xml', parse: oneOf('json', 'xml') },
  { key: 'upstreamTimeoutMs', env: 'UPSTREAM_TIMEOUT_MS', default: '10000', description: 'deadline of one upstream call, connect to last byte, retries included, in milliseconds', parse: integer(1, 600_000) },
  { key: 'upstreamConnectTimeoutMs', env: 'UPSTREAM_CONNECT_TIMEOUT_MS', default: undefined, description: 'time to connect to an upstream (TCP and TLS), in milliseconds (default: the call deadline)', parse: integer(1, 600_000) },
  { key: 'upstreamHeadersTimeoutMs', env: 'UPSTREAM_HEADERS_TIMEOUT_MS', default: undefined, description: 'time from sending a request to the response headers, in milliseconds (default: the call deadline)', parse: integer(1, 600_000) },
  { key: 'upstreamBodyTimeoutMs', env: 'UPSTREAM_BODY_TIMEOUT_MS', default: undefined, description: 'time from the response headers to the last body byte, in milliseconds (default: the call deadline)', parse: integer(1, 600_000) },
  { key: 'petstoreTimeoutMs', env: 'PETSTORE_TIMEOUT_MS', default: undefined, description: 'UPSTREAM_TIMEOUT_MS for the pet store only', parse: integer(1, 600_000) },
  { key: 'petstoreConnectTimeoutMs', env: 'PETSTORE_CONNECT_TIMEOUT_MS', default: undefined, description: 'UPSTREAM_CONNECT_TIMEOUT_MS for the pet store only', parse: integer(1, 600_000) },
  { key: 'petstoreHeadersTimeoutMs', env: 'PETSTORE_HEADERS_TIMEOUT_MS', default: undefined, description: 'UPSTREAM_HEADERS_TIMEOUT_MS for the pet store only', parse: integer(1, 600_000) },
  { key: 'petstoreBodyTimeoutMs', env: 'PETSTORE_BODY_TIMEOUT_MS', default: undefined, description: 'UPSTREAM_BODY_TIMEOUT_MS for the pet store only', parse: integer(1, 600_000) },
  { key: 'plantsTimeoutMs', env: 'PLANTS_TIMEOUT_MS', default: undefined, description: 'UPSTREAM_TIMEOUT_MS for the plant area only', parse: integer(1, 600_000) },
  { key: 'plantsConnectTimeoutMs', env: 'PLANTS_CONNECT_TIMEOUT_MS', default: undefined, description: 'UPSTREAM_CONNECT_TIMEOUT_MS for the plant area only', parse: integer(1, 600_000) },
  { key: 'plantsHeadersTimeoutMs', env: 'PLANTS_HEADERS_TIMEOUT_MS', default: undefined, description: 'UPSTREAM_HEADERS_TIMEOUT_MS for the plant area only', parse: integer(1, 600_000) },
  { key: 'plantsBodyTimeoutMs', env: 'PLANTS_BODY_TIMEOUT_MS', default: undefined, description: 'UPSTREAM_BODY_TIMEOUT_MS for the plant area only', parse: integer(1, 600_000) },
  { key: 'upstreamRetries', env: 'UPSTREAM_RETRIES', default: '2', description: 'retries of an upstream GET after a connection error or a 502/503/504 (0: none)', parse: integer(0, 10) },
  { key: 'upstreamRetryBackoffMs', env: 'UPSTREAM_RETRY_BACKOFF_MS', default: '50', description: 'wait before the first retry, doubled for each further one and jittered, in milliseconds', parse: integer(1, 60_000) },
  { key: 'upstreamRetryBackoffMaxMs', env: 'UPSTREAM_RETRY_BACKOFF_MAX_MS', default: '1000', description: 'longest wait before one retry, in milliseconds', parse: integer(1, 600_000) },
  { key: 'upstreamConnections', env: 'UPSTREAM_CONNECTIONS', default: '32', description: 'parallel connections (and calls) per upstream', parse: integer(1, 1024) },
  { key: 'upstreamMaxResponseBytes', env: 'UPSTREAM_MAX_RESPONSE_BYTES', default: String(10 * 1024 * 1024), description: 'largest upstream response body, in bytes', parse: integer(1, 2 ** 31) },
  { key: 'uploadMaxBytes', env: 'UPLOAD_MAX_BYTES', default: String(10 * 1024 * 1024), description: 'largest uploaded file, in bytes', parse: integer(1, 2 ** 31) },
  { key: 'logLevel', env: 'LOG_LEVEL', default: 'info', description: 'least severe log level written: debug, info, warn or error', parse: oneOf('debug', 'info', 'warn', 'error') },
  { key: 'graphiql', env: 'GRAPHIQL', default: 'true', description: 'serve GraphiQL at /graphql to browsers: true or false', parse: flag },
  { key: 'shutdownGraceMs', env: 'SHUTDOWN_GRACE_MS', default: '10000', description: 'on SIGTERM/SIGINT, time in-flight requests get to finish, in milliseconds', parse: integer(0, 600_000) },
] as const satisfies readonly Setting<Config, keyof Config>[];

/** Settings → values: flags first, then the environment, then the default; empty counts as unset. */
function readSettings<C>(settings: readonly Setting<C, keyof C>[], argv: readonly string[], env: NodeJS.ProcessEnv): C {
  let flags: Record<string, string | boolean | undefined>;
  try {
    flags = parseArgs({
      args: [...argv],
      options: Object.fromEntries(settings.map((setting) => [flagName(setting.env).slice(2), { type: 'string' as const }])),
      strict: true,
    }).values;
  } catch (error) {
    throw new ConfigError(error instanceof Error ? error.message : 'unreadable command line');
  }
  const values: Partial<C> = {};
  for (const setting of settings) {
    const given = flags[flagName(setting.env).slice(2)];
    // An empty value (`PORT=` in an env file) means "not set", as it does for most tools.
    const raw = [typeof given === 'string' ? given : undefined, env[setting.env]].find((value) => value !== undefined && value !== '') ?? setting.default;
    if (raw !== undefined) values[setting.key] = setting.parse(raw, setting.env);
  }
  return values as C;
}

/** Settings of the emulator run alone (`npm run emulator`). */
export type EmulatorConfig = Readonly<{
  /** interface to listen on. @default '127.0.0.1' */
  host: string;
  /** port to listen on. @default 4010 */
  port: number;
}>;

const EMULATOR_SETTINGS = [
  { key: 'host', env: 'EMULATOR_HOST', default: '127.0.0.1', description: 'interface the emulator listens on', parse: (raw: string) => raw },
  { key: 'port', env: 'EMULATOR_PORT', default: '4010', description: 'port the emulator listens on', parse: integer(0, 65535) },
] as const satisfies readonly Setting<EmulatorConfig, keyof EmulatorConfig>[];

/**
 * Reads the settings of `npm run emulator`.
 * @throws ConfigError naming the bad setting
 */
export function loadEmulatorConfig(argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): EmulatorConfig {
  return Object.freeze(readSettings<EmulatorConfig>(EMULATOR_SETTINGS, argv, env));
}

/** `PETSTORE_URL` → `--petstore-url`. */
export function flagName(env: string): string {
  return `--${env.toLowerCase().replace(/_/g, '-')}`;
}

/** The text of `--help`. */
export function helpText(): string {
  const rows = SETTINGS.map((setting) => `  ${flagName(setting.env).padEnd(32)} ${setting.env.padEnd(30)} ${setting.description}${setting.default !== undefined ? ` (default ${setting.default})` : ''}`);
  return [
    'Usage: npm start -- [flags]   (each flag can also be set by its environment variable)',
    '',
    ...rows,
    `  ${'--print-schema'.padEnd(63)} print the subgraph SDL (for a schema registry) and exit`,
    `  ${'--help'.padEnd(63)} print this and exit`,
  ].join('\n');
}

/**
 * Reads the configuration from command-line flags (first) and environment variables.
 * @throws ConfigError naming the bad setting
 */
export function loadConfig(argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Config {
  const config = readSettings<Config>(SETTINGS, argv, env);
  if ((config.petstoreUrl === undefined) !== (config.plantsUrl === undefined)) {
    const missing = config.petstoreUrl === undefined ? 'PETSTORE_URL' : 'PLANTS_URL';
    throw new ConfigError(`${missing} must be set too: set both upstream URLs, or neither to use the embedded emulator`);
  }
  return Object.freeze(config);
}

/** The timeouts of one upstream area, in milliseconds, each resolved to the value that applies. */
export type UpstreamTimeouts = Readonly<{
  /** deadline of one call, retries included */
  totalMs: number;
  /** establishing a connection */
  connectMs: number;
  /** sending the request to receiving the response headers */
  headersMs: number;
  /** response headers to the last body byte */
  bodyMs: number;
}>;

type TimeoutSettings = Pick<
  Config,
  'upstreamTimeoutMs' | 'upstreamConnectTimeoutMs' | 'upstreamHeadersTimeoutMs' | 'upstreamBodyTimeoutMs' | `${'petstore' | 'plants'}${'' | 'Connect' | 'Headers' | 'Body'}TimeoutMs`
>;

/**
 * The timeouts of one area. Each comes from the area's own setting (`PETSTORE_HEADERS_TIMEOUT_MS`),
 * else the shared one (`UPSTREAM_HEADERS_TIMEOUT_MS`), else the area's call deadline
 * (`PETSTORE_TIMEOUT_MS`, else `UPSTREAM_TIMEOUT_MS`): with only `UPSTREAM_TIMEOUT_MS` set, it
 * bounds every phase, as it did before the phases could be set apart.
 */
export function upstreamTimeouts(config: TimeoutSettings, area: 'petstore' | 'plants'): UpstreamTimeouts {
  const totalMs = config[`${area}TimeoutMs`] ?? config.upstreamTimeoutMs;
  return {
    totalMs,
    connectMs: config[`${area}ConnectTimeoutMs`] ?? config.upstreamConnectTimeoutMs ?? totalMs,
    headersMs: config[`${area}HeadersTimeoutMs`] ?? config.upstreamHeadersTimeoutMs ?? totalMs,
    bodyMs: config[`${area}BodyTimeoutMs`] ?? config.upstreamBodyTimeoutMs ?? totalMs,
  };
}

/** The settings whose value differs from the default, for the start-up banner (URLs shown without credentials). */
export function changedSettings(config: Config): string[] {
  return SETTINGS.flatMap((setting) => {
    const value = config[setting.key];
    const defaultValue = setting.default === undefined ? undefined : setting.parse(setting.default, setting.env);
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
