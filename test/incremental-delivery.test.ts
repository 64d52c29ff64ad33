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
import { createGateway, type Gateway, type GatewayConfig } from '../src/gateway.js';
import { checkErrorCodes } from './helpers/error-codes.js';
import { hold, json, useScriptedUpstream, type ReceivedRequest, type Script } from './helpers/scripted-upstream.js';
import { ALL_CREDENTIALS, API_KEY, BEARER, listen, stop, testConfig } from './helpers/stack.js';

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
type Served = { gateway: Gateway; lane: string; yoga: string; close(): Promise<void> };

async function serve(overrides: Partial<GatewayConfig> = {}): Promise<Served> {
  const gateway = createGateway(
    testConfig({
      petstoreUrl: `${upstream().url}/api/v3`,
      plantsUrl: upstream().url,
      upstreamRetries: 0,
      ...overrides,
    }),
  );
  const servers: Server[] = [];
  const lane = await listen(gateway.handler);
  const yoga = await listen((request, response) => gateway.yoga(request, response));
  servers.push(lane.server, yoga.server);
  return {
    gateway,
    lane: `${lane.url}/graphql`,
    yoga: `${yoga.url}/graphql`,
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

/** The JSON parts of a multipart/mixed answer, read with meros, as they arrive. */
async function* multipartParts(response: IncomingMessage): AsyncGenerator<Record<string, unknown>> {
  const parts = await meros<Record<string, unknown>>(response);
  if (!(Symbol.asyncIterator in parts)) throw new Error(`not multipart: ${response.headers['content-type']}`);
  for await (const part of parts) {
    if (!part.json) throw new Error(`a part that is not JSON: ${part.body.toString()}`);
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
