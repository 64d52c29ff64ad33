/**
 * Test stack: the embedded emulator on 127.0.0.1 port 0, and the gateway served over HTTP on
 * another free port, pointed at it. Each test file starts its own and stops it. Also how a test
 * serves a gateway over any upstream ({@link serveObserved}), and posts to it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { loadConfig, upstreamClientSettings } from '../../src/config/index.js';
import type { Emulator, RecordedRequest } from '../../src/emulator/server.js';
import { createGateway, type Gateway, type GatewayConfig, type GatewayDependencies } from '../../src/gateway.js';
import type { DestinationStream } from '../../src/observability/logger.js';
import type { UpstreamClientOptions } from '../../src/upstream/http.js';
import { checkErrorCodes } from './error-codes.js';
import { startUpstream } from './upstream.js';

/** A GraphQL response as the tests read it. */
export type GraphQLResponse = {
  status: number;
  data?: Record<string, unknown> | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  /** the answer's own extensions (explain's `upstream`, the upstream cache's `upstreamCache`) */
  extensions?: Record<string, unknown>;
};

export type Stack = {
  /** the gateway's GraphQL endpoint */
  url: string;
  emulator: Emulator;
  /** posts a GraphQL operation as JSON */
  gql(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<GraphQLResponse>;
  /** {@link postBody}: posts a request body as it is, with the caller's credentials */
  post(body: Record<string, unknown>): ReturnType<typeof postBody>;
  /** the requests the emulator received since the last call (and forgets them) */
  upstream(): RecordedRequest[];
  /** the gateway's feed of what its writes changed upstream */
  changes: Gateway['changes'];
  close(): Promise<void>;
};

/** Credentials a test sends; their values must never appear in responses. */
export const BEARER = 'test-bearer-token-0123';
export const API_KEY = 'test-api-key-4567';
export const ALL_CREDENTIALS = { authorization: `Bearer ${BEARER}`, api_key: API_KEY };

/** The default configuration, with no environment (tests must not depend on the caller's). */
export function testConfig(
  overrides: Partial<GatewayConfig> & Pick<GatewayConfig, 'petstoreUrl' | 'plantsUrl'>,
): GatewayConfig {
  // The circuit breaker and the retry budget are off unless a test turns them on (the
  // upstream-circuit and fault tests do): a file whose tests fail one upstream call after another
  // on one gateway would otherwise find the area's circuit opened, or its retries spent, by the
  // tests before it.
  return {
    ...loadConfig([], {}),
    host: '127.0.0.1',
    port: 0,
    logLevel: 'warn',
    upstreamCircuitFailureRate: 0,
    upstreamRetryBudgetPercent: 0,
    ...overrides,
  };
}

/**
 * Both areas' timeouts as these timeout variables set them at start, for a config override:
 * `{ upstreamTimeouts: timeoutsSetBy({ UPSTREAM_TIMEOUT_MS: '200' }) }`.
 */
export function timeoutsSetBy(env: Record<string, string>): GatewayConfig['upstreamTimeouts'] {
  return loadConfig([], env).upstreamTimeouts;
}

/**
 * The options a gateway with the default settings gives its pet store client, pointed at `petstoreUrl`; a test
 * overrides those it is about.
 */
export function defaultClientOptions(petstoreUrl: string): UpstreamClientOptions {
  return upstreamClientSettings(testConfig({ petstoreUrl, plantsUrl: petstoreUrl }), 'petstore', petstoreUrl);
}

/** Serves a request handler (which may answer asynchronously) on 127.0.0.1, port 0. */
export async function listen(
  handler: (request: IncomingMessage, response: ServerResponse) => void | Promise<void>,
): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => void handler(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}` };
}

/** Stops a server, closing its keep-alive connections. */
export async function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The headers of a GraphQL POST that asks for the GraphQL-over-HTTP media type (real HTTP statuses). */
export const GRAPHQL_POST_HEADERS = { 'content-type': 'application/json', accept: 'application/graphql-response+json' };

/**
 * Posts a request body as it is (no query added: a persisted query's hash alone, for one) with
 * the caller's credentials; the status and the parsed answer.
 */
async function postBody(url: string, body: Record<string, unknown>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...GRAPHQL_POST_HEADERS, ...ALL_CREDENTIALS },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as unknown;
  checkErrorCodes(answer);
  return { status: response.status, body: answer };
}

/** Posts a GraphQL operation to `url`. */
export async function postGraphQL(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<GraphQLResponse> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...headers,
    },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as Omit<GraphQLResponse, 'status'>;
  checkErrorCodes(body);
  return { status: response.status, ...body };
}

/** A captured log: every line as written, and parsed. */
export type CapturedLog = DestinationStream & {
  /** everything written, as one string (what stdout would have shown) */
  text(): string;
  /** each line parsed as JSON */
  lines(): Record<string, unknown>[];
};

/** A log destination that keeps what is written. */
export function captureLog(): CapturedLog {
  let written = '';
  return {
    write: (chunk: string) => {
      written += chunk;
    },
    text: () => written,
    lines: () =>
      written
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** A gateway served over HTTP, its log captured. */
export type ObservedGateway = {
  /** the gateway's origin, e.g. http://127.0.0.1:41234 */
  origin: string;
  /** its GraphQL endpoint */
  url: string;
  log: CapturedLog;
  /** the gateway's feed of what its writes changed upstream */
  changes: Gateway['changes'];
  gql(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<GraphQLResponse>;
  /** the request log lines (the ones with a `status`) so far */
  requestLines(): Record<string, unknown>[];
  close(): Promise<void>;
};

/**
 * Serves a gateway over `upstreams` (the emulator's URLs, or any) on 127.0.0.1, port 0, with its
 * log captured (and, given a `spanExporter`, its spans): the way every test in this process starts
 * one ({@link startStack}, `useObserved` and the files that serve their own build on it).
 */
export async function serveObserved(
  upstreams: Pick<Emulator, 'petstoreUrl' | 'plantsUrl'>,
  overrides: Partial<GatewayConfig> = {},
  dependencies: Omit<GatewayDependencies, 'logDestination'> = {},
): Promise<ObservedGateway> {
  const log = captureLog();
  const gateway = createGateway(
    testConfig({ petstoreUrl: upstreams.petstoreUrl, plantsUrl: upstreams.plantsUrl, logLevel: 'info', ...overrides }),
    {
      ...dependencies,
      logDestination: log,
    },
  );
  const { server, url: origin } = await listen(gateway.handler);
  const url = `${origin}/graphql`;
  return {
    origin,
    url,
    log,
    changes: gateway.changes,
    gql: (query, variables, headers) => postGraphQL(url, query, variables, headers),
    requestLines: () => log.lines().filter((line) => typeof line['status'] === 'number'),
    async close() {
      await stop(server);
      await gateway.close();
    },
  };
}

/**
 * Starts this run's upstream (the emulator or the reference double) and a gateway in front of it
 * ({@link serveObserved}, logging warnings and errors only unless `overrides` say).
 */
export async function startStack(overrides: Partial<GatewayConfig> = {}, emulator?: Emulator): Promise<Stack> {
  const upstreamEmulator = emulator ?? (await startUpstream());
  const gateway = await serveObserved(upstreamEmulator, { logLevel: 'warn', ...overrides });
  return {
    url: gateway.url,
    emulator: upstreamEmulator,
    changes: gateway.changes,
    gql: (query, variables, headers) => gateway.gql(query, variables, headers),
    post: (body) => postBody(gateway.url, body),
    upstream() {
      const requests = [...upstreamEmulator.requests];
      upstreamEmulator.clearRequests();
      return requests;
    },
    async close() {
      await gateway.close();
      if (!emulator) await upstreamEmulator.close();
    },
  };
}

/** The parts of a recorded upstream request that tests assert on. */
export function summary(request: RecordedRequest) {
  return {
    method: request.method,
    path: request.path,
    query: decodeURIComponent(request.query),
    contentType: request.contentType,
    authorization: request.headers['authorization'],
    apiKey: request.headers['api_key'],
  };
}

/**
 * The requests the upstream received since the last look, as {@link summary} shows them, in the
 * order of their path and query: for calls made concurrently, whose order is not fixed.
 */
export function summariesByPath(stack: Stack) {
  return stack
    .upstream()
    .map(summary)
    .sort((a, b) => a.path.localeCompare(b.path) || a.query.localeCompare(b.query));
}

/**
 * What {@link summary} shows of a request the upstream should receive: of the caller's
 * credentials only `sent` (`'both'`: the bearer token and the api_key).
 */
export function expectedRequest(
  method: string,
  path: string,
  sent: 'api_key' | 'bearer' | 'both' | 'none',
  contentType?: string,
  query = '',
) {
  return {
    method,
    path,
    query,
    contentType,
    authorization: sent === 'bearer' || sent === 'both' ? `Bearer ${BEARER}` : undefined,
    apiKey: sent === 'api_key' || sent === 'both' ? API_KEY : undefined,
  };
}

/** {@link expectedRequest} of a GET, which has no body. */
export function expectedGet(path: string, sent: 'api_key' | 'bearer' | 'both' | 'none', query = '') {
  return expectedRequest('GET', path, sent, undefined, query);
}

/**
 * {@link expectedRequest} of an image upload (`uploadPetImage`): the file's bytes POSTed to the pet's
 * `uploadImage` with the bearer token, `additionalMetadata` in the query when given.
 */
export function expectedUpload(petId: string, additionalMetadata?: string) {
  const query = additionalMetadata === undefined ? '' : `additionalMetadata=${additionalMetadata}`;
  return expectedRequest('POST', `/api/v3/pet/${petId}/uploadImage`, 'bearer', 'application/octet-stream', query);
}

/** The requests the upstream received since the last look: what `summary` shows, plus the raw body. */
export function received(stack: Stack) {
  return stack.upstream().map((request) => ({ ...summary(request), body: request.body }));
}

/**
 * A stack for the enclosing file or `describe`: started before its tests, stopped after them,
 * and before each test the upstream's data reseeded and its request log emptied.
 */
export function useStack(overrides: Partial<GatewayConfig> = {}): Stack {
  let started: Stack | undefined;
  const current = (): Stack => {
    if (!started) throw new Error('useStack: the stack is only there inside tests');
    return started;
  };
  beforeAll(async () => {
    started = await startStack(overrides);
  });
  afterAll(() => started?.close());
  beforeEach(() => {
    current().emulator.reset();
    current().upstream();
  });
  return {
    get url() {
      return current().url;
    },
    get emulator() {
      return current().emulator;
    },
    get changes() {
      return current().changes;
    },
    gql: (query, variables, headers) => current().gql(query, variables, headers),
    post: (body) => current().post(body),
    upstream: () => current().upstream(),
    close: () => current().close(),
  };
}
