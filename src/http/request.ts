/**
 * What the HTTP front reads of a request from node:http, without a Fetch `Request`: its headers,
 * the media type its Accept header picks, its JSON body or query string, and the GraphQL
 * parameters in them when they are ones the lane serves itself (undefined: yoga's to judge). Each
 * reads as yoga's own parsers and checks do, so that a request the lane takes on gets yoga's
 * answer (test/http-differential.test.ts).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { HeaderSource } from '../credentials.js';
import { valueNestsDeeper } from '../security/input-depth.js';
import { bodyText, canonicalMediaType } from '../security/request-body.js';
import { trustedDocument, type TrustedDocuments } from '../security/trusted-documents.js';
import type { ResultMediaType } from './result.js';

/** node's headers as a {@link HeaderSource}: names are already lower case, repeated ones joined as Fetch does. */
export function headerReader(headers: IncomingHttpHeaders): HeaderSource {
  return {
    get(name) {
      const value = headers[name];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/** The GraphQL parameters of a request the lane serves. */
export type Params = {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
  extensions?: Record<string, unknown> | null;
};

const PARAM_NAMES = new Set(['query', 'variables', 'operationName', 'extensions']);

/** yoga's initial context of an operation the lane serves; its envelop extends it into the GraphQL context. */
export type LaneContext = {
  req: IncomingMessage;
  res: ServerResponse;
  /** work a plugin leaves running after the answer (whatwg-node's server context has it); its failure is logged */
  waitUntil: (promise: Promise<unknown> | void) => void;
  request: Request;
  params: Params;
};

/**
 * The request as the plugins' hooks the lane runs see it: its method, path and headers, the only
 * parts they read (a Fetch Request is not built: its making cost more than the rest of a cheap
 * request).
 */
export function fetchLike(method: string, url: string, headers: HeaderSource): Request {
  return { method, url, headers } as Request;
}

/** A request as whatwg-node's CORS function reads it: its method and headers, the only parts it reads. */
export function headerReaderRequest(request: IncomingMessage): Request {
  return fetchLike(request.method ?? 'GET', request.url ?? '/', headerReader(request.headers));
}

/**
 * A parsed body or query string the lane serves itself, or undefined when yoga must look at it.
 * With a trusted documents manifest, only a request naming one of its documents by hash is
 * served, with that document's text; without, only a request carrying its document and no
 * extensions (a persisted query's hash is for yoga's plugins).
 */
export function laneParams(
  value: unknown,
  maxDepth: number,
  trusted: TrustedDocuments | undefined,
): Params | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const params = value as Record<string, unknown>;
  for (const key in params) if (!PARAM_NAMES.has(key) && params[key] != null) return undefined;
  const { variables, operationName, extensions } = params;
  if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
  if (valueNestsDeeper(variables, maxDepth)) return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  if (trusted !== undefined) {
    const query = trustedDocument(trusted, params);
    return query === undefined ? undefined : { ...params, query };
  }
  if (typeof params['query'] !== 'string' || extensions != null) return undefined;
  return params as Params;
}

/**
 * The media type of the answer, as yoga's result processors would choose it for this Accept
 * header, or undefined when it would choose another processor (server-sent events, multipart)
 * or none: then yoga answers.
 */
export function acceptedMediaType(accept: string | undefined): ResultMediaType | undefined {
  if (accept === undefined || accept === '' || accept === '*/*' || accept === 'application/json')
    return 'application/json';
  if (accept === 'application/graphql-response+json') return accept;
  // The first listed type that either JSON type matches decides; application/json wins a tie.
  for (const entry of accept.replace(/\s/g, '').toLowerCase().split(',')) {
    const [type = '', ...parameters] = entry.split(';');
    const charset = parameters.find((parameter) => parameter.startsWith('charset='));
    if (charset !== undefined && charset !== 'charset=utf-8') continue;
    const [main, sub] = type.split('/');
    const matches = (candidate: string) =>
      (main === '*' || main === 'application') && (sub === '*' || sub === candidate);
    if (matches('json')) return 'application/json';
    if (matches('graphql-response+json')) return 'application/graphql-response+json';
    if (type === 'text/event-stream' || type === 'multipart/mixed') return undefined;
  }
  return undefined;
}

/** True for `application/json`, in any spelling, with no charset or UTF-8. */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  if (contentType === 'application/json') return true;
  const [type, ...parameters] = canonicalMediaType(contentType).split('; ');
  return (
    type === 'application/json' &&
    parameters.every((parameter) => !parameter.startsWith('charset=') || parameter.toLowerCase() === 'charset=utf-8')
  );
}

/** The parsed JSON of a body, or undefined when it is not JSON. */
export function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/**
 * The GraphQL parameters of a GET's query string, or undefined when yoga must look at them (variables
 * that are not JSON).
 */
export function queryParams(search: string): unknown {
  const parameters = new URLSearchParams(search);
  try {
    const variables = parameters.get('variables');
    const extensions = parameters.get('extensions');
    return {
      query: parameters.get('query') || undefined,
      operationName: parameters.get('operationName') || undefined,
      variables: variables ? (JSON.parse(variables) as unknown) : undefined,
      extensions: extensions ? (JSON.parse(extensions) as unknown) : undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * The whole body as UTF-8 text; or, when the body-limit plugin would refuse it ({@link bodyText}:
 * over `limit` bytes, of which no more than one chunk past the limit is kept, or not UTF-8), its
 * bytes, for that plugin to refuse on yoga's path.
 */
export function readBody(request: IncomingMessage, limit: number): Promise<string | Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      if (size <= limit) chunks.push(chunk);
      size += chunk.length;
    });
    request.once('end', () => {
      const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      const read = bodyText(bytes, size, limit);
      resolve('text' in read ? read.text : bytes);
    });
    request.once('error', reject);
  });
}
