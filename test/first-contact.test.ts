/**
 * What a new user meets before the first query: `/` says what this is and where to go, a browser
 * that opens the endpoint with GraphiQL off is told how to send a query, trusted-documents mode
 * has no GraphiQL, a misspelt flag or cache setting names what was meant, a development start
 * listens on loopback only, and `npm ci` has no install script to warn about.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/index.js';
import { createGateway } from '../src/gateway.js';
import { useObserved } from './helpers/observed.js';
import { PROJECT_ROOT, useProcesses, waitFor } from './helpers/process.js';
import { ALL_CREDENTIALS, testConfig } from './helpers/stack.js';

/** What Chromium sends when a page is opened. */
const BROWSER_ACCEPT =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8';

const observed = useObserved();
const processes = useProcesses();

describe('the root path', () => {
  it.each([
    ['development', {}],
    ['production', { graphiql: false, introspection: false, nodeEnv: 'production' }],
  ] as const)('points a browser to the GraphQL endpoint, naming no software or version (%s)', async (_, overrides) => {
    const gateway = await observed.serve(undefined, overrides);

    const page = await fetch(`${gateway.origin}/`, { headers: { accept: BROWSER_ACCEPT } });

    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain('<a href="/graphql">/graphql</a>');
    expect(html).not.toMatch(/yoga|version|\d+\.\d+\.\d+/i);
    expect(observed.emulator.requests).toEqual([]);
  });

  it('answers a tool with JSON naming the endpoint', async () => {
    const gateway = await observed.serve();

    const answer = await fetch(`${gateway.origin}/`);

    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({
      message: expect.stringContaining('GraphQL gateway') as unknown,
      graphql: '/graphql',
    });
  });

  it("leaves other unknown paths a bare 404, without yoga's landing page", async () => {
    const gateway = await observed.serve();

    const answer = await fetch(`${gateway.origin}/graphiql`, { headers: { accept: BROWSER_ACCEPT } });

    expect(answer.status).toBe(404);
    expect(await answer.text()).not.toMatch(/yoga|landingPage/i);
  });
});

describe('a browser that opens /graphql while GraphiQL is off', () => {
  it.each([BROWSER_ACCEPT, 'text/html'])(
    'is told GraphiQL is off and how to send a query, as JSON, and the log says GRAPHIQL_DISABLED (Accept %s)',
    async (accept) => {
      const gateway = await observed.serve(undefined, { graphiql: false });

      const answer = await fetch(gateway.url, { headers: { accept } });

      expect(answer.status).toBe(404);
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await answer.json()).toEqual({
        errors: [
          {
            message:
              'GraphiQL is off on this gateway (GRAPHIQL=false). Send GraphQL requests to /graphql as POST ' +
              `application/json, e.g. curl -X POST /graphql -H 'content-type: application/json' ` +
              `-d '{"query":"{ __typename }"}'`,
            extensions: { code: 'GRAPHIQL_DISABLED' },
          },
        ],
      });
      expect(gateway.requestLines()).toEqual([
        expect.objectContaining({ method: 'GET', path: '/graphql', status: 404, errorCodes: ['GRAPHIQL_DISABLED'] }),
      ]);
    },
  );

  it('still refuses a GET query without the CSRF header, as before', async () => {
    const gateway = await observed.serve(undefined, { graphiql: false });

    const answer = await fetch(`${gateway.url}?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { accept: BROWSER_ACCEPT },
    });

    expect(answer.status).toBe(403);
    expect(await answer.json()).toMatchObject({ errors: [{ extensions: { code: 'CSRF_HEADER_REQUIRED' } }] });
  });
});

describe('trusted-documents mode', () => {
  const manifest = join(mkdtempSync(join(tmpdir(), 'first-contact-')), 'manifest.json');
  writeFileSync(manifest, '{}');

  it('turns GraphiQL off, which cannot send a trusted document', () => {
    expect(loadConfig([], { TRUSTED_DOCUMENTS: manifest }).graphiql).toBe(false);
    expect(loadConfig([], {}).graphiql).toBe(true);
  });

  it('refuses GRAPHIQL=true beside it, naming both settings', () => {
    expect(() => loadConfig([], { TRUSTED_DOCUMENTS: manifest, GRAPHIQL: 'true' })).toThrow(
      new ConfigError(
        'GRAPHIQL=true cannot be used with TRUSTED_DOCUMENTS: GraphiQL sends documents as text, which only the ' +
          'documents of the manifest may be; unset GRAPHIQL',
      ),
    );
  });

  it('starts without promising GraphiQL or demo credentials in its start-up lines', async () => {
    const { output } = processes.startGateway({ TRUSTED_DOCUMENTS: manifest });

    await waitFor(output, /Shared state: .*\n/);

    expect(output()).toMatch(/^GraphQL gateway ready: http:\/\/127\.0\.0\.1:\d+\/graphql\n/m);
    expect(output()).toMatch(/^Upstreams: embedded emulator \(pet store [^)]*\)\n/m);
    expect(output()).not.toMatch(/GraphiQL/);
  });

  it('serves no GraphiQL page', async () => {
    const gateway = await observed.serve(undefined, loadConfig([], { TRUSTED_DOCUMENTS: manifest }));

    const answer = await fetch(gateway.url, { headers: { accept: BROWSER_ACCEPT } });

    expect(answer.status).toBe(404);
    expect(await answer.text()).toContain('GRAPHIQL_DISABLED');
  });
});

describe('command-line flags', () => {
  it.each([
    [['--prot', '4001'], "Unknown option '--prot'. Did you mean --port (PORT)? See --help for every setting."],
    [
      ['--petstore-ulr=http://pets.example'],
      "Unknown option '--petstore-ulr'. Did you mean --petstore-url (PETSTORE_URL)? See --help for every setting.",
    ],
    [['--print-shema'], "Unknown option '--print-shema'. Did you mean --print-schema? See --help for every setting."],
    [['--zzzzzzzz'], "Unknown option '--zzzzzzzz'. See --help for every setting."],
    [['--port'], "Option '--port <value>' argument missing; see --help"],
  ])('%j is refused with the setting meant and a pointer to --help', (argv, message) => {
    expect(() => loadConfig(argv, {})).toThrow(new ConfigError(message));
  });
});

describe('listening', () => {
  it('is on loopback outside production, and on every interface in production (as containers need)', () => {
    expect(loadConfig([], {}).host).toBe('127.0.0.1');
    expect(loadConfig([], { NODE_ENV: 'production', EMULATOR: 'true' }).host).toBe('0.0.0.0');
    expect(loadConfig([], { HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });
});

describe('RESPONSE_CACHE_TTL_PER_TYPE', () => {
  const gatewayWith = (ttlPerType: string[]) =>
    createGateway(
      testConfig({
        petstoreUrl: 'http://127.0.0.1:9',
        plantsUrl: 'http://127.0.0.1:9',
        responseCacheTtlPerType: ttlPerType,
      }),
    );

  it.each([
    [['Foo=10'], 'RESPONSE_CACHE_TTL_PER_TYPE: the schema has no type Foo'],
    [['Pet=10', 'Pett=0'], 'RESPONSE_CACHE_TTL_PER_TYPE: the schema has no type Pett (did you mean Pet?)'],
    [['Pet.nmae=10'], 'RESPONSE_CACHE_TTL_PER_TYPE: Pet has no field nmae (did you mean Pet.name?)'],
  ])('refuses %j at start, naming the entry and what was meant', (entries, message) => {
    expect(() => gatewayWith(entries)).toThrow(new ConfigError(message));
  });

  it('alone, keeps only the answers holding its types', async () => {
    const gateway = await observed.serve(undefined, { responseCacheTtlPerType: ['Inventory=60000'] });
    const inventory = '{ inventory { entries { status quantity } } }';
    const pet = '{ pet(id: 1) { name } }';

    const first = await gateway.gql(inventory, {}, ALL_CREDENTIALS);
    const second = await gateway.gql(inventory, {}, ALL_CREDENTIALS);
    await gateway.gql(pet, {}, ALL_CREDENTIALS);
    await gateway.gql(pet, {}, ALL_CREDENTIALS);

    expect(second).toEqual(first);
    expect(first.data).toBeTruthy();
    expect(observed.emulator.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'GET /api/v3/store/inventory',
      'GET /api/v3/pet/1',
      'GET /api/v3/pet/1',
    ]);
  });
});

describe('npm ci', () => {
  type Lockfile = { packages: Record<string, { hasInstallScript?: boolean; version?: string }> };
  type Manifest = { allowScripts?: Record<string, boolean> };
  const json = (file: string): unknown => JSON.parse(readFileSync(`${PROJECT_ROOT}${file}`, 'utf8'));

  it('finds every dependency with an install script named in allowScripts, so it prints no warning', () => {
    const { packages } = json('package-lock.json') as Lockfile;
    const { allowScripts = {} } = json('package.json') as Manifest;
    const withScripts = Object.entries(packages)
      .filter(([, entry]) => entry.hasInstallScript === true)
      .map(([path, entry]) => ({ name: path.slice(path.lastIndexOf('node_modules/') + 13), version: entry.version }));

    expect(withScripts.length).toBeGreaterThan(0);
    for (const { name, version } of withScripts)
      expect({ name, reviewed: name in allowScripts || `${name}@${version}` in allowScripts }).toEqual({
        name,
        reviewed: true,
      });
  });
});
