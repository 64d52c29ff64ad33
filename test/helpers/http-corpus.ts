/**
 * A corpus of GraphQL-over-HTTP requests for the differential test (test/http-differential.test.ts):
 * methods × Content-Type spellings and charsets × Accept lists with q-values × body shapes ×
 * GraphQL errors × limits × GET with and without the CSRF header × credentials × compression ×
 * CORS preflights and Origins. The product of all of them is far too large, so each request
 * takes its body and method from a full cross of those two, and its headers from a seeded
 * generator: the same corpus on every run, every value of every dimension many times over.
 */
import { createHash } from 'node:crypto';
import { seeded } from './random.js';

/** One request as a test sends it: header names lower case, the body as text. */
export type CorpusRequest = {
  /** what the request is, for a failure message */
  label: string;
  method: string;
  /** path and query string */
  path: string;
  headers: Record<string, string>;
  body?: string;
};

const PET = 'query Pet($id: ID!) { pet(id: $id) { id name status } }';

/** A trusted documents manifest holding the corpus's pet query, for a gateway with TRUSTED_DOCUMENTS. */
export const TRUSTED_MANIFEST: Readonly<Record<string, string>> = {
  [createHash('sha256').update(PET).digest('hex')]: PET,
};
const TRUSTED_HASH = Object.keys(TRUSTED_MANIFEST)[0] ?? '';

/** GraphQL parameters (or a raw body) of each shape the corpus sends. */
const SHAPES: Record<string, { params?: Record<string, unknown>; raw?: string }> = {
  'a query with variables': { params: { query: PET, variables: { id: '1' } } },
  'a query with no variables': { params: { query: '{ petsByStatus(status: AVAILABLE) { id name } }' } },
  'an upstream 404': { params: { query: PET, variables: { id: '987654' } } },
  'an operation chosen by name': {
    params: { query: `${PET} query Inventory { inventory { available } }`, operationName: 'Inventory' },
  },
  'two operations and no name': { params: { query: `${PET} query Inventory { inventory { available } }` } },
  'an unknown operation name': { params: { query: PET, operationName: 'Nope', variables: { id: '1' } } },
  'a document that does not parse': { params: { query: '{ pet(id: 1) { id ' } },
  'a document that does not validate': { params: { query: '{ pet(id: 1) { nickname } }' } },
  'a subscription (the graph serves none)': { params: { query: 'subscription { __typename }' } },
  'a variable of the wrong type': { params: { query: PET, variables: { id: { nested: true } } } },
  'a missing variable': { params: { query: PET } },
  'a mutation': {
    params: { query: 'mutation { updatePet(input: { id: "2", name: "Rex", status: AVAILABLE }) { id name } }' },
  },
  'variables as a JSON string': { params: { query: PET, variables: '{"id":"1"}' } },
  'variables that are a list': { params: { query: PET, variables: ['1'] } },
  'a query that is a number': { params: { query: 42 } },
  'no query': { params: { variables: { id: '1' } } },
  'a null operation name': { params: { query: PET, variables: { id: '1' }, operationName: null } },
  'an unknown parameter': { params: { query: PET, variables: { id: '1' }, other: true } },
  'an unknown persisted query': {
    params: { extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } },
  },
  // The differential test's gateways allow a depth of 2.
  'a trusted document by hash': {
    params: { extensions: { persistedQuery: { version: 1, sha256Hash: TRUSTED_HASH } }, variables: { id: '1' } },
  },
  'a trusted document by hash, of another version': {
    params: { extensions: { persistedQuery: { version: 2, sha256Hash: TRUSTED_HASH } }, variables: { id: '1' } },
  },
  'a trusted document by hash, and its text': {
    params: {
      query: PET,
      extensions: { persistedQuery: { version: 1, sha256Hash: TRUSTED_HASH } },
      variables: { id: '1' },
    },
  },
  'a query deeper than the limit': { params: { query: '{ pet(id: "1") { category { name } } }' } },
  'variables nested deeper than the limit': {
    params: { query: PET, variables: { id: '1', deep: JSON.parse(`${'['.repeat(120)}1${']'.repeat(120)}`) } },
  },
  // Answered in parts (multipart/mixed, server-sent events) or refused by Accept (406), on both paths.
  'a list with @stream': {
    params: { query: '{ petsByStatus(status: AVAILABLE) @stream(initialCount: 1) { id name } }' },
  },
  'a query with @defer': { params: { query: '{ inventory { available } ... @defer { pet(id: "1") { id } } }' } },
  'a batch': { raw: JSON.stringify([{ query: PET, variables: { id: '1' } }]) },
  'a JSON string': { raw: JSON.stringify('{ inventory { available } }') },
  'text that is not JSON': { raw: '{"query": ' },
  'an empty body': { raw: '' },
  'a body over the limit': { raw: JSON.stringify({ query: PET, variables: { id: '1', pad: 'x'.repeat(2048) } }) },
};

const METHODS = ['POST', 'GET', 'PUT', 'OPTIONS'];

const CONTENT_TYPES = [
  undefined,
  'application/json',
  'Application/JSON',
  'application/json; charset=utf-8',
  'application/json ; charset=UTF-8',
  'application/json;charset="utf-8"',
  'application/json; charset=iso-8859-1',
  'application/graphql-response+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/graphql',
];

const ACCEPTS = [
  undefined,
  '*/*',
  'application/json',
  'application/graphql-response+json',
  'APPLICATION/JSON',
  'application/graphql-response+json, application/json;q=0.9',
  'application/json;q=0.5, application/graphql-response+json',
  'application/graphql-response+json;q=0.1, application/json',
  'application/json; charset=utf-8',
  'application/json; charset=iso-8859-1',
  'application/*',
  'text/html',
  'text/html, */*;q=0.8',
  'text/event-stream',
  'multipart/mixed',
  // Apollo Client's, with @defer
  'multipart/mixed;deferSpec=20220824,application/json;q=0.9',
  'text/event-stream, application/json',
  'application/xml',
];

const CREDENTIALS: Record<string, string>[] = [
  {},
  { api_key: 'corpus-key-1' },
  { authorization: 'Bearer corpus-token-1' },
  { api_key: 'corpus-key-2', authorization: 'Bearer corpus-token-2' },
];

const CSRF = [undefined, { 'x-graphql-csrf': '1' }, { 'apollo-require-preflight': 'true' }];

const ORIGINS = [undefined, 'https://app.example', 'https://evil.example'];

const ENCODINGS = [undefined, 'gzip', 'br;q=1, gzip;q=0.5', 'identity'];

/** The query string of a GET carrying these parameters, as a client library writes it. */
function queryString(params: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return search.toString();
}

/** The body of a POST with these parameters in this content type. */
function postBody(shape: { params?: Record<string, unknown>; raw?: string }, contentType: string | undefined): string {
  if (shape.raw !== undefined) return shape.raw;
  const params = shape.params ?? {};
  if (contentType === 'application/graphql') return typeof params['query'] === 'string' ? params['query'] : '';
  if (contentType === 'application/x-www-form-urlencoded') return queryString(params);
  return JSON.stringify(params);
}

/**
 * The corpus: every method with every body shape, `perPair` times, each time with headers drawn
 * from the other dimensions. `cors` adds preflights and Origins (for a gateway with CORS_ORIGINS).
 */
export function httpCorpus(options: { perPair: number; seed: number; cors: boolean }): CorpusRequest[] {
  const random = seeded(options.seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  const corpus: CorpusRequest[] = [];
  for (const method of METHODS) {
    for (const [shapeName, shape] of Object.entries(SHAPES)) {
      for (let round = 0; round < options.perPair; round++) {
        const headers: Record<string, string> = { ...pick(CREDENTIALS) };
        const accept = pick(ACCEPTS);
        if (accept !== undefined) headers['accept'] = accept;
        const encoding = pick(ENCODINGS);
        if (encoding !== undefined) headers['accept-encoding'] = encoding;
        const origin = options.cors ? pick(ORIGINS) : undefined;
        if (origin !== undefined) headers['origin'] = origin;
        let path = '/graphql';
        let body: string | undefined;
        if (method === 'GET' || method === 'OPTIONS') {
          Object.assign(headers, pick(CSRF));
          if (shape.params) path += `?${queryString(shape.params)}`;
          if (method === 'OPTIONS' && origin !== undefined) {
            headers['access-control-request-method'] = pick(['POST', 'GET', 'DELETE']);
            headers['access-control-request-headers'] = pick(['content-type', 'content-type, api_key', 'x-secret']);
          }
        } else {
          const contentType = pick(CONTENT_TYPES);
          if (contentType !== undefined) headers['content-type'] = contentType;
          body = postBody(shape, contentType);
        }
        const label = `${method} ${shapeName} (${JSON.stringify(headers)})`;
        corpus.push({ label, method, path, headers, ...(body !== undefined ? { body } : {}) });
      }
    }
  }
  return corpus;
}

/**
 * The corpus with `x-gateway-explain: 1` on every request (EXPLAIN): its answers carry
 * `extensions.upstream`, which both paths must write alike, their durations aside.
 */
export function explainCorpus(options: { perPair: number; seed: number }): CorpusRequest[] {
  return httpCorpus({ ...options, cors: false }).map((sent) => ({
    ...sent,
    label: `${sent.label}, explained`,
    headers: { ...sent.headers, 'x-gateway-explain': '1' },
  }));
}

/** Documents answered in parts, for a gateway with the default limits (the corpus above runs with a depth of 2). */
const INCREMENTAL: Record<string, Record<string, unknown>> = {
  'a query with @defer': {
    query: 'query Pet($id: ID!) { pet(id: $id) { id ... @defer { name tags { name } } } }',
    variables: { id: '1' },
  },
  'an order with its pet deferred': { query: '{ order(id: "1") { id ... @defer { pet { name } } } }' },
  'a deferred field that fails': { query: '{ pet(id: "1") { id } ... @defer { other: pet(id: "x") { id } } }' },
  'a list with @stream': { query: '{ petsByStatus(status: AVAILABLE) @stream(initialCount: 2) { id name } }' },
  'a @defer turned off': { query: '{ pet(id: "2") { id ... @defer(if: false) { name } } }' },
  'a @defer turned off by a variable': {
    query: 'query Pet($later: Boolean!) { pet(id: "2") { id ... @defer(if: $later) { name } } }',
    variables: { later: false },
  },
  'a mutation with @defer': {
    query: 'mutation { updatePet(input: { id: "2", name: "Rex", status: AVAILABLE }) { id ... @defer { name } } }',
  },
};

/**
 * `@defer` and `@stream` requests: each document with every Accept value of the corpus, by POST and
 * by GET (with its CSRF header), with credentials; for a gateway with the default limits.
 */
export function incrementalCorpus(): CorpusRequest[] {
  const corpus: CorpusRequest[] = [];
  for (const [name, params] of Object.entries(INCREMENTAL)) {
    for (const accept of ACCEPTS) {
      for (const method of ['POST', 'GET']) {
        const headers: Record<string, string> = { api_key: 'corpus-key-1', authorization: 'Bearer corpus-token-1' };
        if (accept !== undefined) headers['accept'] = accept;
        const get = method === 'GET';
        if (get) headers['x-graphql-csrf'] = '1';
        else headers['content-type'] = 'application/json';
        corpus.push({
          label: `${method} ${name} (${JSON.stringify(headers)})`,
          method,
          path: get ? `/graphql?${queryString(params)}` : '/graphql',
          headers,
          ...(get ? {} : { body: JSON.stringify(params) }),
        });
      }
    }
  }
  return corpus;
}
