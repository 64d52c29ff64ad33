/**
 * What browsers meet: CSRF prevention, CORS, GraphiQL and introspection, and how NODE_ENV=production
 * changes the defaults (introspection and GraphiQL off, internal errors masked as always).
 */
import { getIntrospectionQuery } from 'graphql';
import { describe, expect, it } from 'vitest';
import { changedSettings, helpText, loadConfig } from '../src/config/index.js';
import { createGateway } from '../src/gateway.js';
import type { UpstreamPool } from '../src/upstream/http.js';
import {
  ALL_CREDENTIALS,
  API_KEY,
  BEARER,
  listen,
  postGraphQL,
  startStack,
  stop,
  testConfig,
  useStack,
  type Stack,
} from './helpers/stack.js';

const stack = useStack();

/** Runs `test` against a gateway with these settings, on the shared emulator. */
async function withStack(
  overrides: Parameters<typeof startStack>[0],
  test: (other: Stack) => Promise<void>,
): Promise<void> {
  const other = await startStack(overrides, stack.emulator);
  try {
    await test(other);
  } finally {
    await other.close();
  }
}

const GOOD = '{ pet(id: 1) { id } }';
const getUrl = (url: string, query: string) => `${url}?${new URLSearchParams({ query })}`;

describe('CSRF prevention (CSRF_PREVENTION, on by default)', () => {
  it('lets a JSON POST through without any extra header: browsers preflight it', async () => {
    expect(await stack.gql(GOOD, {}, ALL_CREDENTIALS)).toEqual({ status: 200, data: { pet: { id: '1' } } });
  });

  it.each([
    'x-graphql-csrf',
    'x-graphql-yoga-csrf',
    'apollo-require-preflight',
    'x-apollo-operation-name',
    'graphql-preflight',
  ])('answers a GET that carries %s', async (header) => {
    const response = await fetch(getUrl(stack.url, GOOD), {
      headers: { accept: 'application/json', [header]: '1', ...ALL_CREDENTIALS },
    });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { pet: { id: '1' } } });
  });

  it('refuses a GET without one with 403 CSRF_HEADER_REQUIRED, before anything runs', async () => {
    const response = await fetch(getUrl(stack.url, GOOD), {
      headers: { accept: 'application/json', ...ALL_CREDENTIALS },
    });

    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      errors: [
        {
          message:
            'This request could have been sent by another site: send it as application/json, or add the header x-graphql-csrf: 1 (GET requests and uploads need the header)',
          extensions: { code: 'CSRF_HEADER_REQUIRED' },
        },
      ],
    });
    expect(stack.upstream()).toEqual([]);
  });

  it('can be switched off: then a GET without the header is answered', async () => {
    await withStack({ csrfPrevention: false }, async (other) => {
      const response = await fetch(getUrl(other.url, GOOD), {
        headers: { accept: 'application/json', ...ALL_CREDENTIALS },
      });

      expect(response.status).toBe(200);
    });
  });
});

describe('CORS (CORS_ORIGINS)', () => {
  const preflight = (url: string, origin: string) =>
    fetch(url, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, authorization',
      },
    });

  it('sends no CORS headers by default: a page of another origin cannot read an answer', async () => {
    const response = await fetch(stack.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    const refused = await preflight(stack.url, 'https://evil.example');

    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(refused.status).toBe(405);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('allows the configured origins, with credentials and the gateway headers, and no others', async () => {
    await withStack({ corsOrigins: ['https://app.example', 'https://admin.example'] }, async (other) => {
      const allowed = await preflight(other.url, 'https://app.example');
      const denied = await preflight(other.url, 'https://evil.example');

      expect(allowed.status).toBe(204);
      expect(Object.fromEntries([...allowed.headers].filter(([name]) => name.startsWith('access-control-')))).toEqual({
        'access-control-allow-origin': 'https://app.example',
        'access-control-allow-credentials': 'true',
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers':
          'accept, content-type, authorization, api_key, x-graphql-csrf, x-graphql-yoga-csrf, graphql-preflight, apollo-require-preflight, x-apollo-operation-name, mcp-protocol-version',
        'access-control-max-age': '600',
      });
      expect(denied.headers.get('access-control-allow-origin')).toBe('null');
    });
  });

  it('with *, allows any origin but not credentials mode', async () => {
    await withStack({ corsOrigins: ['*'] }, async (other) => {
      const response = await preflight(other.url, 'https://anywhere.example');

      expect(response.headers.get('access-control-allow-origin')).toBe('https://anywhere.example');
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    });
  });
});

describe('introspection (INTROSPECTION)', () => {
  it('is on by default: GraphiQL loads the schema the way it asks for it', async () => {
    // GraphiQL posts JSON and accepts JSON or multipart/mixed.
    const response = await fetch(stack.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, multipart/mixed' },
      body: JSON.stringify({ query: getIntrospectionQuery(), operationName: 'IntrospectionQuery' }),
    });
    const body = (await response.json()) as { data?: { __schema?: { queryType?: { name?: string } } } };

    expect(response.status).toBe(200);
    expect(body.data?.__schema?.queryType?.name).toBe('Query');
  });

  describe('off', () => {
    it.each([
      ['__schema', '{ __schema { queryType { name } } }'],
      ['__type', '{ __type(name: "Pet") { fields { name } } }'],
      ['_service', '{ _service { sdl } }'],
    ])('refuses %s with 400 INTROSPECTION_DISABLED', async (field, query) => {
      await withStack({ introspection: false }, async (other) => {
        const result = await other.gql(query);

        expect(result.status).toBe(400);
        expect(result.errors?.map(({ message, extensions }) => ({ message, extensions }))).toEqual([
          {
            message: `Introspection is disabled: "${field}" cannot be queried.`,
            extensions: { code: 'INTROSPECTION_DISABLED' },
          },
        ]);
      });
    });

    it('still answers __typename and ordinary queries', async () => {
      await withStack({ introspection: false }, async (other) => {
        expect(await other.gql('{ __typename pet(id: 1) { __typename id } }', {}, ALL_CREDENTIALS)).toEqual({
          status: 200,
          data: { __typename: 'Query', pet: { __typename: 'Pet', id: '1' } },
        });
      });
    });

    it('does not spell out the schema in "Did you mean" suggestions', async () => {
      await withStack({ introspection: false }, async (other) => {
        const hidden = await other.gql('{ pet(id: 1) { nam } }');
        const shown = await stack.gql('{ pet(id: 1) { nam } }');

        expect(hidden.errors?.[0]?.message).toBe('Cannot query field "nam" on type "Pet". [Suggestion hidden]');
        expect(shown.errors?.[0]?.message).toBe('Cannot query field "nam" on type "Pet". Did you mean "name"?');
      });
    });
  });
});

describe('NODE_ENV=production', () => {
  // Production needs its upstreams (or EMULATOR=true): without them the start is refused.
  const UPSTREAMS = { PETSTORE_URL: 'http://petstore.internal/api/v3', PLANTS_URL: 'http://plants.internal' };
  const BANNER_URLS = ['PETSTORE_URL=http://petstore.internal/api/v3', 'PLANTS_URL=http://plants.internal'];
  const production = loadConfig([], { NODE_ENV: 'production', ...UPSTREAMS });

  it('turns introspection and GraphiQL off unless they are set', () => {
    expect({ introspection: production.introspection, graphiql: production.graphiql }).toEqual({
      introspection: false,
      graphiql: false,
    });
    expect(
      loadConfig([], { NODE_ENV: 'production', INTROSPECTION: 'true', GRAPHIQL: 'true', ...UPSTREAMS }),
    ).toMatchObject({ introspection: true, graphiql: true });
    expect(loadConfig(['--node-env', 'production'], UPSTREAMS)).toMatchObject({
      introspection: false,
      graphiql: false,
    });
  });

  it('leaves them on in development and in tests', () => {
    expect(loadConfig([], { NODE_ENV: 'test' })).toMatchObject({ introspection: true, graphiql: true });
  });

  it('reports only NODE_ENV as changed when the rest are its defaults, and GRAPHIQL=true as a change', () => {
    expect(changedSettings(production)).toEqual([...BANNER_URLS, 'NODE_ENV=production']);
    expect(changedSettings(loadConfig([], { NODE_ENV: 'production', GRAPHIQL: 'true', ...UPSTREAMS }))).toEqual([
      ...BANNER_URLS,
      'GRAPHIQL=true',
      'NODE_ENV=production',
    ]);
  });

  it('says so in --help', () => {
    expect(helpText()).toMatch(/--introspection\s+INTROSPECTION\s+.*\(default true; false when NODE_ENV=production\)/);
    expect(helpText()).toMatch(/--graphiql\s+GRAPHIQL\s+.*\(default true; false when NODE_ENV=production\)/);
  });

  it('serves no GraphiQL page, refuses introspection, and masks an internal error without its details', async () => {
    const crash = new TypeError(
      `Cannot read properties of undefined (reading 'id') at /work/main/src/upstream/http.ts:120 (Bearer ${BEARER}, api_key ${API_KEY})`,
    );
    const crashing = (service: 'petstore' | 'plants'): UpstreamPool => ({
      service,
      request: () => Promise.reject(crash),
      ping: () => Promise.resolve(200),
      close: () => Promise.resolve(),
    });
    const config = testConfig({
      ...production,
      host: '127.0.0.1',
      port: 0,
      logLevel: 'error',
      petstoreUrl: stack.emulator.petstoreUrl,
      plantsUrl: stack.emulator.plantsUrl,
    });
    const gateway = createGateway(config, { createUpstreamClient: crashing });
    const { server, url } = await listen(gateway.handler);
    try {
      const page = await fetch(`${url}/graphql`, { headers: { accept: 'text/html' } });
      const introspection = await postGraphQL(`${url}/graphql`, '{ __schema { queryType { name } } }');
      const crashed = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...ALL_CREDENTIALS },
        body: JSON.stringify({ query: GOOD }),
      });
      const text = await crashed.text();

      expect(await page.text()).not.toContain('<div id="root"></div>');
      expect(introspection.errors?.map((error) => error.extensions?.['code'])).toEqual(['INTROSPECTION_DISABLED']);
      expect(JSON.parse(text)).toEqual({
        data: { pet: null },
        errors: [
          expect.objectContaining({
            message: 'Unexpected error.',
            path: ['pet'],
            extensions: { code: 'INTERNAL_SERVER_ERROR' },
          }),
        ],
      });
      for (const secret of [BEARER, API_KEY, 'Cannot read', 'stack', '/src/']) expect(text).not.toContain(secret);
    } finally {
      await stop(server);
      await gateway.close();
    }
  });
});
