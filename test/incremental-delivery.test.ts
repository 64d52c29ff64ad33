/**
 * Incremental delivery: `@defer` and `@stream`, over multipart/mixed and server-sent events, on
 * both HTTP paths (the node:http front, which hands these operations to yoga, and yoga itself).
 * The slow part of each operation is an upstream call the scripted upstream holds until the test
 * has received the fast part: so the first part provably arrives before the deferred one.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { meros } from 'meros/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphQLError } from 'graphql';
import { createGateway, type Gateway, type GatewayConfig } from '../src/gateway.js';
import { codedError } from '../src/errors.js';
import { maskedParts } from '../src/plugins/incremental-delivery.js';
import { checkErrorCodes } from './helpers/error-codes.js';
import { hold, json, useScriptedUpstream, type ReceivedRequest, type Script } from './helpers/scripted-upstream.js';
import {
  ALL_CREDENTIALS,
  API_KEY,
  BEARER,
  captureLog,
  listen,
  stop,
  testConfig,
  type CapturedLog,
} from './helpers/stack.js';

const upstream = useScriptedUpstream();

/** The order the tests ask for, and its pet, whose lookup is the slow call. */
const ORDER = { id: 1, petId: 7, quantity: 2, status: 'placed', complete: false };
const SLOW_PET = { id: 7, name: 'Slow', photoUrls: [], tags: [{ id: 1, name: 'sleepy' }], status: 'available' };
const PETS = [1, 2, 3].map((id) => ({ id, name: `Pet ${id}`, photoUrls: [], tags: [], status: 'available' }));

const ORDER_WITH_DEFERRED_PET = `query Order {
  order(id: 1) {
    id
    status
    ... @defer(label: "pet") { pet { name } }
  }
}`;

/** A gateway served both ways: through its node:http front (the lane) and through yoga alone. */
type Served = { gateway: Gateway; lane: string; yoga: string; log: CapturedLog; close(): Promise<void> };

async function serve(overrides: Partial<GatewayConfig> = {}): Promise<Served> {
  const log = captureLog();
  const gateway = createGateway(
    testConfig({
      petstoreUrl: `${upstream().url}/api/v3`,
      plantsUrl: upstream().url,
      upstreamRetries: 0,
      logLevel: 'info',
      ...overrides,
    }),
    { logDestination: log },
  );
  const servers: Server[] = [];
  const lane = await listen(gateway.handler);
  const yoga = await listen((request, response) => gateway.yoga(request, response));
  servers.push(lane.server, yoga.server);
  return {
    gateway,
    lane: `${lane.url}/graphql`,
    yoga: `${yoga.url}/graphql`,
    log,
    close: async () => {
      await Promise.all(servers.map(stop));
      await gateway.close();
    },
  };
}

/** Posts a GraphQL request with node:http, with the test credentials; the answer as it starts. */
function post(url: string, body: Record<string, unknown>, accept: string | undefined): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...ALL_CREDENTIALS, ...(accept ? { accept } : {}) },
    });
    sent.once('response', resolve);
    sent.once('error', reject);
    sent.end(JSON.stringify(body));
  });
}

/** One part as meros reads it: its JSON when it is JSON, else its bytes. */
type MultipartPart = { json: true; body: Record<string, unknown> } | { json: false; body: Buffer };

/** The JSON parts of a multipart/mixed answer, read with meros, as they arrive. */
async function* multipartParts(response: IncomingMessage): AsyncGenerator<Record<string, unknown>> {
  // meros's own Part type does not resolve from its node entry point under this project's resolution.
  const parts = (await meros(response)) as IncomingMessage | AsyncGenerator<MultipartPart>;
  if (!('next' in parts)) throw new Error(`not multipart: ${response.headers['content-type']}`);
  for await (const part of parts) {
    if (!part.json) throw new Error(`a part that is not JSON: ${String(part.body)}`);
    checkErrorCodes(part.body);
    yield part.body;
  }
}

/** The events of a text/event-stream answer, parsed by hand as they arrive (comments, the keep-alive pings, skipped). */
async function* serverSentEvents(response: IncomingMessage): AsyncGenerator<{ event: string; data: string }> {
  let buffered = '';
  for await (const chunk of response) {
    buffered += (chunk as Buffer).toString('utf8');
    let end = buffered.indexOf('\n\n');
    while (end >= 0) {
      const lines = buffered.slice(0, end).split('\n');
      buffered = buffered.slice(end + 2);
      end = buffered.indexOf('\n\n');
      const field = (name: string) =>
        lines
          .filter((line) => line.startsWith(`${name}:`))
          .map((line) => line.slice(name.length + 1).trimStart())
          .join('\n');
      if (lines.every((line) => line.startsWith(':'))) continue;
      yield { event: field('event'), data: field('data') };
    }
  }
}

/** Everything else an iterator gives. */
async function rest<T>(iterator: AsyncGenerator<T>): Promise<T[]> {
  const found: T[] = [];
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) found.push(next.value);
  return found;
}

/** Scripts the order (at once) and its pet (held until `release`); the pet store's other paths 404. */
function orderAndHeldPet(pet = json(200, SLOW_PET)) {
  const held = hold(pet);
  const script: Script = (request) => {
    if (request.url === '/api/v3/store/order/1') return json(200, ORDER);
    if (request.url === '/api/v3/pet/7') return held.answer;
    return json(404, { message: 'not scripted' });
  };
  upstream().answer(script);
  return held;
}

/** What a test asserts of an upstream request: method, path and which credentials it carried. */
function seen(request: ReceivedRequest) {
  return {
    method: request.method,
    url: request.url,
    apiKey: request.headers['api_key'] === API_KEY,
    bearer: request.headers['authorization'] === `Bearer ${BEARER}`,
  };
}

const ORDER_CALL = { method: 'GET', url: '/api/v3/store/order/1', apiKey: false, bearer: false };
const PET_CALL = { method: 'GET', url: '/api/v3/pet/7', apiKey: true, bearer: false };

let served: Served;
beforeAll(async () => {
  served = await serve();
});
afterAll(() => served?.close());

const PATHS = [
  ['the lane', 'multipart/mixed', () => served.lane],
  // Read by the lane first: with no Accept, or any, yoga's answer is multipart.
  ['the lane', undefined, () => served.lane],
  ['the lane', '*/*', () => served.lane],
  ['the lane', 'multipart/mixed;deferSpec=20220824, application/json;q=0.9', () => served.lane],
  ['yoga', 'multipart/mixed', () => served.yoga],
  ['yoga', undefined, () => served.yoga],
] as const;

describe('@defer over multipart/mixed', () => {
  it.each(PATHS)(
    'via %s (Accept %s): the order arrives while its pet is held upstream, the pet after its release',
    async (_path, accept, url) => {
      const held = orderAndHeldPet();

      const response = await post(url(), { query: ORDER_WITH_DEFERRED_PET }, accept);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('multipart/mixed; boundary="-"');
      const parts = multipartParts(response);
      const first = await parts.next();
      // The pet's answer is still held: this part cannot have waited for it.
      expect(first.value).toEqual({ data: { order: { id: '1', status: 'placed' } }, hasNext: true });
      held.release();
      const later = await rest(parts);

      expect(later).toEqual([
        { incremental: [{ data: { pet: { name: 'Slow' } }, path: ['order'], label: 'pet' }], hasNext: false },
      ]);
      expect(upstream().requests.map(seen)).toEqual([ORDER_CALL, PET_CALL]);
    },
  );
});

describe('@defer over server-sent events', () => {
  it.each([
    ['the lane', () => served.lane],
    ['yoga', () => served.yoga],
  ])('via %s: a `next` event with the order, one with the pet after its release, then `complete`', async (_, url) => {
    const held = orderAndHeldPet();

    const response = await post(url(), { query: ORDER_WITH_DEFERRED_PET }, 'text/event-stream');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream');
    const events = serverSentEvents(response);
    const first = await events.next();
    expect(first.value).toEqual({
      event: 'next',
      data: JSON.stringify({ data: { order: { id: '1', status: 'placed' } }, hasNext: true }),
    });
    held.release();
    const later = await rest(events);

    expect(later).toEqual([
      {
        event: 'next',
        data: JSON.stringify({
          incremental: [{ data: { pet: { name: 'Slow' } }, path: ['order'], label: 'pet' }],
          hasNext: false,
        }),
      },
      { event: 'complete', data: '' },
    ]);
    expect(upstream().requests.map(seen)).toEqual([ORDER_CALL, PET_CALL]);
  });
});

/** Reads a whole answer: its status, headers and body text. */
async function answerOf(response: IncomingMessage): Promise<{ status: number; accept: unknown; body: unknown }> {
  let text = '';
  for await (const chunk of response) text += (chunk as Buffer).toString('utf8');
  return { status: response.statusCode ?? 0, accept: response.headers['accept'], body: JSON.parse(text) };
}

describe('a client that takes no answer in parts', () => {
  it.each([
    ['the lane', 'application/json', () => served.lane],
    ['the lane', 'application/graphql-response+json', () => served.lane],
    ['yoga', 'application/json', () => served.yoga],
    ['yoga', 'application/graphql-response+json', () => served.yoga],
  ])('via %s (Accept %s) is refused with 406 before anything runs', async (_, accept, url) => {
    orderAndHeldPet().release();

    const answer = await answerOf(await post(url(), { query: ORDER_WITH_DEFERRED_PET }, accept));

    expect(answer).toEqual({
      status: 406,
      accept: 'multipart/mixed, text/event-stream',
      body: {
        errors: [
          {
            message:
              'This operation uses @defer or @stream, whose answer comes in parts: send it with ' +
              '`Accept: multipart/mixed` or `Accept: text/event-stream`.',
            extensions: { code: 'INCREMENTAL_DELIVERY_NOT_ACCEPTED' },
          },
        ],
      },
    });
    checkErrorCodes(answer.body);
    expect(upstream().requests).toEqual([]);
  });

  it.each([
    ['the lane', () => served.lane],
    ['yoga', () => served.yoga],
  ])('via %s gets one JSON answer when @defer(if:) turns deferring off', async (_, url) => {
    orderAndHeldPet().release();
    const query = ORDER_WITH_DEFERRED_PET.replace('@defer(label: "pet")', '@defer(if: $later)').replace(
      'query Order',
      'query Order($later: Boolean!)',
    );

    const literal = await answerOf(
      await post(url(), { query: ORDER_WITH_DEFERRED_PET.replace('label: "pet"', 'if: false') }, 'application/json'),
    );
    const variable = await answerOf(await post(url(), { query, variables: { later: false } }, 'application/json'));

    const complete = { data: { order: { id: '1', status: 'placed', pet: { name: 'Slow' } } } };
    expect(literal).toEqual({ status: 200, accept: undefined, body: complete });
    expect(variable).toEqual({ status: 200, accept: undefined, body: complete });
    expect(upstream().requests.map(seen)).toEqual([ORDER_CALL, PET_CALL, ORDER_CALL, PET_CALL]);
  });

  it.each([
    ['the lane', () => served.lane],
    ['yoga', () => served.yoga],
  ])(
    "via %s: a variable not sent takes its definition's default (false: one answer; none: refused)",
    async (_, url) => {
      orderAndHeldPet().release();
      const deferred = (definition: string) =>
        ORDER_WITH_DEFERRED_PET.replace('@defer(label: "pet")', '@defer(if: $later)').replace(
          'query Order',
          `query Order(${definition})`,
        );

      const off = await answerOf(await post(url(), { query: deferred('$later: Boolean = false') }, 'application/json'));
      const on = await answerOf(await post(url(), { query: deferred('$later: Boolean') }, 'application/json'));

      expect(off).toEqual({
        status: 200,
        accept: undefined,
        body: { data: { order: { id: '1', status: 'placed', pet: { name: 'Slow' } } } },
      });
      expect(on.status).toBe(406);
      expect(upstream().requests.map(seen)).toEqual([ORDER_CALL, PET_CALL]);
    },
  );
});

describe('@stream', () => {
  it.each([
    ['the lane', '*/*', () => served.lane],
    ['yoga', 'multipart/mixed', () => served.yoga],
  ])('via %s (Accept %s): the first pet, then the others in order', async (_, accept, url) => {
    upstream().answer((request) =>
      request.url === '/api/v3/pet/findByStatus?status=available' ? json(200, PETS) : json(404, {}),
    );

    const response = await post(
      url(),
      { query: '{ petsByStatus(status: [AVAILABLE]) @stream(initialCount: 1) { id name } }' },
      accept,
    );
    const parts = await rest(multipartParts(response));

    expect(parts[0]).toEqual({ data: { petsByStatus: [{ id: '1', name: 'Pet 1' }] }, hasNext: true });
    const streamed = parts.slice(1).flatMap((part) => (part['incremental'] as unknown[] | undefined) ?? []);
    expect(streamed).toEqual([
      { items: [{ id: '2', name: 'Pet 2' }], path: ['petsByStatus', 1] },
      { items: [{ id: '3', name: 'Pet 3' }], path: ['petsByStatus', 2] },
    ]);
    expect(parts.at(-1)?.['hasNext']).toBe(false);
    expect(upstream().requests.map(seen)).toEqual([
      { method: 'GET', url: '/api/v3/pet/findByStatus?status=available', apiKey: false, bearer: true },
    ]);
  });
});

describe('errors in a deferred part', () => {
  it.each([
    ['the lane', '*/*', () => served.lane],
    ['yoga', 'multipart/mixed', () => served.yoga],
  ])(
    'via %s: the failed pet lookup arrives in its part with its code; the order before it is whole',
    async (_, accept, url) => {
      const held = orderAndHeldPet(json(500, { message: 'pet store down' }));

      const response = await post(url(), { query: ORDER_WITH_DEFERRED_PET }, accept);
      const parts = multipartParts(response);
      const first = await parts.next();
      held.release();
      const later = await rest(parts);

      expect(first.value).toEqual({ data: { order: { id: '1', status: 'placed' } }, hasNext: true });
      expect(later).toEqual([
        {
          incremental: [
            {
              data: { pet: null },
              errors: [
                {
                  message: expect.any(String),
                  locations: expect.any(Array),
                  path: ['order', 'pet'],
                  extensions: {
                    code: 'UPSTREAM_ERROR',
                    upstream: { service: 'petstore', operation: 'getPetById', status: 500 },
                  },
                },
              ],
              path: ['order'],
              label: 'pet',
            },
          ],
          hasNext: false,
        },
      ]);
      expect(upstream().requests.map(seen)).toEqual([ORDER_CALL, PET_CALL]);
      // Logged as the failures of whole results are: one line, with the request's id.
      expect(served.log.lines()).toContainEqual(
        expect.objectContaining({
          level: 'info',
          requestId: response.headers['x-request-id'],
          upstream: { service: 'petstore', operation: 'getPetById', failure: 'status', status: 500 },
        }),
      );
    },
  );
});

describe('credentials in a deferred part', () => {
  it("an upstream message that quotes the caller's credentials arrives without them", async () => {
    // A 4xx's message is passed on to the caller (a 5xx's is not), so this is where it could leak.
    const held = orderAndHeldPet(json(400, { message: `key ${API_KEY} and token ${BEARER} refused` }));

    const parts = multipartParts(await post(served.lane, { query: ORDER_WITH_DEFERRED_PET }, 'multipart/mixed'));
    await parts.next();
    held.release();
    const text = JSON.stringify(await rest(parts));

    expect(text).toContain('BAD_USER_INPUT');
    expect(text).toContain('refused');
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain(BEARER);
    expect(upstream().requests.map(seen)).toEqual([ORDER_CALL, PET_CALL]);
  });
});

describe('a mutation with @defer', () => {
  it('places the order, answers it at once, and its pet once the lookup is released', async () => {
    const held = orderAndHeldPet();
    upstream().answer((request) =>
      request.method === 'POST' && request.url === '/api/v3/store/order'
        ? json(200, ORDER)
        : request.url === '/api/v3/pet/7'
          ? held.answer
          : json(404, {}),
    );

    const response = await post(
      served.lane,
      {
        query: `mutation {
          placeOrder(input: { id: "1", petId: "7", quantity: 2, status: "placed" }) {
            id
            ... @defer { pet { name } }
          }
        }`,
      },
      'multipart/mixed',
    );
    const parts = multipartParts(response);
    const first = await parts.next();
    expect(first.value).toEqual({ data: { placeOrder: { id: '1' } }, hasNext: true });
    held.release();
    const later = await rest(parts);

    expect(later).toEqual([
      { incremental: [{ data: { pet: { name: 'Slow' } }, path: ['placeOrder'] }], hasNext: false },
    ]);
    expect(upstream().requests.map(seen)).toEqual([
      { method: 'POST', url: '/api/v3/store/order', apiKey: false, bearer: false },
      PET_CALL,
    ]);
    expect(JSON.parse(upstream().requests[0]?.body ?? '')).toEqual({ id: 1, petId: 7, quantity: 2, status: 'placed' });
  });
});

describe("Apollo Client's @defer support", () => {
  it.each([
    ['the lane', () => served.lane],
    ['yoga', () => served.yoga],
  ])('via %s: it sees the order first, streaming, then the whole result with the pet', async (_, url) => {
    const held = orderAndHeldPet();
    const client = new ApolloClient({
      link: new HttpLink({ uri: url(), headers: ALL_CREDENTIALS }),
      cache: new InMemoryCache(),
      incrementalHandler: new Defer20220824Handler(),
    });
    const seenByClient: { dataState: string; data: unknown }[] = [];
    const complete = new Promise<void>((resolve, reject) => {
      const watched = client.watchQuery({ query: gql(ORDER_WITH_DEFERRED_PET), fetchPolicy: 'network-only' });
      const subscription = watched.subscribe({
        next: (result) => {
          if (result.loading && result.dataState === 'empty') return;
          seenByClient.push({ dataState: result.dataState, data: result.data });
          // The first result is in: the pet's lookup may go on.
          if (result.dataState === 'streaming') held.release();
          if (result.dataState === 'complete') {
            subscription.unsubscribe();
            resolve();
          }
        },
        error: reject,
      });
    });
    await complete;

    expect(seenByClient).toEqual([
      { dataState: 'streaming', data: { order: { __typename: 'Order', id: '1', status: 'placed' } } },
      {
        dataState: 'complete',
        data: { order: { __typename: 'Order', id: '1', status: 'placed', pet: { __typename: 'Pet', name: 'Slow' } } },
      },
    ]);
    expect(upstream().requests.map(seen)).toEqual([ORDER_CALL, PET_CALL]);
  });
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('@defer with the response cache on', () => {
  let cached: Served;
  beforeAll(async () => {
    cached = await serve({ responseCacheTtlMs: 60_000 });
  });
  afterAll(() => cached?.close());

  it.each([
    ['the lane', 'multipart/mixed', 'in one part', () => cached.lane],
    // The lane looks the answer up itself and sends it as JSON, as yoga would for this Accept.
    ['the lane', '*/*', 'as JSON', () => cached.lane],
    ['yoga', 'multipart/mixed', 'in one part', () => cached.yoga],
    ['yoga', '*/*', 'as JSON', () => cached.yoga],
  ])(
    'via %s (Accept %s): streamed on a miss; the whole result kept, and sent on a hit %s, without an upstream call',
    async (_, accept, kind, url) => {
      orderAndHeldPet().release();
      // Each case its own document (a comment apart), so that each starts with a miss.
      const query = `${ORDER_WITH_DEFERRED_PET} # ${_} ${accept}`;

      const missed = await rest(multipartParts(await post(url(), { query }, accept)));
      const callsOnMiss = upstream().requests.map(seen);
      const hit = await post(url(), { query }, accept);

      expect(missed).toHaveLength(2);
      expect(callsOnMiss).toEqual([ORDER_CALL, PET_CALL]);
      const whole = { data: { order: { id: '1', status: 'placed', pet: { name: 'Slow' } } } };
      if (kind === 'in one part') expect(await rest(multipartParts(hit))).toEqual([whole]);
      else expect(await answerOf(hit)).toEqual({ status: 200, accept: undefined, body: whole });
      expect(upstream().requests).toHaveLength(2);
    },
  );
});

describe('@defer with the response cache on, a part failing', () => {
  let cached: Served;
  beforeAll(async () => {
    cached = await serve({ responseCacheTtlMs: 60_000 });
  });
  afterAll(() => cached?.close());

  it('is not kept: the next request calls the upstream again', async () => {
    orderAndHeldPet(json(500, { message: 'pet store down' })).release();

    const first = await rest(multipartParts(await post(cached.lane, { query: ORDER_WITH_DEFERRED_PET }, '*/*')));
    const second = await rest(multipartParts(await post(cached.lane, { query: ORDER_WITH_DEFERRED_PET }, '*/*')));

    expect(second).toEqual(first);
    expect(JSON.stringify(second)).toContain('UPSTREAM_ERROR');
    expect(upstream().requests.map(seen)).toEqual([ORDER_CALL, PET_CALL, ORDER_CALL, PET_CALL]);
  });
});

describe('a client that goes away between parts', () => {
  it.each([
    ['the lane', '*/*', () => served.lane],
    ['yoga', 'multipart/mixed', () => served.yoga],
  ])('via %s (Accept %s): the gateway goes on serving', async (_, accept, url) => {
    const held = orderAndHeldPet();
    const response = await post(url(), { query: ORDER_WITH_DEFERRED_PET }, accept);
    const parts = multipartParts(response);
    expect((await parts.next()).value).toEqual({ data: { order: { id: '1', status: 'placed' } }, hasNext: true });

    response.destroy();
    held.release();
    const after = await answerOf(await post(url(), { query: '{ order(id: 1) { id status } }' }, 'application/json'));

    expect(after).toEqual({ status: 200, accept: undefined, body: { data: { order: { id: '1', status: 'placed' } } } });
    expect(upstream().requests.map(seen)).toEqual(expect.arrayContaining([ORDER_CALL, ORDER_CALL]));
  });
});

describe('@defer with trusted documents', () => {
  let trusted: Served;
  const directory = mkdtempSync(join(tmpdir(), 'incremental-'));
  const manifest = join(directory, 'manifest.json');
  writeFileSync(manifest, JSON.stringify({ [sha256(ORDER_WITH_DEFERRED_PET)]: ORDER_WITH_DEFERRED_PET }));
  beforeAll(async () => {
    trusted = await serve({ trustedDocuments: manifest, graphiql: false });
  });
  afterAll(() => trusted?.close());

  it.each([
    ['the lane', '*/*', () => trusted.lane],
    ['the lane', 'multipart/mixed', () => trusted.lane],
    ['yoga', 'text/event-stream', () => trusted.yoga],
  ])('via %s (Accept %s): a manifest document named by its hash is answered in parts', async (_, accept, url) => {
    const held = orderAndHeldPet();
    const body = { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(ORDER_WITH_DEFERRED_PET) } } };

    const response = await post(url(), body, accept);
    let first: unknown;
    let later: unknown[];
    if (accept === 'text/event-stream') {
      const events = serverSentEvents(response);
      const next = await events.next();
      first = next.done ? undefined : (JSON.parse(next.value.data) as unknown);
      held.release();
      later = (await rest(events))
        .filter(({ event }) => event === 'next')
        .map(({ data }) => JSON.parse(data) as unknown);
    } else {
      const parts = multipartParts(response);
      first = (await parts.next()).value;
      held.release();
      later = await rest(parts);
    }

    expect(first).toEqual({ data: { order: { id: '1', status: 'placed' } }, hasNext: true });
    expect(later).toEqual([
      { incremental: [{ data: { pet: { name: 'Slow' } }, path: ['order'], label: 'pet' }], hasNext: false },
    ]);
    expect(upstream().requests.map(seen)).toEqual([ORDER_CALL, PET_CALL]);
  });

  it('a @defer document that is not in the manifest is refused before it runs, in the one part', async () => {
    const query = ORDER_WITH_DEFERRED_PET.replace('status', 'quantity');

    const response = await post(trusted.lane, { query }, 'multipart/mixed');
    const parts = await rest(multipartParts(response));

    expect(response.statusCode).toBe(400);
    expect(parts).toEqual([
      { errors: [expect.objectContaining({ extensions: { code: 'TRUSTED_DOCUMENT_REQUIRED' } })] },
    ]);
    expect(upstream().requests).toEqual([]);
  });
});

describe('maskedParts (the masking of streamed parts, on every transport)', () => {
  it("masks an unexpected error of a part, and clears the request's secrets from the others", async () => {
    async function* stream() {
      yield await Promise.resolve({ data: { order: { id: '1' } }, hasNext: true });
      yield {
        incremental: [
          {
            data: { pet: null },
            path: ['order'],
            errors: [new GraphQLError('lost', { originalError: new TypeError('internals') })],
          },
          { data: { user: null }, path: ['order'], errors: [codedError('UPSTREAM_ERROR', `refused key ${API_KEY}`)] },
        ],
        hasNext: false,
      };
    }
    const maskError = (error: unknown, message: string) =>
      error instanceof GraphQLError && error.originalError instanceof TypeError
        ? new GraphQLError(message)
        : (error as GraphQLError);

    const parts: unknown[] = [];
    for await (const part of maskedParts(
      stream(),
      { maskError },
      () => [API_KEY],
      () => undefined,
    ))
      parts.push(JSON.parse(JSON.stringify(part)));

    expect(parts).toEqual([
      { data: { order: { id: '1' } }, hasNext: true },
      {
        incremental: [
          { data: { pet: null }, path: ['order'], errors: [{ message: 'Unexpected error.' }] },
          {
            data: { user: null },
            path: ['order'],
            errors: [{ message: 'refused key [redacted]', extensions: { code: 'UPSTREAM_ERROR' } }],
          },
        ],
        hasNext: false,
      },
    ]);
  });
});
