/**
 * The gateway's node:http front and yoga answer alike. Each request of a generated corpus
 * (test/helpers/http-corpus.ts: more than a thousand, across methods, Content-Type spellings and
 * charsets, Accept lists with q-values, body shapes, GraphQL errors, limits, GET with and without
 * the CSRF header, credentials, compression, CORS preflights and Origins) is sent over HTTP to the
 * handler `main.ts` serves and, as a Fetch request, to `yoga.fetch`; both must give the same
 * status, the same headers (the date, the request id and the transport's framing aside) and the
 * same bytes. A fast-check property does the same with random header values.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Emulator } from '../src/emulator/server.js';
import { createGateway, type Gateway, type GatewayConfig } from '../src/gateway.js';
import { checkErrorCodes } from './helpers/error-codes.js';
import {
  explainCorpus,
  httpCorpus,
  incrementalCorpus,
  TRUSTED_MANIFEST,
  type CorpusRequest,
} from './helpers/http-corpus.js';
import { listen, stop, testConfig } from './helpers/stack.js';
import { startUpstream } from './helpers/upstream.js';

/** Headers that say when or over which connection an answer was sent, not what it is. */
// Each corpus test sends a thousand requests through two gateways: on a busy 2-core runner that
// can pass the suite's 15 s hang guard without anything hanging.
vi.setConfig({ testTimeout: 60_000 });

const TRANSPORT_HEADERS = new Set([
  'date',
  'x-request-id',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
]);

/** What an answer is: its status, its headers but those above, its bytes. */
type Answer = { status: number; headers: Record<string, string>; body: string };

function comparable(status: number, headers: Iterable<[string, string]>, body: Buffer): Answer {
  const kept: Record<string, string> = {};
  for (const [name, value] of headers) if (!TRANSPORT_HEADERS.has(name.toLowerCase())) kept[name.toLowerCase()] = value;
  const parts = streamedParts(kept['content-type'], body.toString('utf8'));
  const compared = parts === undefined ? body : Buffer.from(JSON.stringify(parts));
  return { status, headers: kept, body: compared.toString('base64') };
}

/**
 * The parts of an answer in parts (@defer, @stream), parsed: a multipart/mixed body's JSON parts, or
 * the events of server-sent events (their keep-alive comments left out); undefined for any other
 * answer. Two paths may cut the same parts into chunks apart, or ping between them. Each part's
 * error codes are checked against ErrorCode on the way (checkErrorCodes throws).
 */
function streamedParts(contentType: string | undefined, text: string): unknown[] | undefined {
  if (contentType?.startsWith('text/event-stream')) {
    const events = text
      .split('\n\n')
      .map((block) => block.split('\n').filter((line) => line !== '' && !line.startsWith(':')))
      .filter((lines) => lines.length > 0);
    for (const line of events.flat())
      if (line.startsWith('data: {')) checkErrorCodes(JSON.parse(line.slice('data: '.length)) as unknown);
    return events;
  }
  const boundary = /^multipart\/mixed;\s*boundary="?([^";]+)"?/.exec(contentType ?? '')?.[1];
  if (boundary === undefined) return undefined;
  const [, ...parts] = text.split(`\r\n--${boundary}`);
  return parts
    .filter((part) => !part.startsWith('--'))
    .map((part) => {
      const json = JSON.parse(part.slice(part.indexOf('\r\n\r\n') + 4)) as unknown;
      checkErrorCodes(json);
      return json;
    });
}

/** A gateway served over HTTP on a free loopback port, and a way to ask it both ways. */
type Served = { gateway: Gateway; url: string; close(): Promise<void> };

async function serve(config: GatewayConfig): Promise<Served> {
  const gateway = createGateway(config);
  const { server, url } = await listen(gateway.handler);
  return {
    gateway,
    url,
    close: async () => {
      await stop(server);
      await gateway.close();
    },
  };
}

/** The answer of the node:http front. */
async function overHttp(served: Served, sent: CorpusRequest): Promise<Answer> {
  const answer = await request(`${served.url}${sent.path}`, {
    method: sent.method,
    headers: sent.headers,
    ...(sent.body !== undefined ? { body: sent.body } : {}),
  });
  const body = Buffer.from(await answer.body.arrayBuffer());
  const headers: [string, string][] = [];
  for (const [name, value] of Object.entries(answer.headers))
    if (value !== undefined) headers.push([name, Array.isArray(value) ? value.join(', ') : value]);
  return comparable(answer.statusCode, headers, body);
}

/** yoga's answer to the same request, as a Fetch request. */
async function throughYoga(served: Served, sent: CorpusRequest): Promise<Answer> {
  const answer = await served.gateway.yoga.fetch(`${served.url}${sent.path}`, {
    method: sent.method,
    headers: sent.headers,
    ...(sent.body !== undefined ? { body: sent.body } : {}),
  });
  const body = Buffer.from(await answer.arrayBuffer());
  return comparable(answer.status, answer.headers, body);
}

/** The text of an answer's body, decompressed. */
function bodyText(answer: Answer): string {
  const bytes = Buffer.from(answer.body, 'base64');
  const coding = answer.headers['content-encoding'];
  if (coding === 'gzip') return gunzipSync(bytes).toString('utf8');
  if (coding === 'br') return brotliDecompressSync(bytes).toString('utf8');
  return bytes.toString('utf8');
}

/**
 * An answer with its body as text and each call's duration as 0: two paths time their calls
 * apart. Its coding is left out too, since a body a few bytes longer may cross the compression
 * threshold on one path only.
 */
function untimed(answer: Answer): { status: number; headers: Record<string, string>; text: string } {
  const { 'content-encoding': _coding, ...headers } = answer.headers;
  return { status: answer.status, headers, text: bodyText(answer).replace(/"durationMs":[\d.]+/g, '"durationMs":0') };
}

/**
 * The requests of `corpus` that the two answer differently, each with both answers. Every JSON
 * answer's error codes are checked against ErrorCode on the way (checkErrorCodes throws).
 */
async function differences(served: Served, corpus: readonly CorpusRequest[]) {
  const found: { label: string; http: Answer; yoga: Answer }[] = [];
  for (const sent of corpus) {
    const http = await overHttp(served, sent);
    const yoga = await throughYoga(served, sent);
    if (JSON.stringify(http) !== JSON.stringify(yoga)) found.push({ label: sent.label, http, yoga });
    for (const answer of [http, yoga]) {
      if (!/json/.test(answer.headers['content-type'] ?? '')) continue;
      try {
        checkErrorCodes(JSON.parse(bodyText(answer)));
      } catch (error) {
        throw new Error(`${sent.label}: ${(error as Error).message}`);
      }
    }
  }
  return found;
}

/** Small limits, so that the corpus reaches them with small requests. */
const LIMITS: Partial<GatewayConfig> = { requestMaxBytes: 1024, queryMaxDepth: 2, logLevel: 'error' };

let upstream: Emulator;
let plain: Served;
let browserFacing: Served;
let hardened: Served;
let manifestDir: string;

beforeAll(async () => {
  upstream = await startUpstream();
  const urls = { petstoreUrl: upstream.petstoreUrl, plantsUrl: upstream.plantsUrl };
  plain = await serve(testConfig({ ...urls, ...LIMITS }));
  browserFacing = await serve(testConfig({ ...urls, ...LIMITS, corsOrigins: ['https://app.example'] }));
  manifestDir = await mkdtemp(join(tmpdir(), 'differential-'));
  const manifest = join(manifestDir, 'manifest.json');
  await writeFile(manifest, JSON.stringify(TRUSTED_MANIFEST));
  // Trusted documents, CORS and rate limits (high enough never to refuse: the two paths count apart).
  hardened = await serve(
    testConfig({
      ...urls,
      ...LIMITS,
      corsOrigins: ['https://app.example', 'https://admin.example'],
      trustedDocuments: manifest,
      graphiql: false,
      rateLimitPerMinute: 1_000_000,
      rateLimitAddressPerMinute: 1_000_000,
    }),
  );
});

afterAll(async () => {
  await plain?.close();
  await browserFacing?.close();
  await hardened?.close();
  await upstream?.close();
  if (manifestDir) await rm(manifestDir, { recursive: true, force: true });
});

describe('the node:http front and yoga', () => {
  it('the lane serves plain GraphQL requests on each gateway: its table covers every plugin and option (src/http/plugin-table.ts)', () => {
    expect(plain.gateway.yogaOnly).toEqual([]);
    expect(browserFacing.gateway.yogaOnly).toEqual([]);
    expect(hardened.gateway.yogaOnly).toEqual([]);
  });

  it('answer a corpus of 1,000 requests alike on a default gateway', async () => {
    const corpus = httpCorpus({ perPair: 10, seed: 1, cors: false });
    expect(corpus.length).toBeGreaterThanOrEqual(1000);

    expect(await differences(plain, corpus)).toEqual([]);
  });

  it('answer a corpus of requests that ask for extensions.upstream alike, the calls timed apart', async () => {
    const corpus = explainCorpus({ perPair: 2, seed: 6 });
    const found: { label: string; http: unknown; yoga: unknown }[] = [];
    for (const sent of corpus) {
      const http = untimed(await overHttp(plain, sent));
      const yoga = untimed(await throughYoga(plain, sent));
      if (JSON.stringify(http) !== JSON.stringify(yoga)) found.push({ label: sent.label, http, yoga });
    }

    expect(found).toEqual([]);
    // The corpus did reach upstream calls, and both paths listed them.
    const explained = corpus.filter((sent) => sent.label.startsWith('POST a query with variables'));
    const answer = untimed(await overHttp(plain, explained[0] as CorpusRequest));
    expect(answer.text).toContain('"path":"/pet/{petId}"');
  });

  it('answer a corpus of preflights and cross-origin requests alike with CORS_ORIGINS', async () => {
    const corpus = httpCorpus({ perPair: 4, seed: 2, cors: true });

    expect(await differences(browserFacing, corpus)).toEqual([]);
  });

  it('answer a corpus alike with trusted documents, two CORS origins and rate limits', async () => {
    const corpus = httpCorpus({ perPair: 3, seed: 5, cors: true });

    expect(await differences(hardened, corpus)).toEqual([]);
  });

  it('answer alike whatever the Content-Type, Accept and Accept-Encoding values', async () => {
    const token = fc.oneof(
      fc.constantFrom('application', 'json', 'graphql-response+json', '*', 'text', 'html', 'charset', 'utf-8', 'q'),
      fc.string({ maxLength: 8 }),
    );
    const headerValue = fc
      .array(fc.tuple(token, fc.constantFrom('/', ';', '=', ',', ' ', '', '"')), { maxLength: 8 })
      .map((parts) => parts.map(([word, separator]) => word + separator).join(''))
      // Values a client can send at all: printable, no line breaks.
      .filter((value) => /^[\x20-\x7e]*$/.test(value) && value.trim() === value);
    await fc.assert(
      fc.asyncProperty(
        fc.record({ 'content-type': headerValue, accept: headerValue, 'accept-encoding': headerValue }),
        fc.constantFrom('POST', 'GET'),
        async (headers, method) => {
          const sent: CorpusRequest = {
            label: 'random headers',
            method,
            path: method === 'GET' ? '/graphql?query=%7Binventory%7Bavailable%7D%7D' : '/graphql',
            headers: { ...headers, 'x-graphql-csrf': '1', api_key: 'property-key' },
            ...(method === 'POST' ? { body: JSON.stringify({ query: '{ inventory { available } }' }) } : {}),
          };
          expect(await overHttp(plain, sent)).toEqual(await throughYoga(plain, sent));
        },
      ),
      { numRuns: 150, seed: 3 },
    );
  });
});

describe('@defer and @stream', () => {
  it('are answered alike, in parts or refused, whatever the Accept, by POST and GET', async () => {
    const defaults = await serve(
      testConfig({ petstoreUrl: upstream.petstoreUrl, plantsUrl: upstream.plantsUrl, logLevel: 'error' }),
    );
    try {
      const corpus = incrementalCorpus();
      expect(await differences(defaults, corpus)).toEqual([]);
      // The corpus did reach answers in parts, of both kinds, and refusals.
      const kinds = new Set<string>();
      for (const sent of corpus) {
        const answer = await overHttp(defaults, sent);
        kinds.add(`${answer.status} ${answer.headers['content-type']}`);
      }
      expect([...kinds].sort()).toEqual(
        expect.arrayContaining([
          '200 multipart/mixed; boundary="-"',
          '200 text/event-stream',
          '406 application/json; charset=utf-8',
        ]),
      );
    } finally {
      await defaults.close();
    }
  });
});

describe('a rate-limit refusal', () => {
  it('is the same answer from the lane as from yoga: the rate-limit plugin error', async () => {
    const limited = await serve(
      testConfig({ petstoreUrl: upstream.petstoreUrl, plantsUrl: upstream.plantsUrl, rateLimitPerMinute: 1 }),
    );
    try {
      const sent: CorpusRequest = {
        label: 'the second request of the minute',
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      };
      // Each path counts its own caller (node's peer address; none for a Fetch request): one each, then refused.
      await overHttp(limited, sent);
      await throughYoga(limited, sent);
      const http = await overHttp(limited, sent);
      const yoga = await throughYoga(limited, sent);

      expect(http.status).toBe(429);
      expect(bodyText(http)).toContain('"code":"RATE_LIMITED"');
      expect(http).toEqual(yoga);
    } finally {
      await limited.close();
    }
  });
});

describe('with the response cache on', () => {
  it('the lane calls its lookup and answers misses and hits as yoga does', async () => {
    const cached = await serve(
      testConfig({ petstoreUrl: upstream.petstoreUrl, plantsUrl: upstream.plantsUrl, responseCacheTtlMs: 60_000 }),
    );
    try {
      expect(cached.gateway.yogaOnly).toEqual([]);
      // Each request twice over each path: a miss kept, then hits, from either path. Not the
      // answers in parts: a miss is sent in parts and a hit whole, whichever the path
      // (test/incremental-delivery.test.ts asserts both on each path).
      const corpus = httpCorpus({ perPair: 1, seed: 4, cors: false }).filter(
        (sent) => !/@defer|@stream/.test(sent.label),
      );
      expect(await differences(cached, corpus)).toEqual([]);
      expect(await differences(cached, corpus)).toEqual([]);
    } finally {
      await cached.close();
    }
  });
});
