/**
 * Configuration (`src/config/`): defaults, environment variables, flags that win over them,
 * a ConfigError naming each bad setting, URLs whose credentials are never echoed, and `--help`.
 */
import { describe, expect, it } from 'vitest';
import {
  changedSettings,
  ConfigError,
  helpText,
  loadConfig,
  loadEmulatorConfig,
  redactUrl,
  SETTINGS,
  startCommand,
  warningsOf,
} from '../src/config/index.js';
import { SETTINGS_OF_1_0_0 } from './helpers/settings-1.0.0.js';

/** One area's timeouts, in the order of the Config fields: the call deadline, then each phase. */
const phases = (totalMs: number, connectMs: number, headersMs: number, bodyMs: number) => ({
  totalMs,
  connectMs,
  headersMs,
  bodyMs,
});
const BOTH_URLS = { PETSTORE_URL: 'https://petstore3.swagger.io/api/v3', PLANTS_URL: 'https://plants.example' };
const PASSWORD = 's3cret-p4ss';

/** The error `loadConfig` throws for these flags and variables. */
function configError(argv: readonly string[], env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(argv, env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('loadConfig accepted the configuration');
}

describe('loadConfig', () => {
  it('without flags or variables gives the defaults, and the embedded emulator (no upstream URLs)', () => {
    expect(loadConfig([], {})).toEqual({
      host: '127.0.0.1',
      port: 4000,
      petstoreUrl: undefined,
      plantsUrl: undefined,
      workers: 1,
      upstreamDedupe: true,
      upstreamContractSample: 0.01,
      upstreamCache: { enabled: false, defaults: {} },
      upstreamCacheMaxEntries: 10000,
      upstreamCacheMaxBytes: 67108864,
      petstoreBodyFormat: 'json',
      petstoreAccept: 'json',
      upstreamTimeouts: {
        petstore: { totalMs: 10000, connectMs: 10000, headersMs: 10000, bodyMs: 10000 },
        plants: { totalMs: 10000, connectMs: 10000, headersMs: 10000, bodyMs: 10000 },
      },
      upstreamConnections: 32,
      upstreamMaxResponseBytes: 10485760,
      upstreamRetries: 2,
      upstreamRetryBackoffMs: 50,
      upstreamRetryBackoffMaxMs: 1000,
      upstreamRetryBudgetPercent: 20,
      upstreamCircuitFailureRate: 50,
      upstreamCircuitMinCalls: 10,
      upstreamCircuitWindowMs: 10000,
      upstreamCircuitCooldownMs: 5000,
      upstreamRetryAfterMaxMs: 60000,
      uploadMaxBytes: 10485760,
      uploadMaxFiles: 5,
      logLevel: 'info',
      requestLogSample: 1,
      metrics: true,
      readinessTimeoutMs: 2000,
      otelSdkDisabled: false,
      otelServiceName: 'petstore-graphql-gateway',
      otelTracesSampler: 'parentbased_always_on',
      otelTracesSamplerArg: 1,
      graphiql: true,
      shutdownGraceMs: 10000,
      nodeEnv: 'development',
      introspection: true,
      explain: true,
      requestMaxBytes: 1048576,
      responseCompressionMinBytes: 1024,
      batchMaxOperations: 0,
      queryMaxDepth: 10,
      queryMaxAliases: 50,
      queryMaxTokens: 2000,
      inputMaxDepth: 100,
      queryMaxDirectives: 20,
      queryMaxCost: 1000,
      listArgumentMaxItems: 100,
      upstreamMaxCallsPerOperation: 200,
      // Opt-in: behind a load balancer every caller shares one address.
      rateLimitPerMinute: 0,
      rateLimitAddressPerMinute: 0,
      rateLimitCostPerMinute: 0,
      trustProxyHops: 0,
      csrfPrevention: true,
      responseCacheTtlMs: 0,
      apq: true,
      apqMaxDocuments: 1000,
      // Without Redis every process keeps its own state.
      redisUrl: undefined,
      redisKeyPrefix: 'rest-graphql-gateway:',
      redisTimeoutMs: 100,
      redisRequired: false,
      rateLimitFailClosed: false,
      // Off: each live query holds a connection and has the gateway poll the upstream (docs/live-queries.md).
      liveQueries: false,
      liveQueriesMax: 1000,
      liveQueriesPerClientMax: 10,
      livePollIntervalMs: 5000,
      livePollMaxPerSecond: 20,
      mcp: false,
      mcpOperations: undefined,
      mcpMutations: [],
      mcpAuthorizationServers: undefined,
    });
  });

  /** Every setting but the timeouts: its variable, a value other than its default, and the field and value it gives. */
  const EVERY_SETTING: [env: string, raw: string, key: string, value: unknown][] = [
    ['HOST', '0.0.0.0', 'host', '0.0.0.0'],
    // The embedded emulator whatever else is set.
    ['EMULATOR', 'true', 'emulator', true],
    ['PORT', '8080', 'port', 8080],
    // A trailing slash is dropped, so that paths join the same way whatever the user wrote.
    ['PETSTORE_URL', 'https://petstore3.swagger.io/api/v3/', 'petstoreUrl', 'https://petstore3.swagger.io/api/v3'],
    ['PLANTS_URL', 'https://plants.example/', 'plantsUrl', 'https://plants.example'],
    ['PETSTORE_BODY_FORMAT', 'XML', 'petstoreBodyFormat', 'xml'],
    ['PETSTORE_ACCEPT', 'xml', 'petstoreAccept', 'xml'],
    ['UPSTREAM_CONNECTIONS', '4', 'upstreamConnections', 4],
    ['UPSTREAM_MAX_RESPONSE_BYTES', '1024', 'upstreamMaxResponseBytes', 1024],
    ['UPSTREAM_RETRIES', '0', 'upstreamRetries', 0],
    ['UPSTREAM_RETRY_BACKOFF_MS', '25', 'upstreamRetryBackoffMs', 25],
    ['UPSTREAM_RETRY_BACKOFF_MAX_MS', '250', 'upstreamRetryBackoffMaxMs', 250],
    ['UPSTREAM_RETRY_BUDGET_PERCENT', '10', 'upstreamRetryBudgetPercent', 10],
    // Retired: read, but the settings that replaced it are set too, and win.
    ['UPSTREAM_CIRCUIT_FAILURES', '6', 'upstreamCircuitFailures', 6],
    ['UPSTREAM_CIRCUIT_FAILURE_RATE', '0', 'upstreamCircuitFailureRate', 0],
    ['UPSTREAM_CIRCUIT_MIN_CALLS', '50', 'upstreamCircuitMinCalls', 50],
    ['UPSTREAM_CIRCUIT_WINDOW_MS', '30000', 'upstreamCircuitWindowMs', 30000],
    ['UPSTREAM_CIRCUIT_COOLDOWN_MS', '30000', 'upstreamCircuitCooldownMs', 30000],
    ['UPSTREAM_RETRY_AFTER_MAX_MS', '5000', 'upstreamRetryAfterMaxMs', 5000],
    ['UPLOAD_MAX_BYTES', '2048', 'uploadMaxBytes', 2048],
    ['UPLOAD_MAX_FILES', '3', 'uploadMaxFiles', 3],
    ['LOG_LEVEL', 'debug', 'logLevel', 'debug'],
    ['REQUEST_LOG_SAMPLE', '0.5', 'requestLogSample', 0.5],
    ['METRICS', 'false', 'metrics', false],
    ['READINESS_TIMEOUT_MS', '500', 'readinessTimeoutMs', 500],
    ['OTEL_SDK_DISABLED', 'true', 'otelSdkDisabled', true],
    ['OTEL_TRACES_EXPORTER', 'console', 'otelTracesExporter', 'console'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'http://collector:4318/', 'otlpEndpointUrl', 'http://collector:4318'],
    [
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
      'http://collector:4318/v1/traces',
      'otlpTracesEndpointUrl',
      'http://collector:4318/v1/traces',
    ],
    ['OTEL_SERVICE_NAME', 'pets-gateway', 'otelServiceName', 'pets-gateway'],
    ['OTEL_TRACES_SAMPLER', 'parentbased_traceidratio', 'otelTracesSampler', 'parentbased_traceidratio'],
    ['OTEL_TRACES_SAMPLER_ARG', '0.25', 'otelTracesSamplerArg', 0.25],
    ['GRAPHIQL', 'false', 'graphiql', false],
    // 0: on SIGTERM, what is in flight is cut at once.
    ['SHUTDOWN_GRACE_MS', '0', 'shutdownGraceMs', 0],
    ['NODE_ENV', 'production', 'nodeEnv', 'production'],
    // Set explicitly, it wins over the production default (false).
    ['INTROSPECTION', 'true', 'introspection', true],
    // Set explicitly, it wins over the production default (false).
    ['EXPLAIN', 'true', 'explain', true],
    ['REQUEST_MAX_BYTES', '4096', 'requestMaxBytes', 4096],
    // 0: answers are never compressed.
    ['RESPONSE_COMPRESSION_MIN_BYTES', '0', 'responseCompressionMinBytes', 0],
    ['BATCH_MAX_OPERATIONS', '5', 'batchMaxOperations', 5],
    ['QUERY_MAX_DEPTH', '7', 'queryMaxDepth', 7],
    ['QUERY_MAX_ALIASES', '8', 'queryMaxAliases', 8],
    ['QUERY_MAX_TOKENS', '900', 'queryMaxTokens', 900],
    ['INPUT_MAX_DEPTH', '64', 'inputMaxDepth', 64],
    ['QUERY_MAX_DIRECTIVES', '3', 'queryMaxDirectives', 3],
    ['QUERY_MAX_COST', '700', 'queryMaxCost', 700],
    ['LIST_ARGUMENT_MAX_ITEMS', '25', 'listArgumentMaxItems', 25],
    ['UPSTREAM_MAX_CALLS_PER_OPERATION', '30', 'upstreamMaxCallsPerOperation', 30],
    ['RATE_LIMIT_PER_MINUTE', '600', 'rateLimitPerMinute', 600],
    ['RATE_LIMIT_ADDRESS_PER_MINUTE', '120', 'rateLimitAddressPerMinute', 120],
    ['RATE_LIMIT_COST_PER_MINUTE', '500', 'rateLimitCostPerMinute', 500],
    ['WORKERS', '3', 'workers', 3],
    ['UPSTREAM_DEDUPE', 'false', 'upstreamDedupe', false],
    ['UPSTREAM_CONTRACT_SAMPLE', '0.25', 'upstreamContractSample', 0.25],
    ['UPSTREAM_CACHE', 'getPetById:30s', 'upstreamCache', { enabled: true, defaults: { getPetById: 30 } }],
    ['UPSTREAM_CACHE_MAX_ENTRIES', '500', 'upstreamCacheMaxEntries', 500],
    ['UPSTREAM_CACHE_MAX_BYTES', '1048576', 'upstreamCacheMaxBytes', 1048576],
    ['TRUST_PROXY_HOPS', '1', 'trustProxyHops', 1],
    ['CSRF_PREVENTION', 'false', 'csrfPrevention', false],
    [
      'CORS_ORIGINS',
      'https://app.example, http://localhost:5173',
      'corsOrigins',
      ['https://app.example', 'http://localhost:5173'],
    ],
    ['TRUSTED_DOCUMENTS', 'trusted-documents.json', 'trustedDocuments', 'trusted-documents.json'],
    ['RESPONSE_CACHE_TTL_MS', '30000', 'responseCacheTtlMs', 30000],
    [
      'RESPONSE_CACHE_TTL_PER_TYPE',
      'Inventory=1000, Pet.tags=0',
      'responseCacheTtlPerType',
      ['Inventory=1000', 'Pet.tags=0'],
    ],
    ['APQ', 'false', 'apq', false],
    ['APQ_MAX_DOCUMENTS', '50', 'apqMaxDocuments', 50],
    [
      'REDIS_URL',
      'rediss://:redis-password@redis.internal:6380/2',
      'redisUrl',
      'rediss://:redis-password@redis.internal:6380/2',
    ],
    ['REDIS_KEY_PREFIX', 'team-a:', 'redisKeyPrefix', 'team-a:'],
    ['REDIS_TIMEOUT_MS', '250', 'redisTimeoutMs', 250],
    ['REDIS_REQUIRED', 'true', 'redisRequired', true],
    ['RATE_LIMIT_FAIL_CLOSED', 'true', 'rateLimitFailClosed', true],
    ['LIVE_QUERIES', 'true', 'liveQueries', true],
    ['LIVE_QUERIES_MAX', '50', 'liveQueriesMax', 50],
    ['LIVE_QUERIES_PER_CLIENT_MAX', '3', 'liveQueriesPerClientMax', 3],
    ['LIVE_POLL_INTERVAL_MS', '1000', 'livePollIntervalMs', 1000],
    ['LIVE_POLL_MAX_PER_SECOND', '5', 'livePollMaxPerSecond', 5],
    ['MCP', 'true', 'mcp', true],
    ['MCP_OPERATIONS', '/srv/mcp-operations', 'mcpOperations', '/srv/mcp-operations'],
    ['MCP_MUTATIONS', 'AddPet, PlaceOrder', 'mcpMutations', ['AddPet', 'PlaceOrder']],
    [
      'MCP_AUTHORIZATION_SERVERS',
      'https://auth.example/realms/pets, https://login.example',
      'mcpAuthorizationServers',
      ['https://auth.example/realms/pets', 'https://login.example'],
    ],
  ];
  /** The twelve timeout settings, which the configuration gives resolved: one object per area. */
  const TIMEOUT_SETTINGS = {
    UPSTREAM_TIMEOUT_MS: '2500',
    UPSTREAM_CONNECT_TIMEOUT_MS: '100',
    UPSTREAM_HEADERS_TIMEOUT_MS: '200',
    UPSTREAM_BODY_TIMEOUT_MS: '300',
    PETSTORE_TIMEOUT_MS: '4000',
    PETSTORE_CONNECT_TIMEOUT_MS: '400',
    PETSTORE_HEADERS_TIMEOUT_MS: '500',
    PETSTORE_BODY_TIMEOUT_MS: '600',
    PLANTS_TIMEOUT_MS: '7000',
    PLANTS_CONNECT_TIMEOUT_MS: '700',
    PLANTS_HEADERS_TIMEOUT_MS: '800',
    PLANTS_BODY_TIMEOUT_MS: '900',
  };

  it('reads every environment variable', () => {
    const config = loadConfig([], {
      ...Object.fromEntries(EVERY_SETTING.map(([env, raw]) => [env, raw])),
      ...TIMEOUT_SETTINGS,
    });

    expect(config).toEqual({
      ...Object.fromEntries(EVERY_SETTING.map(([, , key, value]) => [key, value])),
      // Each area's own settings win over the UPSTREAM_ ones.
      upstreamTimeouts: {
        petstore: { totalMs: 4000, connectMs: 400, headersMs: 500, bodyMs: 600 },
        plants: { totalMs: 7000, connectMs: 700, headersMs: 800, bodyMs: 900 },
      },
    });
    // The table above leaves out no setting the gateway has.
    const listed = new Set([...EVERY_SETTING.map(([env]) => env), ...Object.keys(TIMEOUT_SETTINGS)]);
    expect(SETTINGS.map((setting) => setting.env).filter((env) => !listed.has(env))).toEqual([]);
  });

  it('lets flags (--port 5000, --petstore-body-format=xml) win over the environment', () => {
    const config = loadConfig(['--port', '5000', '--petstore-body-format=xml'], {
      PORT: '4001',
      PETSTORE_BODY_FORMAT: 'form',
      UPSTREAM_CONNECTIONS: '8',
    });

    expect(config).toMatchObject({ port: 5000, petstoreBodyFormat: 'xml', upstreamConnections: 8 });
  });

  it('treats an empty variable as unset: PORT= gives the default port', () => {
    expect(loadConfig([], { PORT: '' }).port).toBe(4000);
  });

  it('returns a frozen object', () => {
    const config = loadConfig([], {});

    expect(Object.isFrozen(config)).toBe(true);
    expect(Reflect.set(config, 'port', 1)).toBe(false);
    expect(config.port).toBe(4000);
    expect(Object.isFrozen(config.upstreamTimeouts.petstore)).toBe(true);
  });
});

describe('upstreamTimeouts: the timeouts of each area', () => {
  it('with only UPSTREAM_TIMEOUT_MS set, bound every phase of both areas by it, as that setting always did', () => {
    const config = loadConfig([], { UPSTREAM_TIMEOUT_MS: '2500' });

    expect(config.upstreamTimeouts.petstore).toEqual(phases(2500, 2500, 2500, 2500));
    expect(config.upstreamTimeouts.plants).toEqual(phases(2500, 2500, 2500, 2500));
  });

  it('are 10 s for everything by default', () => {
    expect(loadConfig([], {}).upstreamTimeouts.petstore).toEqual(phases(10000, 10000, 10000, 10000));
  });

  it.each([
    {
      what: "take the UPSTREAM_ phase settings for both areas, and an area's own settings over them for that area only",
      env: {
        UPSTREAM_CONNECT_TIMEOUT_MS: '1000',
        UPSTREAM_HEADERS_TIMEOUT_MS: '3000',
        PETSTORE_CONNECT_TIMEOUT_MS: '500',
        PLANTS_BODY_TIMEOUT_MS: '4000',
      },
      petstore: phases(10000, 500, 3000, 10000),
      plants: phases(10000, 1000, 3000, 4000),
    },
    {
      what: "let an area's deadline (PLANTS_TIMEOUT_MS) bound that area's unset phases",
      env: { UPSTREAM_TIMEOUT_MS: '5000', PLANTS_TIMEOUT_MS: '30000', PLANTS_HEADERS_TIMEOUT_MS: '20000' },
      petstore: phases(5000, 5000, 5000, 5000),
      plants: phases(30000, 30000, 20000, 30000),
    },
  ])('$what', ({ env, petstore, plants }) => {
    expect(loadConfig([], env).upstreamTimeouts).toEqual({ petstore, plants });
  });

  it('read the flags too (--petstore-body-timeout-ms)', () => {
    const config = loadConfig(['--petstore-body-timeout-ms', '1500'], { PETSTORE_BODY_TIMEOUT_MS: '9000' });

    expect(config.upstreamTimeouts.petstore.bodyMs).toBe(1500);
  });
});

describe('a bad setting stops the start with a ConfigError naming it', () => {
  it.each([
    ['PORT=abc', [], { PORT: 'abc' }, 'PORT must be an integer from 0 to 65535, got "abc"'],
    [
      'UPSTREAM_CIRCUIT_FAILURE_RATE=100',
      [],
      { UPSTREAM_CIRCUIT_FAILURE_RATE: '100' },
      'UPSTREAM_CIRCUIT_FAILURE_RATE must be an integer from 0 to 99, got "100"',
    ],
    ['PORT=70000', [], { PORT: '70000' }, 'PORT must be an integer from 0 to 65535, got "70000"'],
    ['--port -1', ['--port=-1'], {}, 'PORT must be an integer from 0 to 65535, got "-1"'],
    [
      'UPSTREAM_TIMEOUT_MS=0',
      [],
      { UPSTREAM_TIMEOUT_MS: '0' },
      'UPSTREAM_TIMEOUT_MS must be an integer from 1 to 600000, got "0"',
    ],
    [
      'PETSTORE_URL=not a url',
      [],
      { ...BOTH_URLS, PETSTORE_URL: 'not a url' },
      'PETSTORE_URL must be an absolute http(s) URL',
    ],
    ['PETSTORE_URL=ftp://x', [], { ...BOTH_URLS, PETSTORE_URL: 'ftp://x' }, 'PETSTORE_URL must be an http(s) URL'],
    // The value is not echoed: it may carry the Redis password.
    ['REDIS_URL=not a url', [], { REDIS_URL: 'not a url' }, 'REDIS_URL must be a redis:// or rediss:// URL'],
    [
      'REDIS_URL=http://…',
      [],
      { REDIS_URL: 'http://:pw@redis:6379' },
      'REDIS_URL must be a redis:// or rediss:// URL, not http://',
    ],
    [
      'REDIS_URL with a path',
      [],
      { REDIS_URL: 'redis://:pw@redis:6379/cache' },
      'REDIS_URL: its path can only be a database index (/0)',
    ],
    [
      'PLANTS_URL with a query',
      [],
      { ...BOTH_URLS, PLANTS_URL: 'https://plants.example/?debug=1' },
      'PLANTS_URL must not have a query or fragment',
    ],
    [
      'PETSTORE_BODY_FORMAT=yaml',
      [],
      { PETSTORE_BODY_FORMAT: 'yaml' },
      'PETSTORE_BODY_FORMAT must be one of json, xml, form, got "yaml"',
    ],
    ['GRAPHIQL=yes', [], { GRAPHIQL: 'yes' }, 'GRAPHIQL must be one of true, false, got "yes"'],
    [
      'UPSTREAM_CONTRACT_SAMPLE=5%',
      [],
      { UPSTREAM_CONTRACT_SAMPLE: '5%' },
      'UPSTREAM_CONTRACT_SAMPLE must be a number from 0 to 1, got "5%"',
    ],
    [
      'PETSTORE_CONNECT_TIMEOUT_MS=0',
      [],
      { PETSTORE_CONNECT_TIMEOUT_MS: '0' },
      'PETSTORE_CONNECT_TIMEOUT_MS must be an integer from 1 to 600000, got "0"',
    ],
    [
      'PLANTS_HEADERS_TIMEOUT_MS=1s',
      [],
      { PLANTS_HEADERS_TIMEOUT_MS: '1s' },
      'PLANTS_HEADERS_TIMEOUT_MS must be an integer from 1 to 600000, got "1s"',
    ],
    [
      'UPSTREAM_BODY_TIMEOUT_MS=-5',
      [],
      { UPSTREAM_BODY_TIMEOUT_MS: '-5' },
      'UPSTREAM_BODY_TIMEOUT_MS must be an integer from 1 to 600000, got "-5"',
    ],
    [
      'UPSTREAM_RETRIES=11',
      [],
      { UPSTREAM_RETRIES: '11' },
      'UPSTREAM_RETRIES must be an integer from 0 to 10, got "11"',
    ],
    ['UPLOAD_MAX_FILES=0', [], { UPLOAD_MAX_FILES: '0' }, 'UPLOAD_MAX_FILES must be an integer from 1 to 100, got "0"'],
    [
      'UPSTREAM_RETRY_BACKOFF_MS=0',
      [],
      { UPSTREAM_RETRY_BACKOFF_MS: '0' },
      'UPSTREAM_RETRY_BACKOFF_MS must be an integer from 1 to 60000, got "0"',
    ],
    [
      'SHUTDOWN_GRACE_MS=soon',
      [],
      { SHUTDOWN_GRACE_MS: 'soon' },
      'SHUTDOWN_GRACE_MS must be an integer from 0 to 600000, got "soon"',
    ],
  ] as const)('%s', (_, argv, env, message) => {
    expect(configError(argv, env).message).toBe(message);
  });

  it('an unknown flag is named', () => {
    expect(configError(['--colour', 'red'], {}).message).toMatch(/'--colour'/);
  });

  it('a flag without its value is named', () => {
    expect(configError(['--port'], {}).message).toMatch(/'--port/);
  });

  it('NODE_ENV=production without upstream URLs names them: demo data is never served by accident', () => {
    expect(configError([], { NODE_ENV: 'production' }).message).toBe(
      "PETSTORE_URL, PLANTS_URL or both must be set when NODE_ENV=production (or set EMULATOR=true to serve the embedded emulator's demo data)",
    );
  });

  it('EMULATOR=false without upstream URLs names them', () => {
    expect(configError([], { EMULATOR: 'false' }).message).toMatch(
      /^PETSTORE_URL, PLANTS_URL or both must be set when EMULATOR=false/,
    );
  });

  it('EMULATOR=true runs the emulator in production, and whatever the URLs say', () => {
    expect(loadConfig([], { NODE_ENV: 'production', EMULATOR: 'true' })).toMatchObject({
      emulator: true,
      workers: 'auto',
    });
    expect(loadConfig([], { EMULATOR: 'true', PETSTORE_URL: BOTH_URLS.PETSTORE_URL })).toMatchObject({
      emulator: true,
      petstoreUrl: BOTH_URLS.PETSTORE_URL,
    });
  });

  it.each([
    ['auto', 'auto'],
    ['AUTO', 'auto'],
    ['4', 4],
  ] as const)('WORKERS=%s is read as %s', (raw, expected) => {
    expect(loadConfig([], { WORKERS: raw }).workers).toBe(expected);
  });

  it.each(['0', 'many', '-1'])('WORKERS=%s is refused, naming WORKERS', (raw) => {
    expect(configError([], { WORKERS: raw }).message).toBe(`WORKERS must be an integer from 1 to 256, got "${raw}"`);
  });
});

describe('URL credentials are never shown', () => {
  it.each([
    ['with a query', `https://alice:${PASSWORD}@petstore.internal/api/v3?x=1`],
    ['with another scheme', `ftp://alice:${PASSWORD}@petstore.internal/api/v3`],
    ['unparseable', `https://alice:${PASSWORD}@petstore internal/api/v3`],
  ])('in the error about a bad PETSTORE_URL %s', (_, petstoreUrl) => {
    const error = configError([], { ...BOTH_URLS, PETSTORE_URL: petstoreUrl });

    expect(error.message).toMatch(/^PETSTORE_URL /);
    expect(error.message).not.toContain(PASSWORD);
    expect(error.message).not.toContain('alice');
  });

  it('in changedSettings, the start-up banner', () => {
    const config = loadConfig(['--port', '5000'], {
      PETSTORE_URL: `https://alice:${PASSWORD}@petstore.internal/api/v3`,
      PLANTS_URL: `http://bob:${PASSWORD}@plants.internal:8080/`,
    });

    expect(changedSettings(config)).toEqual([
      'PORT=5000',
      'PETSTORE_URL=https://petstore.internal/api/v3',
      'PLANTS_URL=http://plants.internal:8080',
    ]);
  });

  it('by redactUrl', () => {
    expect(redactUrl(`https://alice:${PASSWORD}@petstore.internal/api/v3/`)).toBe('https://petstore.internal/api/v3');
  });
});

describe('changedSettings', () => {
  it('is empty for the defaults', () => {
    expect(changedSettings(loadConfig([], {}))).toEqual([]);
  });

  it('lists a set timeout that has no default of its own, and a changed retry count', () => {
    expect(changedSettings(loadConfig([], { PETSTORE_HEADERS_TIMEOUT_MS: '2000', UPSTREAM_RETRIES: '0' }))).toEqual([
      'PETSTORE_HEADERS_TIMEOUT_MS=2000',
      'UPSTREAM_RETRIES=0',
    ]);
  });

  it('names the timeout variables as they were set, though the configuration holds them resolved per area', () => {
    expect(changedSettings(loadConfig([], { UPSTREAM_TIMEOUT_MS: '2500', PLANTS_BODY_TIMEOUT_MS: '900' }))).toEqual([
      'UPSTREAM_TIMEOUT_MS=2500',
      'PLANTS_BODY_TIMEOUT_MS=900',
    ]);
  });
});

describe('helpText', () => {
  it.each([
    ['HOST', '--host'],
    ['PORT', '--port'],
    ['PETSTORE_URL', '--petstore-url'],
    ['PLANTS_URL', '--plants-url'],
    ['PETSTORE_BODY_FORMAT', '--petstore-body-format'],
    ['PETSTORE_ACCEPT', '--petstore-accept'],
    ['UPSTREAM_TIMEOUT_MS', '--upstream-timeout-ms'],
    ['UPSTREAM_CONNECTIONS', '--upstream-connections'],
    ['UPSTREAM_MAX_RESPONSE_BYTES', '--upstream-max-response-bytes'],
    ['UPSTREAM_CONNECT_TIMEOUT_MS', '--upstream-connect-timeout-ms'],
    ['UPSTREAM_HEADERS_TIMEOUT_MS', '--upstream-headers-timeout-ms'],
    ['UPSTREAM_BODY_TIMEOUT_MS', '--upstream-body-timeout-ms'],
    ['PETSTORE_TIMEOUT_MS', '--petstore-timeout-ms'],
    ['PETSTORE_CONNECT_TIMEOUT_MS', '--petstore-connect-timeout-ms'],
    ['PETSTORE_HEADERS_TIMEOUT_MS', '--petstore-headers-timeout-ms'],
    ['PETSTORE_BODY_TIMEOUT_MS', '--petstore-body-timeout-ms'],
    ['PLANTS_TIMEOUT_MS', '--plants-timeout-ms'],
    ['PLANTS_CONNECT_TIMEOUT_MS', '--plants-connect-timeout-ms'],
    ['PLANTS_HEADERS_TIMEOUT_MS', '--plants-headers-timeout-ms'],
    ['PLANTS_BODY_TIMEOUT_MS', '--plants-body-timeout-ms'],
    ['UPSTREAM_RETRIES', '--upstream-retries'],
    ['UPSTREAM_RETRY_BACKOFF_MS', '--upstream-retry-backoff-ms'],
    ['UPSTREAM_RETRY_BACKOFF_MAX_MS', '--upstream-retry-backoff-max-ms'],
    ['UPSTREAM_RETRY_BUDGET_PERCENT', '--upstream-retry-budget-percent'],
    ['UPLOAD_MAX_BYTES', '--upload-max-bytes'],
    ['UPLOAD_MAX_FILES', '--upload-max-files'],
    ['LOG_LEVEL', '--log-level'],
    ['GRAPHIQL', '--graphiql'],
    ['SHUTDOWN_GRACE_MS', '--shutdown-grace-ms'],
  ])('lists %s and its flag %s on one line', (env, flag) => {
    const line = helpText()
      .split('\n')
      .find((row) => row.trim().startsWith(`${flag} `));

    expect(line).toBeDefined();
    expect(line).toContain(` ${env} `);
  });
});

describe('startCommand', () => {
  it.each([
    [[], 'serve'],
    [['--port', '5000'], 'serve'],
    [['--help'], 'help'],
    [['--print-schema'], 'print-schema'],
    [['--print-schema', '--help'], 'help'],
  ] as const)('%j asks to %s', (argv, command) => {
    expect(startCommand(argv)).toBe(command);
  });
});

describe('loadEmulatorConfig (npm run emulator)', () => {
  it('listens on 127.0.0.1:4010 by default', () => {
    expect(loadEmulatorConfig([], {})).toEqual({ host: '127.0.0.1', port: 4010 });
  });

  it('reads EMULATOR_HOST and EMULATOR_PORT, and flags before them', () => {
    expect(loadEmulatorConfig([], { EMULATOR_HOST: '0.0.0.0', EMULATOR_PORT: '5010' })).toEqual({
      host: '0.0.0.0',
      port: 5010,
    });
    expect(loadEmulatorConfig(['--emulator-port', '6010'], { EMULATOR_PORT: '5010' }).port).toBe(6010);
  });

  it('names EMULATOR_PORT when it is not a port', () => {
    expect(() => loadEmulatorConfig([], { EMULATOR_PORT: 'x' })).toThrow(
      new ConfigError('EMULATOR_PORT must be an integer from 0 to 65535, got "x"'),
    );
  });
});

describe('either upstream URL alone', () => {
  it.each([
    ['PETSTORE_URL', { PETSTORE_URL: BOTH_URLS.PETSTORE_URL }],
    ['PLANTS_URL', { PLANTS_URL: BOTH_URLS.PLANTS_URL }],
  ] as const)('%s alone is a production configuration serving that area only', (_, urls) => {
    const config = loadConfig([], { NODE_ENV: 'production', ...urls });

    expect(config.petstoreUrl).toBe('PETSTORE_URL' in urls ? BOTH_URLS.PETSTORE_URL : undefined);
    expect(config.plantsUrl).toBe('PLANTS_URL' in urls ? BOTH_URLS.PLANTS_URL : undefined);
    expect(config.emulator).toBeUndefined();
  });
});

describe('the settings 1.0.0 documented', () => {
  it('are all read, together, and the start warns of none but the retired one', () => {
    const config = loadConfig([], SETTINGS_OF_1_0_0);

    expect(config).toMatchObject({ port: 4001, upstreamRetries: 1, upstreamCircuitCooldownMs: 3000 });
    expect(warningsOf(config)).toEqual([
      'UPSTREAM_CIRCUIT_FAILURES is retired and will stop being read in 2.0.0: the circuit opens on a failure rate over a window (UPSTREAM_CIRCUIT_FAILURE_RATE, UPSTREAM_CIRCUIT_MIN_CALLS, UPSTREAM_CIRCUIT_WINDOW_MS). Its value is read as UPSTREAM_CIRCUIT_MIN_CALLS=5; set that instead.',
    ]);
  });

  it('TRUSTED_DOCUMENTS, which 1.0.0 refused with GRAPHIQL=true, is read too', () => {
    const { GRAPHIQL: _graphiql, ...others } = SETTINGS_OF_1_0_0;
    expect(loadConfig([], { ...others, TRUSTED_DOCUMENTS: 'manifest.json' }).trustedDocuments).toBe('manifest.json');
  });

  it('UPSTREAM_CIRCUIT_FAILURES=5 is read as UPSTREAM_CIRCUIT_MIN_CALLS=5, and 0 as no breaker', () => {
    expect(loadConfig([], { UPSTREAM_CIRCUIT_FAILURES: '5' })).toMatchObject({
      upstreamCircuitMinCalls: 5,
      upstreamCircuitFailureRate: 50,
    });
    expect(loadConfig([], { UPSTREAM_CIRCUIT_FAILURES: '0' })).toMatchObject({ upstreamCircuitFailureRate: 0 });
    expect(loadConfig(['--upstream-circuit-failures', '7'], {})).toMatchObject({ upstreamCircuitMinCalls: 7 });
  });

  it('UPSTREAM_CIRCUIT_FAILURES gives way to the setting that replaced it, when that is set, and says so', () => {
    const config = loadConfig([], { UPSTREAM_CIRCUIT_FAILURES: '5', UPSTREAM_CIRCUIT_MIN_CALLS: '20' });

    expect(config.upstreamCircuitMinCalls).toBe(20);
    expect(warningsOf(config)[0]).toMatch(/Its value is not used: UPSTREAM_CIRCUIT_MIN_CALLS is set\.$/);
  });
});
