/**
 * Compression and caching (issue 20): GraphiQL's page is sent compressed when the browser asks
 * (br, else gzip), with an ETag that makes a reload a 304; GraphQL answers larger than
 * RESPONSE_COMPRESSION_MIN_BYTES are compressed for clients that ask, alike on the lane and on
 * yoga's path. Requests go over node:http, which (unlike fetch) decompresses nothing, so what
 * is asserted is what crosses the wire.
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import { buildSchema } from 'graphql';
import { createYoga, type GraphiQLOptions } from 'graphql-yoga';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { acceptedCoding } from '../src/plugins/compression.js';
import { graphiqlPages } from '../src/plugins/graphiql.js';
import { ALL_CREDENTIALS, useStack } from './helpers/stack.js';

/** An answer as it crossed the wire: its headers, its body as sent, and every byte read from the socket. */
type WireAnswer = { status: number; headers: IncomingHttpHeaders; body: Buffer; wireBytes: number };

/** Sends one request on a connection of its own, so that the socket's byte count is this answer's alone. */
function send(
  url: string,
  options: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {},
): Promise<WireAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: options.method ?? 'GET', headers: options.headers, agent: false });
    outgoing.once('error', reject);
    outgoing.once('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', reject);
      response.once('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks),
          wireBytes: response.socket.bytesRead,
        }),
      );
    });
    outgoing.end(options.body);
  });
}

/** The body as the client reads it, once its content coding is undone. */
function decoded(answer: WireAnswer): string {
  const coding = answer.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(answer.body).toString('utf8');
  if (coding === 'gzip') return gunzipSync(answer.body).toString('utf8');
  if (coding !== undefined) throw new Error(`unexpected content-encoding ${coding}`);
  return answer.body.toString('utf8');
}

const PAGE = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

describe('the GraphiQL page', () => {
  const stack = useStack();

  it('is sent in brotli to a browser that accepts it: the same HTML, at most 2.5 MB over the wire', async () => {
    const plain = await send(stack.url, { headers: PAGE });
    const compressed = await send(stack.url, { headers: { ...PAGE, 'accept-encoding': 'gzip, deflate, br, zstd' } });

    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString('utf8')).toContain('<div id="root"></div>');
    expect(compressed.status).toBe(200);
    expect(compressed.headers['content-encoding']).toBe('br');
    expect(compressed.headers['content-length']).toBe(String(compressed.body.byteLength));
    expect(decoded(compressed)).toBe(plain.body.toString('utf8'));
    expect(compressed.wireBytes).toBeLessThanOrEqual(2_500_000);
    expect(plain.wireBytes).toBeGreaterThan(8_000_000);
  });

  it('is cacheable: an ETag per coding, revalidated on every load, keyed by Accept and Accept-Encoding', async () => {
    const first = await send(stack.url, { headers: { ...PAGE, 'accept-encoding': 'br' } });
    const again = await send(stack.url, { headers: { ...PAGE, 'accept-encoding': 'br' } });
    const plain = await send(stack.url, { headers: PAGE });

    expect(first.headers['etag']).toMatch(/^"[\w-]+-br"$/);
    expect(again.headers['etag']).toBe(first.headers['etag']);
    expect(plain.headers['etag']).toBe(first.headers['etag']?.replace(/-br"$/, '"'));
    expect(first.headers['cache-control']).toBe('no-cache');
    expect(first.headers['vary']).toBe('Accept, Accept-Encoding');
  });

  it('answers a reload whose If-None-Match names its ETag with a 304 and no body, under 1 KB over the wire', async () => {
    const headers = { ...PAGE, 'accept-encoding': 'gzip, deflate, br, zstd' };
    const first = await send(stack.url, { headers });
    const reload = await send(stack.url, { headers: { ...headers, 'if-none-match': String(first.headers['etag']) } });

    expect(reload.status).toBe(304);
    expect(reload.body.byteLength).toBe(0);
    expect(reload.wireBytes).toBeLessThanOrEqual(1024);
    expect(reload.headers['etag']).toBe(first.headers['etag']);
    expect(reload.headers['cache-control']).toBe('no-cache');
    expect(reload.headers['vary']).toBe('Accept, Accept-Encoding');
    expect(reload.headers['content-type']).toBeUndefined();
  });

  it('sends the page again, whole, when the ETag named is not the current one', async () => {
    const reload = await send(stack.url, {
      headers: { ...PAGE, 'accept-encoding': 'br', 'if-none-match': '"an-older-page-br"' },
    });

    expect(reload.status).toBe(200);
    expect(decoded(reload)).toContain('<div id="root"></div>');
  });

  it.each([
    ['gzip, deflate', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['*', 'br'],
    ['identity', undefined],
    ['deflate', undefined],
    [undefined, undefined],
  ])('with Accept-Encoding %s is sent as %s', async (acceptEncoding, coding) => {
    const headers: Record<string, string> =
      acceptEncoding === undefined ? PAGE : { ...PAGE, 'accept-encoding': acceptEncoding };
    const answer = await send(stack.url, { headers });

    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBe(coding);
    expect(decoded(answer)).toContain('<div id="root"></div>');
  });
});

describe('graphiqlPages', () => {
  /** A yoga serving only GraphiQL, rendered by a renderer that counts its calls. */
  function graphiqlYoga(options: GraphiQLOptions) {
    const renders: GraphiQLOptions[] = [];
    const pages = graphiqlPages((rendered) => {
      renders.push(rendered);
      return `<html><title>${rendered.title ?? ''}</title>${'<p>page</p>'.repeat(500)}</html>`;
    });
    const yoga = createYoga({
      schema: buildSchema('type Query { ok: Boolean }'),
      graphiql: pages.options(options),
      renderGraphiQL: pages.render,
      plugins: [pages.plugin],
      logging: false,
    });
    const load = (acceptEncoding?: string) =>
      yoga.fetch('http://gateway/graphql', {
        headers: { accept: 'text/html', ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}) },
      });
    return { renders, load };
  }

  it('renders a page once, however many loads and codings ask for it', async () => {
    const { renders, load } = graphiqlYoga({ title: 'one' });

    for (const coding of ['br', 'gzip', undefined, 'br', 'gzip']) expect((await load(coding)).status).toBe(200);

    expect(renders).toHaveLength(1);
  });

  it("gives each variant of the page its own ETag (the emulator's demo credentials change the page)", async () => {
    const emulator = await graphiqlYoga({ title: 'emulator' }).load('br');
    const upstreams = await graphiqlYoga({ title: 'real upstreams' }).load('br');

    expect(emulator.headers.get('etag')).not.toBe(upstreams.headers.get('etag'));
  });
});

describe('acceptedCoding', () => {
  it.each([
    ['br', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['GZIP;Q=0.3, br;q=0.2', 'gzip'],
    ['br;q=0, gzip;q=0', undefined],
    ['*;q=0', undefined],
    ['*, br;q=0', 'gzip'],
    ['br;q=2, gzip', 'gzip'],
    ['deflate, identity', undefined],
    ['', undefined],
  ])('%j → %s', (header, coding) => {
    expect(acceptedCoding(header)).toBe(coding);
  });
});

/** All pets (ten seeded) with every field: about 1.7 KB of JSON, over the default threshold of 1 KB. */
const LARGE =
  '{ petsByStatus(status: [AVAILABLE, PENDING, SOLD]) { id name status photoUrls category { id name } tags { id name } } }';
const SMALL = '{ pet(id: 1) { id name } }';

/** A JSON POST of one query, with the test's credentials and these headers. */
function postQuery(url: string, query: string, headers: Record<string, string> = {}): Promise<WireAnswer> {
  return send(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...ALL_CREDENTIALS, ...headers },
    body: JSON.stringify({ query }),
  });
}

// The lane serves plain GraphQL POSTs itself with the default settings; with CORS_ORIGINS set every
// request goes through yoga's plugins. Both must answer alike.
describe.each([
  { path: 'the lane', overrides: {} },
  { path: "yoga's path (CORS on)", overrides: { corsOrigins: ['https://app.example'] } },
])('GraphQL answers on $path', ({ overrides }) => {
  const stack = useStack(overrides);

  it.each(['br', 'gzip'])(
    'a large answer is sent in %s to a client that asks, the same JSON once decompressed',
    async (coding) => {
      const plain = await postQuery(stack.url, LARGE);
      const compressed = await postQuery(stack.url, LARGE, { 'accept-encoding': coding });

      expect(plain.body.byteLength).toBeGreaterThan(1024);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(compressed.status).toBe(200);
      expect(compressed.headers['content-encoding']).toBe(coding);
      expect(compressed.headers['content-length']).toBe(String(compressed.body.byteLength));
      expect(compressed.body.byteLength).toBeLessThan(plain.body.byteLength / 3);
      expect(JSON.parse(decoded(compressed))).toEqual(JSON.parse(plain.body.toString('utf8')));
      expect(decoded(compressed)).toBe(plain.body.toString('utf8'));
    },
  );

  it('a request the lane reads and hands to yoga (it carries extensions) is compressed alike', async () => {
    const body = JSON.stringify({ query: LARGE, extensions: { client: 'test' } });
    const headers = { 'content-type': 'application/json', accept: 'application/json', ...ALL_CREDENTIALS };
    const plain = await send(stack.url, { method: 'POST', headers, body });
    const compressed = await send(stack.url, {
      method: 'POST',
      headers: { ...headers, 'accept-encoding': 'br' },
      body,
    });

    expect(compressed.status).toBe(200);
    expect(compressed.headers['content-encoding']).toBe('br');
    expect(compressed.headers['content-length']).toBe(String(compressed.body.byteLength));
    expect(decoded(compressed)).toBe(plain.body.toString('utf8'));
  });

  it('a large answer says Vary: Accept-Encoding, compressed or not', async () => {
    const plain = await postQuery(stack.url, LARGE);
    const compressed = await postQuery(stack.url, LARGE, { 'accept-encoding': 'gzip, br' });

    expect(plain.headers['vary']).toMatch(/\bAccept-Encoding\b/);
    expect(compressed.headers['vary']).toMatch(/\bAccept-Encoding\b/);
  });

  it('a small answer is sent as it is, even to a client that asks for compression', async () => {
    const answer = await postQuery(stack.url, SMALL, { 'accept-encoding': 'gzip, deflate, br' });

    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.headers['vary'] ?? '').not.toMatch(/Accept-Encoding/);
    expect(JSON.parse(answer.body.toString('utf8'))).toEqual({ data: { pet: { id: '1', name: 'Cat 1' } } });
  });
});

describe.each([
  { path: 'the lane', overrides: {} },
  { path: "yoga's path (CORS on)", overrides: { corsOrigins: ['https://app.example'] } },
])('RESPONSE_COMPRESSION_MIN_BYTES on $path', ({ overrides }) => {
  const off = useStack({ ...overrides, responseCompressionMinBytes: 0 });
  const high = useStack({ ...overrides, responseCompressionMinBytes: 100_000 });

  it('0 turns compression off', async () => {
    const answer = await postQuery(off.url, LARGE, { 'accept-encoding': 'br, gzip' });

    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.headers['vary'] ?? '').not.toMatch(/Accept-Encoding/);
    expect(JSON.parse(answer.body.toString('utf8'))).toMatchObject({ data: { petsByStatus: expect.any(Array) } });
  });

  it('answers up to the threshold are sent as they are', async () => {
    const answer = await postQuery(high.url, LARGE, { 'accept-encoding': 'br, gzip' });

    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(answer.body.toString('utf8'))).toMatchObject({ data: { petsByStatus: expect.any(Array) } });
  });
});
