/**
 * Reading requests: their content type, size and encoding. yoga's own `maxRequestBodySize` applies one limit to
 * every body, uploads included; here an operation sent as JSON (or any other non-multipart
 * body) has a small limit and must be UTF-8, while a multipart upload may be as large as the
 * files it is allowed to carry, and is counted while it streams.
 */
import { isUtf8 } from 'node:buffer';
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { codedError } from '../errors.js';

/** Limits on request bodies, in bytes. */
export type BodyLimits = {
  /** largest body of a request that is not a multipart upload. @default 1048576 */
  maxBytes: number;
  /** largest multipart body: the files it may carry, plus `maxBytes` for its other parts */
  maxMultipartBytes: number;
};

const CONTENT_LENGTH = /^\d+$/;

/**
 * What a declared Content-Length says of a body: `invalid` (not a number of bytes, refused with
 * 400), `too large` (over `limit`, refused with 413 before a byte is read) or `acceptable`
 * (absent, or within the limit). The HTTP front judges the bodies it reads with the same function,
 * and leaves the refusals to this plugin.
 */
export function declaredLength(
  declared: string | null | undefined,
  limit: number,
): 'acceptable' | 'invalid' | 'too large' {
  if (declared === null || declared === undefined) return 'acceptable';
  if (!CONTENT_LENGTH.test(declared)) return 'invalid';
  return Number(declared) > limit ? 'too large' : 'acceptable';
}

/**
 * The text of a body read whole (`size` bytes, of which `bytes` holds at most the first `limit`
 * and one chunk more), or why it is refused: over the limit, or not UTF-8 (GraphQL over HTTP
 * bodies are UTF-8, and a decoder that silently replaced bad bytes would let two different byte
 * strings mean the same operation). The HTTP front reads node's stream with the same function.
 */
export function bodyText(
  bytes: Uint8Array,
  size: number,
  limit: number,
): { text: string } | { refused: 'too large' | 'not utf-8' } {
  if (size > limit) return { refused: 'too large' };
  if (!isUtf8(bytes)) return { refused: 'not utf-8' };
  return { text: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8') };
}

/**
 * A Content-Type value in one spelling: the media type in lower case, each parameter trimmed and
 * written `; name=value` (names in lower case). Media types are case-insensitive and may have
 * whitespace around `;` (RFC 9110, 8.3.1): `Application/JSON ; charset=UTF-8` is
 * `application/json; charset=UTF-8`, which yoga's parsers, comparing text, then recognise. The
 * HTTP front decides with the same function which bodies it reads as JSON.
 */
export function canonicalMediaType(value: string): string {
  const [type = '', ...parameters] = value.split(';');
  let canonical = type.trim().toLowerCase();
  for (const parameter of parameters) {
    const at = parameter.indexOf('=');
    const trimmed = parameter.trim();
    if (trimmed === '') continue;
    canonical +=
      at < 0
        ? `; ${trimmed.toLowerCase()}`
        : `; ${parameter.slice(0, at).trim().toLowerCase()}=${parameter.slice(at + 1).trim()}`;
  }
  return canonical;
}

function tooLarge(limit: number) {
  return codedError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes`, { status: 413 });
}

/** Reads a whole body, refusing it once it passes `limit` (without reading on) and when it is not UTF-8 ({@link bodyText}). */
async function readText(body: ReadableStream<Uint8Array>, limit: number): Promise<string> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const read = bodyText(Buffer.concat(chunks, size), size, limit);
  if ('text' in read) return read.text;
  if (read.refused === 'too large') throw tooLarge(limit);
  throw codedError('BAD_REQUEST', 'The request body is not valid UTF-8', { status: 400 });
}

/** A stream that passes `body` on and fails, and stops reading, once more than `limit` bytes have passed. */
function counted(body: ReadableStream<Uint8Array>, limit: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let size = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      size += value.byteLength;
      if (size > limit) {
        controller.error(tooLarge(limit));
        await reader.cancel();
        return;
      }
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/**
 * A parser's own failure that is not a coded GraphQL error (`variables=notjson` in a GET URL) is the request's fault.
 */
async function unreadable<T>(parse: () => T | Promise<T>): Promise<T> {
  try {
    return await parse();
  } catch (error) {
    if (error instanceof GraphQLError) throw error;
    throw codedError('BAD_REQUEST', 'The request could not be read: its variables or extensions are not valid JSON', {
      status: 400,
    });
  }
}

/**
 * The yoga plugin; it must come after every plugin that sets a request parser (the streaming
 * uploads), so that it wraps the parser that will run. A POST whose content type no parser
 * takes is refused with 415 and a code (yoga would send an empty 415); a declared
 * Content-Length over the limit is refused before a byte is read; whatever a parser fails on
 * without saying why is a 400.
 */
export function useRequestBodyLimits(limits: BodyLimits): Plugin {
  return {
    onRequest({ request }) {
      // Before yoga's parsers choose one by the Content-Type's text (see canonicalMediaType).
      const contentType = request.headers.get('content-type');
      if (contentType === null) return;
      const canonical = canonicalMediaType(contentType);
      if (canonical !== contentType) request.headers.set('content-type', canonical);
    },
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (request.method !== 'GET' && request.method !== 'POST') return;
      if (!requestParser) {
        if (request.method !== 'POST') return;
        throw codedError(
          'UNSUPPORTED_MEDIA_TYPE',
          'Send the operation as application/json (or as multipart/form-data with files)',
          { status: 415 },
        );
      }
      const parse = requestParser;
      if (request.method === 'GET') {
        setRequestParser((incoming) => unreadable(() => parse(incoming)));
        return;
      }
      const multipart = /^multipart\/form-data\b/i.test(request.headers.get('content-type') ?? '');
      const limit = multipart ? limits.maxMultipartBytes : limits.maxBytes;
      const declared = declaredLength(request.headers.get('content-length'), limit);
      if (declared === 'invalid')
        throw codedError('BAD_REQUEST', 'The Content-Length header is invalid', { status: 400 });
      if (declared === 'too large') throw tooLarge(limit);
      setRequestParser(async (incoming) => {
        const body = incoming.body;
        if (!body) return unreadable(() => parse(incoming));
        const init = { method: incoming.method, headers: incoming.headers, signal: incoming.signal };
        if (multipart) {
          // A streamed request body needs `duplex: 'half'`, which the RequestInit type does not know yet.
          const streamed = { ...init, body: counted(body, limit), duplex: 'half' };
          return parse(new fetchAPI.Request(incoming.url, streamed));
        }
        const text = await readText(body, limit);
        return unreadable(() => parse(new fetchAPI.Request(incoming.url, { ...init, body: text })));
      });
    },
  };
}
