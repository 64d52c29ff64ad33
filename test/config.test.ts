/**
 * Configuration (`src/config.ts`): defaults, environment variables, flags that win over them,
 * a ConfigError naming each bad setting, URLs whose credentials are never echoed, and `--help`.
 */
import { describe, expect, it } from 'vitest';
import { changedSettings, ConfigError, helpText, loadConfig, loadEmulatorConfig, redactUrl } from '../src/config.js';

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
      host: '0.0.0.0',
      port: 4000,
      petstoreUrl: undefined,
      plantsUrl: undefined,
      petstoreBodyFormat: 'json',
      petstoreAccept: 'json',
      upstreamTimeoutMs: 10000,
      upstreamConnections: 32,
      upstreamMaxResponseBytes: 10485760,
      uploadMaxBytes: 10485760,
      logLevel: 'info',
      graphiql: true,
    });
  });

  it('reads every environment variable', () => {
    const config = loadConfig([], {
      HOST: '127.0.0.1',
      PORT: '8080',
      PETSTORE_URL: 'https://petstore3.swagger.io/api/v3/',
      PLANTS_URL: 'https://plants.example/',
      PETSTORE_BODY_FORMAT: 'XML',
      PETSTORE_ACCEPT: 'xml',
      UPSTREAM_TIMEOUT_MS: '2500',
      UPSTREAM_CONNECTIONS: '4',
      UPSTREAM_MAX_RESPONSE_BYTES: '1024',
      UPLOAD_MAX_BYTES: '2048',
      LOG_LEVEL: 'debug',
      GRAPHIQL: 'false',
    });

    expect(config).toEqual({
      host: '127.0.0.1',
      port: 8080,
      // A trailing slash is dropped, so that paths join the same way whatever the user wrote.
      petstoreUrl: 'https://petstore3.swagger.io/api/v3',
      plantsUrl: 'https://plants.example',
      petstoreBodyFormat: 'xml',
      petstoreAccept: 'xml',
      upstreamTimeoutMs: 2500,
      upstreamConnections: 4,
      upstreamMaxResponseBytes: 1024,
      uploadMaxBytes: 2048,
      logLevel: 'debug',
      graphiql: false,
    });
  });

  it('lets flags (--port 5000, --petstore-body-format=xml) win over the environment', () => {
    const config = loadConfig(['--port', '5000', '--petstore-body-format=xml'], { PORT: '4001', PETSTORE_BODY_FORMAT: 'form', UPSTREAM_CONNECTIONS: '8' });

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
  });
});

describe('a bad setting stops the start with a ConfigError naming it', () => {
  it.each([
    ['PORT=abc', [], { PORT: 'abc' }, 'PORT must be an integer from 0 to 65535, got "abc"'],
    ['PORT=70000', [], { PORT: '70000' }, 'PORT must be an integer from 0 to 65535, got "70000"'],
    ['--port -1', ['--port=-1'], {}, 'PORT must be an integer from 0 to 65535, got "-1"'],
    ['UPSTREAM_TIMEOUT_MS=0', [], { UPSTREAM_TIMEOUT_MS: '0' }, 'UPSTREAM_TIMEOUT_MS must be an integer from 1 to 600000, got "0"'],
    ['PETSTORE_URL=not a url', [], { ...BOTH_URLS, PETSTORE_URL: 'not a url' }, 'PETSTORE_URL must be an absolute http(s) URL'],
    ['PETSTORE_URL=ftp://x', [], { ...BOTH_URLS, PETSTORE_URL: 'ftp://x' }, 'PETSTORE_URL must be an http(s) URL'],
    ['PLANTS_URL with a query', [], { ...BOTH_URLS, PLANTS_URL: 'https://plants.example/?debug=1' }, 'PLANTS_URL must not have a query or fragment'],
    ['PETSTORE_BODY_FORMAT=yaml', [], { PETSTORE_BODY_FORMAT: 'yaml' }, 'PETSTORE_BODY_FORMAT must be one of json, xml, form, got "yaml"'],
    ['GRAPHIQL=yes', [], { GRAPHIQL: 'yes' }, 'GRAPHIQL must be one of true, false, got "yes"'],
  ] as const)('%s', (_, argv, env, message) => {
    expect(configError(argv, env).message).toBe(message);
  });

  it('an unknown flag is named', () => {
    expect(configError(['--colour', 'red'], {}).message).toMatch(/'--colour'/);
  });

  it('a flag without its value is named', () => {
    expect(configError(['--port'], {}).message).toMatch(/'--port/);
  });

  it('PETSTORE_URL without PLANTS_URL names PLANTS_URL as missing', () => {
    expect(configError([], { PETSTORE_URL: BOTH_URLS.PETSTORE_URL }).message).toBe(
      'PLANTS_URL must be set too: set both upstream URLs, or neither to use the embedded emulator',
    );
  });

  it('PLANTS_URL without PETSTORE_URL names PETSTORE_URL as missing', () => {
    expect(configError([], { PLANTS_URL: BOTH_URLS.PLANTS_URL }).message).toMatch(/^PETSTORE_URL must be set too/);
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
    const config = loadConfig(['--port', '5000'], { PETSTORE_URL: `https://alice:${PASSWORD}@petstore.internal/api/v3`, PLANTS_URL: `http://bob:${PASSWORD}@plants.internal:8080/` });

    expect(changedSettings(config)).toEqual(['PORT=5000', 'PETSTORE_URL=https://petstore.internal/api/v3', 'PLANTS_URL=http://plants.internal:8080']);
  });

  it('by redactUrl', () => {
    expect(redactUrl(`https://alice:${PASSWORD}@petstore.internal/api/v3/`)).toBe('https://petstore.internal/api/v3');
  });
});

describe('changedSettings', () => {
  it('is empty for the defaults', () => {
    expect(changedSettings(loadConfig([], {}))).toEqual([]);
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
    ['UPLOAD_MAX_BYTES', '--upload-max-bytes'],
    ['LOG_LEVEL', '--log-level'],
    ['GRAPHIQL', '--graphiql'],
  ])('lists %s and its flag %s on one line', (env, flag) => {
    const line = helpText()
      .split('\n')
      .find((row) => row.trim().startsWith(`${flag} `));

    expect(line).toBeDefined();
    expect(line).toContain(` ${env} `);
  });
});

describe('loadEmulatorConfig (npm run emulator)', () => {
  it('listens on 127.0.0.1:4010 by default', () => {
    expect(loadEmulatorConfig([], {})).toEqual({ host: '127.0.0.1', port: 4010 });
  });

  it('reads EMULATOR_HOST and EMULATOR_PORT, and flags before them', () => {
    expect(loadEmulatorConfig([], { EMULATOR_HOST: '0.0.0.0', EMULATOR_PORT: '5010' })).toEqual({ host: '0.0.0.0', port: 5010 });
    expect(loadEmulatorConfig(['--emulator-port', '6010'], { EMULATOR_PORT: '5010' }).port).toBe(6010);
  });

  it('names EMULATOR_PORT when it is not a port', () => {
    expect(() => loadEmulatorConfig([], { EMULATOR_PORT: 'x' })).toThrow(new ConfigError('EMULATOR_PORT must be an integer from 0 to 65535, got "x"'));
  });
});
