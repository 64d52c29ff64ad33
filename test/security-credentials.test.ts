/**
 * Credential hygiene. Two callers with different credentials, served concurrently by an upstream
 * that answers according to the credential, never see each other's data (loaders are per request,
 * and the response cache, when on, is keyed by credential). And `Authorization`, `api_key` and
 * passwords appear in no response, no log line and no metric, whatever the upstream echoes.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type GatewayConfig, type GatewayDependencies } from '../src/gateway.js';
import { json, startScriptedUpstream, type Answer, type ScriptedUpstream } from './helpers/scripted-upstream.js';
import { listen, postGraphQL, stop, testConfig, type GraphQLResponse } from './helpers/stack.js';

const ALICE = { authorization: 'Bearer alice-token-6d1f0c', api_key: 'alice-key-93be27' };
const BOB = { authorization: 'Bearer bob-token-41aa8e', api_key: 'bob-key-0c55d3' };
const OWNER_BY_KEY: Record<string, string> = { [ALICE.api_key]: 'alice', [BOB.api_key]: 'bob' };
const OWNER_BY_BEARER: Record<string, string> = { [ALICE.authorization]: 'alice', [BOB.authorization]: 'bob' };
const PASSWORD = 'correct-horse-battery-staple';
const SECRETS = [...Object.values(ALICE), ...Object.values(BOB), 'alice-token-6d1f0c', 'bob-token-41aa8e', PASSWORD];

/** A gateway in front of the scripted upstream, with its log captured. */
type Served = {
  url: string;
  origin: string;
  log: string[];
  gql(query: string, variables: Record<string, unknown>, headers: Record<string, string>): Promise<GraphQLResponse>;
  close(): Promise<void>;
};

async function serve(
  upstream: ScriptedUpstream,
  overrides: Partial<GatewayConfig> = {},
  dependencies: GatewayDependencies = {},
): Promise<Served> {
  const log: string[] = [];
  const config = testConfig({
    petstoreUrl: `${upstream.url}/api/v3`,
    plantsUrl: upstream.url,
    upstreamRetries: 0,
    logLevel: 'debug',
    ...overrides,
  });
  const gateway = createGateway(config, {
    ...dependencies,
    logDestination: { write: (line: string) => void log.push(line) },
  });
  const { server, url } = await listen(gateway.handler);
  return {
    url: `${url}/graphql`,
    origin: url,
    log,
    gql: (query, variables, headers) => postGraphQL(`${url}/graphql`, query, variables, headers),
    async close() {
      await stop(server);
      await gateway.close();
    },
  };
}

let upstream: ScriptedUpstream;
beforeAll(async () => {
  upstream = await startScriptedUpstream();
});
afterAll(() => upstream?.close());
beforeEach(() => upstream.reset());

describe('two callers at the same time', () => {
  /**
   * Answers each read with data that names the owner of the credential it came with, a little late, so
   * requests overlap.
   */
  function answerByCredential(request: {
    url: string;
    headers: Readonly<Record<string, string | string[] | undefined>>;
  }): Answer {
    const owner =
      OWNER_BY_KEY[String(request.headers['api_key'])] ??
      OWNER_BY_BEARER[String(request.headers['authorization'])] ??
      'nobody';
    const delayMs = Math.floor(Math.random() * 15);
    const pet = /^\/api\/v3\/pet\/(\d+)$/.exec(request.url);
    if (pet)
      return {
        ...json(200, { id: Number(pet[1]), name: `${owner}'s pet ${pet[1]}`, photoUrls: [], status: 'available' }),
        delayMs,
      };
    if (request.url.startsWith('/api/v3/pet/findByStatus'))
      return { ...json(200, [{ id: 9, name: `${owner}'s sold pet`, photoUrls: [], status: 'sold' }]), delayMs };
    if (/^\/api\/v3\/store\/order\/\d+$/.test(request.url)) return { ...json(200, { id: 1, petId: 3 }), delayMs };
    if (request.url === '/api/v3/store/inventory') return { ...json(200, { [owner]: 1 }), delayMs };
    return json(404, { code: 404, message: 'not found' });
  }

  const QUERY =
    '{ pet(id: 1) { name } pets(ids: [1, 2]) { name } order(id: 1) { pet { name } } petsByStatus(status: [SOLD]) { name } inventory { entries { status } } }';
  const seenBy = (owner: string) => ({
    status: 200,
    data: {
      pet: { name: `${owner}'s pet 1` },
      pets: [{ name: `${owner}'s pet 1` }, { name: `${owner}'s pet 2` }],
      // The order is read without a credential; its pet through the caller's loader, with the caller's.
      order: { pet: { name: `${owner}'s pet 3` } },
      petsByStatus: [{ name: `${owner}'s sold pet` }],
      inventory: { entries: [{ status: owner }] },
    },
  });

  it.each([
    ['per-request loaders', {}],
    ['the response cache on (keyed by credential)', { responseCacheTtlMs: 60_000 }],
  ])('each sees only the data fetched with its own credential (%s)', async (_, overrides) => {
    upstream.answer(answerByCredential);
    const gateway = await serve(upstream, overrides);
    try {
      // Thirty requests of each, interleaved, all in flight together.
      const callers = Array.from({ length: 60 }, (_, index) => (index % 2 === 0 ? 'alice' : 'bob'));
      const results = await Promise.all(
        callers.map((owner) => gateway.gql(QUERY, {}, owner === 'alice' ? ALICE : BOB)),
      );

      results.forEach((result, index) => expect(result).toEqual(seenBy(callers[index] ?? '')));
      // Every call carried one caller's credentials, never a mix.
      for (const request of upstream.requests) {
        const owners = new Set(
          [
            OWNER_BY_KEY[String(request.headers['api_key'])],
            OWNER_BY_BEARER[String(request.headers['authorization'])],
          ].filter(Boolean),
        );
        expect(owners.size).toBeLessThanOrEqual(1);
      }
    } finally {
      await gateway.close();
    }
  });
});

describe('secrets never leave', () => {
  let gateway: Served;
  beforeAll(async () => {
    gateway = await serve(upstream);
  });
  afterAll(() => gateway?.close());

  /** What a caller and an operator can see: the responses, the log, the metrics. */
  async function everythingVisible(responses: readonly unknown[]): Promise<string> {
    const metrics = await fetch(`${gateway.origin}/metrics`).then((response) => response.text());
    return [JSON.stringify(responses), gateway.log.join('\n'), metrics].join('\n');
  }

  it('not when the upstream echoes the credentials and the password in its error messages', async () => {
    upstream.answer((request) =>
      json(request.method === 'GET' ? 401 : 400, {
        code: 400,
        message: `rejected: ${request.body} ${String(request.headers['authorization'])} ${String(request.headers['api_key'])}`,
      }),
    );

    const responses = [
      await gateway.gql('{ pet(id: 1) { name } }', {}, ALICE),
      await gateway.gql('{ inventory { entries { status } } }', {}, BOB),
      await gateway.gql(
        'mutation ($u: UserInput!) { createUser(input: $u) { username } }',
        { u: { username: 'alice', password: PASSWORD } },
        ALICE,
      ),
      await gateway.gql(
        'mutation ($u: [UserInput!]!) { createUsers(input: $u) { username } }',
        {
          u: [
            { username: 'a', password: PASSWORD },
            { username: 'b', password: `${PASSWORD}-2` },
          ],
        },
        BOB,
      ),
      await gateway.gql(
        'mutation { updateUser(username: "alice", input: { username: "alice", password: "' +
          PASSWORD +
          '" }) { username } }',
        {},
        BOB,
      ),
    ];

    expect(responses.map((response) => response.errors?.map((error) => error.extensions?.['code']))).toEqual([
      ['UNAUTHENTICATED'],
      ['UNAUTHENTICATED'],
      ['BAD_USER_INPUT'],
      ['BAD_USER_INPUT'],
      ['BAD_USER_INPUT'],
    ]);
    // The echo was passed on, with the secrets taken out.
    expect(responses[2]?.errors?.[0]?.message).toContain('[redacted]');
    const visible = await everythingVisible(responses);
    for (const secret of SECRETS) expect(visible).not.toContain(secret);
  });

  it('not when GraphQL refuses a variable and quotes its value', async () => {
    const responses = [
      await gateway.gql(
        'mutation ($u: UserInput!) { createUser(input: $u) { username } }',
        { u: { password: PASSWORD } },
        ALICE,
      ),
      await gateway.gql(
        'mutation ($u: UserInput!) { createUser(input: $u) { username } }',
        { u: { username: 'x', password: PASSWORD, admin: true } },
        ALICE,
      ),
      await gateway.gql(
        `mutation { createUser(input: { username: 1, password: "${PASSWORD}" }) { username } }`,
        {},
        ALICE,
      ),
    ];

    expect(responses.map((response) => response.errors?.map((error) => error.extensions?.['code']))).toEqual([
      ['BAD_USER_INPUT'],
      ['BAD_USER_INPUT'],
      ['GRAPHQL_VALIDATION_FAILED'],
    ]);
    expect(responses[0]?.errors?.[0]?.message).toBe(
      'Variable "$u" got invalid value { password: "[redacted]" }; Field "username" of required type "String!" was not provided.',
    );
    expect(upstream.requests).toEqual([]);
    const visible = await everythingVisible(responses);
    for (const secret of SECRETS) expect(visible).not.toContain(secret);
  });

  it('not when a user is created: the password goes upstream and nowhere else', async () => {
    upstream.answer((request) => json(200, { id: 1, ...(JSON.parse(request.body) as object) }));

    const result = await gateway.gql(
      'mutation ($u: UserInput!) { createUser(input: $u) { id username } }',
      { u: { username: 'alice', password: PASSWORD } },
      ALICE,
    );

    expect(result).toEqual({ status: 200, data: { createUser: { id: '1', username: 'alice' } } });
    expect(upstream.requests.map((request) => request.body)).toEqual([`{"username":"alice","password":"${PASSWORD}"}`]);
    const visible = await everythingVisible([result]);
    for (const secret of SECRETS) expect(visible).not.toContain(secret);
  });

  it('not when an unexpected error quotes them: the caller gets it masked, the log gets it without them', async () => {
    // A programming error below the resolvers whose message quotes what the call carried.
    const crashing: GatewayDependencies['createUpstreamClient'] = (service) => ({
      service,
      close: () => Promise.resolve(),
      ping: () => Promise.resolve(200),
      request: (call) =>
        Promise.reject(
          new TypeError(
            `cannot send ${JSON.stringify(call.headers)} ${typeof call.body?.data === 'string' ? call.body.data : ''}`,
          ),
        ),
    });
    const crashingGateway = await serve(upstream, {}, { createUpstreamClient: crashing });
    try {
      const responses = [
        await crashingGateway.gql('{ pet(id: 1) { name } }', {}, ALICE),
        await crashingGateway.gql(
          'mutation ($u: UserInput!) { createUser(input: $u) { username } }',
          { u: { username: 'alice', password: PASSWORD } },
          BOB,
        ),
      ];

      expect(
        responses.map((response) =>
          response.errors?.map(({ message, extensions }) => ({ message, code: extensions?.['code'] })),
        ),
      ).toEqual([
        [{ message: 'Unexpected error.', code: 'INTERNAL_SERVER_ERROR' }],
        [{ message: 'Unexpected error.', code: 'INTERNAL_SERVER_ERROR' }],
      ]);
      const log = crashingGateway.log.join('\n');
      // Logged, with its stack, for the operator; only the secrets are gone.
      expect(log).toContain('cannot send');
      expect(log).toContain('[redacted]');
      const visible = [
        JSON.stringify(responses),
        log,
        await fetch(`${crashingGateway.origin}/metrics`).then((response) => response.text()),
      ].join('\n');
      for (const secret of SECRETS) expect(visible).not.toContain(secret);
    } finally {
      await crashingGateway.close();
    }
  });
});
