/**
 * The emulator's HTTP server: one node:http listener serving the pet store
 * under /api/v3 and the plant area at /plants, recording every request it
 * receives so tests can assert on what the gateway actually sent. Every
 * request is checked against the area's OpenAPI document (its credential,
 * parameters and body) before an operation answers it.
 */
export type { RecordedRequest } from './recording-server.js';
import { loadContracts, type Area, type AreaContract, type OperationContract } from './contract.js';
import { apiError, HttpError, jsonReply } from './http.js';
import type { Operation, Reply, Route } from './http.js';
import { petstoreRoutes } from './petstore.js';
import { plantRoutes } from './plants.js';
import { startRecordingServer, type RecordedRequest } from './recording-server.js';
import { Store } from './store.js';
import { toJson } from './wire.js';

export type EmulatorOptions = {
  /**
   * Interface to listen on.
   * @default '127.0.0.1'
   */
  host?: string;
  /**
   * Port to listen on; 0 picks a free one.
   * @default 0
   */
  port?: number;
  /**
   * Delay added before answering each request, to make concurrency and
   * timeouts observable.
   * @default 0
   */
  latencyMs?: number;
  /**
   * Keep every request in `requests` (for tests). A long-running emulator (`npm start`,
   * `npm run emulator`) turns this off so that its memory does not grow with traffic.
   * @default true
   */
  recordRequests?: boolean;
};

export type Emulator = {
  /** Base URL of the pet store, ending in /api/v3, e.g. http://127.0.0.1:43123/api/v3 */
  petstoreUrl: string;
  /** Base URL of the plant area, e.g. http://127.0.0.1:43123 (POST {plantsUrl}/plants) */
  plantsUrl: string;
  /** Every request received, in arrival order; pushed as soon as headers arrive. */
  requests: RecordedRequest[];
  /** Highest number of requests being handled at the same time since start or the last reset. */
  maxInFlight: number;
  /** Clears `requests` and `maxInFlight`; the data is kept. */
  clearRequests(): void;
  /** Restores the seeded data. */
  reset(): void;
  /** Stops listening and closes every connection, idle keep-alive ones included. */
  close(): Promise<void>;
};

const PETSTORE_PREFIX = '/api/v3';

type CompiledRoute = { pattern: RegExp; paramNames: string[]; route: Route; area: Area };

/** Turns `/pet/{petId}` into a regular expression capturing one raw path segment per parameter. */
function compileRoutes(prefix: string, area: Area, routes: Route[]): CompiledRoute[] {
  return routes.map((route) => {
    const paramNames: string[] = [];
    const source = `${prefix}${route.path}`
      .split('/')
      .map((segment) => {
        const param = /^\{(\w+)\}$/.exec(segment);
        if (param?.[1] === undefined) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        paramNames.push(param[1]);
        return '([^/]+)';
      })
      .join('/');
    return { pattern: new RegExp(`^${source}$`), paramNames, route, area };
  });
}

// Order matters: the first route whose path matches decides, as literal paths precede templates.
const ROUTES: CompiledRoute[] = [
  ...compileRoutes(PETSTORE_PREFIX, 'petstore', petstoreRoutes),
  ...compileRoutes('', 'plants', plantRoutes),
];

/** An operation of a route with what its document demands of a request. */
type BoundOperation = { operation: Operation; contract: OperationContract };

/**
 * Pairs every route's operations with their document's operation. An operation the emulator
 * serves but its document does not describe stops the start: the documents are the contract.
 */
function bindContracts(contracts: Record<Area, AreaContract>): Map<Route, Partial<Record<string, BoundOperation>>> {
  const bound = new Map<Route, Partial<Record<string, BoundOperation>>>();
  for (const { route, area } of ROUTES) {
    const methods: Partial<Record<string, BoundOperation>> = {};
    for (const [method, operation] of Object.entries(route.operations)) {
      if (operation === undefined) continue;
      const contract = contracts[area].operation(route.path, method);
      if (contract === undefined)
        throw new Error(`emulator: ${method} ${route.path} is not described in schema/${area}.openapi.yaml`);
      methods[method] = { operation, contract };
    }
    bound.set(route, methods);
  }
  return bound;
}

function errorReply(error: HttpError): Reply {
  const reply = jsonReply(toJson(error.payload), error.status);
  return { ...reply, headers: { ...reply.headers, ...error.headers } };
}

function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    // A malformed escape is passed on as sent, so the handler's own check reports it.
    return raw;
  }
}

/** Routes one fully read request to its operation and turns every failure into a reply. */
function dispatch(
  record: RecordedRequest,
  body: Buffer,
  store: Store,
  bound: Map<Route, Partial<Record<string, BoundOperation>>>,
): Reply {
  const match = ROUTES.map((compiled) => ({ compiled, groups: compiled.pattern.exec(record.path) })).find(
    (candidate) => candidate.groups !== null,
  );
  if (match === undefined || match.groups === null) return errorReply(apiError(404, 'HTTP 404 Not Found'));
  const { compiled, groups } = match;
  const target = bound.get(compiled.route)?.[record.method];
  if (target === undefined) {
    const allow = Object.keys(compiled.route.operations).join(', ');
    return errorReply(apiError(405, 'HTTP 405 Method Not Allowed', { allow }));
  }
  // Any non-empty credential is accepted: the emulator proves that the gateway forwards
  // credentials, not that they are valid.
  const credentialError = target.contract.checkCredential(record.headers);
  if (credentialError !== undefined) return errorReply(credentialError);
  const params: Record<string, string> = {};
  compiled.paramNames.forEach((name, index) => {
    params[name] = decodeSegment(groups[index + 1] ?? '');
  });
  const query = new URLSearchParams(record.query);
  const invalid = target.contract.validate({ params, query, headers: record.headers, body });
  if (invalid !== undefined) return errorReply(invalid);
  try {
    return target.operation.handle({
      method: record.method,
      params,
      query,
      headers: record.headers,
      body,
      store,
    });
  } catch (error) {
    if (error instanceof HttpError) return errorReply(error);
    // A bug in the emulator must show up as the upstream's generic 500, not take the process down.
    console.error('emulator: unexpected error while handling', record.method, record.path, error);
    return errorReply(apiError(500, 'There was an error processing your request.'));
  }
}

/**
 * Starts the emulator of both REST areas on a real HTTP port, seeded like
 * the public demo.
 *
 * @param options listening address and artificial latency; see {@link EmulatorOptions}.
 * @returns the running emulator with its base URLs, the request log and controls.
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const bound = bindContracts(await loadContracts());
  const store = new Store();
  const server = await startRecordingServer({
    name: 'emulator',
    ...options,
    answer: (record, body) => dispatch(record, body, store, bound),
    fallback: () => errorReply(apiError(500, 'There was an error processing your request.')),
    reset: () => store.reset(),
  });
  // Assigned onto the server itself: a spread would freeze its live `maxInFlight` getter.
  return Object.assign(server, { petstoreUrl: `${server.origin}${PETSTORE_PREFIX}`, plantsUrl: server.origin });
}
