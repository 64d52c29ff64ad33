/**
 * The one place that speaks HTTP to the upstreams: a keep-alive undici pool per upstream
 * origin, timeouts, decoding by Content-Type, and a typed {@link UpstreamError} for every
 * failure. Area modules (`petstore.ts`, `plants.ts`) sit on top; resolvers never see HTTP.
 */
import type { Readable } from 'node:stream';
import { Pool } from 'undici';
import { DecodeError, decodeJson, decodeXml, normalize, type Payload, type Shape } from './codec.js';

/** The upstream areas, named as they appear in errors (`extensions.upstream.service`). */
export type UpstreamService = 'petstore' | 'plants';

/** Why an upstream call failed. */
export type UpstreamFailure =
  /** the upstream answered with a non-2xx status */
  | 'status'
  /** no answer within the configured time */
  | 'timeout'
  /** the connection could not be made or was lost */
  | 'unavailable'
  /** a 2xx answer whose body could not be read as its content type, or was too large */
  | 'invalid-response';

/**
 * A failed upstream call. It names the service and operation, never the URL (which may carry
 * secrets in a user's configuration) and never a credential. `message` is the upstream's own
 * message when it sent one.
 */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    readonly service: UpstreamService,
    readonly operation: string,
    readonly failure: UpstreamFailure,
    message: string,
    /** the upstream's HTTP status, when it answered */
    readonly status?: number,
    /** the plant area's numeric `error` field, when its Error record was sent */
    readonly upstreamCode?: number,
  ) {
    super(message);
  }
}

/** Options of one upstream client. */
export type UpstreamClientOptions = {
  /** base URL of the area, e.g. `https://petstore3.swagger.io/api/v3`; its path prefixes every call */
  baseUrl: string;
  /** maximum parallel connections (and so parallel calls) to this upstream; more calls queue. @default 32 */
  connections?: number;
  /** deadline for a whole call, connect to last body byte, in milliseconds. @default 10000 */
  timeoutMs?: number;
  /** largest response body read, in bytes; a larger one is an `invalid-response`. @default 10485760 */
  maxResponseBytes?: number;
};

type QueryValue = string | readonly string[] | undefined;

/** One call, described without HTTP plumbing. */
export type UpstreamRequest = {
  /** the REST operation's name (its operationId), used in errors and metrics */
  operation: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** path below the base URL, already encoded; build it with {@link path} */
  path: string;
  /** query parameters; an array value is sent as repeated parameters */
  query?: Readonly<Record<string, QueryValue>>;
  /** extra headers (credentials, accept) */
  headers?: Readonly<Record<string, string>>;
  body?: { contentType: string; data: string | Readable };
};

/** A successful (2xx) answer, its body decoded by its own Content-Type. */
export type UpstreamResponse = {
  status: number;
  /** JSON or XML content as plain values, text as a string, an empty body as undefined */
  body: unknown;
};

/** A client for one upstream area. */
export type UpstreamClient = {
  readonly service: UpstreamService;
  request(call: UpstreamRequest): Promise<UpstreamResponse>;
  /** closes the pool once in-flight calls are done */
  close(): Promise<void>;
};

/**
 * Builds a path from a template, percent-encoding every interpolated value as one path
 * segment, so that no input (`../`, `?`, `/`) can change which resource is called.
 */
export function path(strings: TemplateStringsArray, ...values: readonly (string | number)[]): string {
  return strings.reduce((result, literal, index) => {
    const value = index < values.length ? encodeSegment(String(values[index])) : '';
    return result + literal + value;
  }, '');
}

function encodeSegment(value: string): string {
  // encodeURIComponent leaves '.' alone, and a segment of '.' or '..' would be resolved away.
  return encodeURIComponent(value).replace(/\./g, '%2E');
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Creates the client of one upstream area, with its own keep-alive pool. */
export function createUpstreamClient(service: UpstreamService, options: UpstreamClientOptions): UpstreamClient {
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxResponseBytes = options.maxResponseBytes ?? 10 * 1024 * 1024;
  const pool = new Pool(base.origin, {
    connections: options.connections ?? 32,
    connect: { timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 30_000,
  });

  async function request(call: UpstreamRequest): Promise<UpstreamResponse> {
    const secrets = credentialValues(call.headers);
    const fail = (failure: UpstreamFailure, message: string, status?: number, code?: number) =>
      new UpstreamError(service, call.operation, failure, withoutSecrets(message, secrets), status, code);

    // A streamed body can fail on its own (the client went away, an upload limit was hit);
    // that error, not undici's consequence of it, is what the caller must see.
    let bodyError: unknown;
    const data = call.body?.data;
    if (data !== undefined && typeof data !== 'string') data.once('error', (error) => (bodyError = error));

    const headers: Record<string, string> = { ...call.headers };
    if (call.body) headers['content-type'] = call.body.contentType;

    let response: Awaited<ReturnType<Pool['request']>>;
    try {
      response = await pool.request({
        method: call.method,
        path: basePath + call.path + queryString(call.query),
        headers,
        body: data,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      // undici destroys the body with its own error when the call fails; only a failure that
      // came from the body's source (an upload limit, a client gone) is passed on as it is.
      if (bodyError !== undefined && !isTransportError(bodyError)) throw bodyError;
      throw isTimeout(error)
        ? fail('timeout', `${service} did not answer ${call.operation} within ${timeoutMs} ms`)
        : fail('unavailable', `${service} is unavailable for ${call.operation}`);
    }

    let text: string;
    try {
      text = await readText(response.body, maxResponseBytes);
    } catch (error) {
      if (error instanceof ResponseTooLarge) {
        throw fail('invalid-response', `${service} answered ${call.operation} with more than ${maxResponseBytes} bytes`, response.statusCode);
      }
      throw isTimeout(error)
        ? fail('timeout', `${service} did not finish answering ${call.operation} within ${timeoutMs} ms`)
        : fail('unavailable', `${service} broke the connection while answering ${call.operation}`);
    }

    const contentType = headerValue(response.headers['content-type']);
    if (response.statusCode >= 300 && response.statusCode <= 399) {
      // Redirects are not followed: the location may be another origin, which must not receive credentials.
      throw fail('status', `${service} answered ${call.operation} with a redirect (status ${response.statusCode}), which the gateway does not follow`, response.statusCode);
    }
    if (response.statusCode < 200 || response.statusCode > 299) {
      const { message, code } = errorMessage(text, contentType);
      throw fail('status', message || `${service} answered ${call.operation} with status ${response.statusCode}`, response.statusCode, code);
    }
    try {
      return { status: response.statusCode, body: decodeBody(text, contentType) };
    } catch {
      throw fail('invalid-response', `${service} answered ${call.operation} with a body that is not valid ${contentType ?? 'content'}: ${excerpt(text)}`, response.statusCode);
    }
  }

  return { service, request, close: () => pool.close() };
}

const CREDENTIAL_HEADERS = new Set(['authorization', 'api_key']);

/** The credential values a call carries: the whole header and, for `Bearer x`, the token alone. */
function credentialValues(headers: UpstreamRequest['headers']): string[] {
  return Object.entries(headers ?? {})
    .filter(([name]) => CREDENTIAL_HEADERS.has(name.toLowerCase()))
    .flatMap(([, value]) => [value, value.replace(/^\S+\s+/, '')])
    .filter((value) => value.length >= 4);
}

/** An upstream that echoes a credential in its error message must not get it into a response or a log. */
function withoutSecrets(message: string, secrets: readonly string[]): string {
  return secrets.reduce((text, secret) => text.split(secret).join('[redacted]'), message);
}

function queryString(query: UpstreamRequest['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const item of typeof value === 'string' ? [value] : value) params.append(name, item);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** An error raised by the connection or by undici (it carries a system or `UND_ERR_` code), or the deadline's abort. */
function isTransportError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return error.name === 'TimeoutError' || error.name === 'AbortError' || (typeof code === 'string' && /^(UND_ERR_|E[A-Z]+$)/.test(code));
}

function isTimeout(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return error.name === 'TimeoutError' || (typeof code === 'string' && TIMEOUT_CODES.has(code));
}

class ResponseTooLarge extends Error {}

async function readText(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new ResponseTooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function mediaType(contentType: string | undefined): 'json' | 'xml' | 'text' {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml')) return 'xml';
  return 'text';
}

/** Decodes a body by its Content-Type: JSON, XML, or anything else as text. */
function decodeBody(text: string, contentType: string | undefined): unknown {
  if (text.trim() === '') return undefined;
  const type = mediaType(contentType);
  return type === 'json' ? decodeJson(text) : type === 'xml' ? decodeXml(text) : text;
}

/**
 * The upstream's own message from an error body: `{message}` records (the pet store's
 * `{code, message}`, the plant area's `{error, message}`) in JSON or XML, or bare text, which
 * some servers send under a JSON or XML content type.
 */
function errorMessage(text: string, contentType: string | undefined): { message: string; code?: number } {
  // An HTML page (a proxy's error page) is not a message meant for the caller.
  if (/^\s*text\/html\b/i.test(contentType ?? '') || /^\s*<(!doctype|html)\b/i.test(text)) return { message: '' };
  let decoded: unknown;
  try {
    decoded = decodeBody(text, contentType);
  } catch {
    decoded = text;
  }
  if (typeof decoded === 'object' && decoded !== null) {
    const record = decoded as Record<string, unknown>;
    const message = typeof record['message'] === 'string' ? record['message'] : '';
    const code = Number(record['error']);
    return { message: excerpt(message), ...(Number.isInteger(code) ? { code } : {}) };
  }
  return { message: excerpt(typeof decoded === 'string' ? decoded : '') };
}

function excerpt(text: string): string {
  // Addresses are left out of anything passed on: they may name internal hosts or carry secrets.
  const clean = text.trim().replace(/\s+/g, ' ').replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, '[address]');
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}

/**
 * Reads a successful answer's body as the payload `shape` describes; a body that does not fit
 * becomes an `invalid-response` error naming the offending field (never a crash).
 */
export function decodePayload<S extends Shape>(client: UpstreamClient, operation: string, shape: S, response: UpstreamResponse): Payload<S> {
  try {
    return normalize(shape, response.body);
  } catch (error) {
    const reason = error instanceof DecodeError ? error.message : 'unreadable body';
    throw new UpstreamError(client.service, operation, 'invalid-response', `${client.service} answered ${operation} with an unexpected body (${reason})`, response.status);
  }
}
