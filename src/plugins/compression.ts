/**
 * Content codings of the gateway's answers (RFC 9110 §8.4, §12.5.3): which coding a client's
 * `Accept-Encoding` asks for, and a GraphQL answer compressed with it when it is large enough
 * to gain from it (RESPONSE_COMPRESSION_MIN_BYTES). Both HTTP paths compress through
 * {@link encodeAnswer}: the HTTP front (src/http/) for the answers it writes itself, yoga
 * through {@link useAnswerCompression}; so an answer is sent alike whichever path served it.
 *
 * Why not `useContentEncoding` from @whatwg-node/server: it compresses every response whatever
 * its size; it takes the first Accept-Encoding entry written exactly as a coding's name, reading
 * no weights and no spaces (`gzip, br` gets gzip, `br;q=1, gzip` nothing); it sends no `Vary`;
 * it compresses through a CompressionStream per response; and it also inflates compressed
 * request bodies, which the gateway does not offer.
 */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Plugin } from 'graphql-yoga';

/** The codings the gateway sends. */
export type ContentCoding = 'br' | 'gzip';

/**
 * In the gateway's order of preference when a client accepts both as much: brotli, which at
 * quality 1 makes a smaller answer than gzip at level 1 for less CPU once answers pass a few
 * kilobytes (8.5 KB of pets: 598 B in 0.019 ms against 533 B in 0.025 ms; 86 KB: 2.3 KB in
 * 0.08 ms against 3.6 KB in 0.16 ms), and a far smaller GraphiQL page.
 */
const CODINGS: readonly ContentCoding[] = ['br', 'gzip'];

/** The weight (q) of each coding an Accept-Encoding header names; an entry with a malformed weight counts as refused. */
function weights(header: string): Map<string, number> {
  const named = new Map<string, number>();
  for (const entry of header.toLowerCase().split(',')) {
    const [name = '', ...parameters] = entry.split(';').map((part) => part.trim());
    if (name === '') continue;
    let weight = 1;
    for (const parameter of parameters) {
      if (!parameter.startsWith('q=')) continue;
      weight = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(parameter) ? Number(parameter.slice(2)) : 0;
    }
    // x-gzip is gzip (RFC 9110 §8.4.1.3).
    named.set(name === 'x-gzip' ? 'gzip' : name, weight);
  }
  return named;
}

/** Accept-Encoding values already read, and what they chose (null: none); a few kinds of client send them all. */
const chosen = new Map<string, ContentCoding | null>();
const CHOSEN_KEPT = 64;

/**
 * The coding to send to a client whose Accept-Encoding is `header`: the one it weighs highest
 * (`*` stands for any it does not name; q=0 refuses), brotli on a tie; undefined when it accepts
 * neither, or sent no header (then the answer is sent as it is).
 */
export function acceptedCoding(header: string | null | undefined): ContentCoding | undefined {
  if (header === undefined || header === null || header === '') return undefined;
  const known = chosen.get(header);
  if (known !== undefined) return known ?? undefined;
  const named = weights(header);
  let best: ContentCoding | undefined;
  let bestWeight = 0;
  for (const coding of CODINGS) {
    const weight = named.get(coding) ?? named.get('*') ?? 0;
    if (weight > bestWeight) [best, bestWeight] = [coding, weight];
  }
  // Bounded: a client that sends a new header on every request costs a parse, not memory.
  if (chosen.size >= CHOSEN_KEPT) chosen.clear();
  chosen.set(header, best ?? null);
  return best;
}

/**
 * An answer's bytes in a coding, at the fast end of its scale: this runs on every large answer,
 * on the event loop. Synchronous on purpose: zlib's asynchronous form adds about 0.1 ms of CPU
 * per call (its hand-over to the thread pool), more than the compression itself at these sizes.
 */
function compressAnswer(body: string | Uint8Array, length: number, coding: ContentCoding): Uint8Array<ArrayBuffer> {
  return coding === 'br'
    ? brotliCompressSync(body, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: 1,
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          [constants.BROTLI_PARAM_SIZE_HINT]: length,
        },
      })
    : gzipSync(body, { level: 1 });
}

/** A GraphQL answer as it is sent: its bytes, their length, and the headers that say how they are coded. */
export type EncodedAnswer = {
  body: string | Uint8Array<ArrayBuffer>;
  /** bytes of `body` */
  length: number;
  /** `content-encoding` when compressed; `vary: Accept-Encoding` when the answer is large enough to be */
  headers: { 'content-encoding'?: ContentCoding; vary?: 'Accept-Encoding' };
};

/**
 * A GraphQL answer as it is sent to a client whose Accept-Encoding is `acceptEncoding`:
 * compressed when it is larger than `minBytes` and the client accepts br or gzip; as it is
 * otherwise, and always when `minBytes` is 0 (compression off). An answer larger than
 * `minBytes` says `Vary: Accept-Encoding` whether compressed or not, so that a cache keeps the
 * two forms apart; a smaller one is the same for every client and says nothing.
 */
export function encodeAnswer(
  body: string | Uint8Array<ArrayBuffer>,
  acceptEncoding: string | null | undefined,
  minBytes: number,
): EncodedAnswer {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  if (minBytes === 0 || length <= minBytes) return { body, length, headers: {} };
  const coding = acceptedCoding(acceptEncoding);
  if (coding === undefined) return { body, length, headers: { vary: 'Accept-Encoding' } };
  const compressed = compressAnswer(body, length, coding);
  // JSON of this size always shrinks; should it not, the answer goes as it is.
  if (compressed.byteLength >= length) return { body, length, headers: { vary: 'Accept-Encoding' } };
  return {
    body: compressed,
    length: compressed.byteLength,
    headers: { 'content-encoding': coding, vary: 'Accept-Encoding' },
  };
}

/** `vary` with each of `names` added, unless it is there already (or `*`). */
export function withVary(vary: string | undefined, ...names: string[]): string {
  let merged = vary?.trim() ?? '';
  for (const name of names) {
    const listed = merged.split(',').map((each) => each.trim().toLowerCase());
    if (listed.includes('*') || listed.includes(name.toLowerCase())) continue;
    merged = merged === '' ? name : `${merged}, ${name}`;
  }
  return merged;
}

/**
 * A response's headers with `changes` made (a value replaces, undefined removes), as lower-case
 * pairs for a new Response. Built afresh rather than by copying the Headers object: a copy of
 * whatwg-node's Headers keeps the capitalised names of yoga's init object (`Content-Type`) beside
 * lower-case ones set later, cannot delete them, and writes through to the original.
 */
export function changedHeaders(headers: Headers, changes: Record<string, string | undefined>): [string, string][] {
  const kept = new Map<string, string>();
  headers.forEach((value, name) => {
    const key = name.toLowerCase();
    if (key !== 'set-cookie') kept.set(key, value);
  });
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) kept.delete(name);
    else kept.set(name, value);
  }
  const pairs = [...kept];
  for (const cookie of headers.getSetCookie()) pairs.push(['set-cookie', cookie]);
  return pairs;
}

/** The media types of GraphQL answers (and of the gateway's JSON refusals), with or without parameters. */
function isJsonAnswer(contentType: string | null): boolean {
  if (contentType === null) return false;
  const type = contentType.split(';', 1)[0]?.trim().toLowerCase();
  return type === 'application/json' || type === 'application/graphql-response+json';
}

/**
 * The yoga plugin: every JSON answer yoga sends (GraphQL results, batches, refusals) goes
 * through {@link encodeAnswer}, as the lane's answers do. Streams (server-sent events,
 * multipart) and other media types are left as they are; GraphiQL's page has its own, made once
 * (src/plugins/graphiql.ts).
 */
export function useAnswerCompression(options: {
  /** RESPONSE_COMPRESSION_MIN_BYTES: answers larger than this are compressed for clients that ask; 0: never */
  minBytes: number;
}): Plugin {
  const { minBytes } = options;
  return {
    async onResponse(payload) {
      const { request, response, fetchAPI } = payload;
      if (minBytes === 0 || response.body === null || response.headers.has('content-encoding')) return;
      if (!isJsonAnswer(response.headers.get('content-type'))) return;
      // yoga's answers carry their length: a small one is left alone without being read.
      const declared = response.headers.get('content-length');
      if (declared !== null && Number(declared) <= minBytes) return;
      const bytes = new Uint8Array(await response.arrayBuffer());
      const answer = encodeAnswer(bytes, request.headers.get('accept-encoding'), minBytes);
      const { 'content-encoding': coding, vary } = answer.headers;
      const headers = changedHeaders(response.headers, {
        'content-length': String(answer.length),
        'content-encoding': coding,
        ...(vary !== undefined ? { vary: withVary(response.headers.get('vary') ?? undefined, vary) } : {}),
      });
      payload.setResponse(new fetchAPI.Response(answer.body, { status: response.status, headers }));
    },
  };
}
