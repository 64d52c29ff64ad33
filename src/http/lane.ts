/**
 * The gateway's HTTP front. The common request (a query or mutation sent as a JSON POST, or a
 * query sent as a GET) is read here from node:http and answered here, while what lies between
 * runs through yoga's own envelop (`yoga.getEnveloped`): its parser and validation cache, every
 * plugin's onParse, onValidate, onContextBuilding and onExecute hook, its context factory and its
 * executor. No Fetch `Request` or `Response` is built for it, nor are yoga's request hooks run
 * through yoga's pipeline: on this path that cost more CPU than the rest of the request together
 * (docs/architecture.md, "One request pipeline"). The lane calls the `onParams` and
 * `onResultProcess` hooks its table says it calls (the response cache's lookup, redaction, the
 * observer), and does the work of every other request hook the way the table says
 * (src/http/plugin-table.ts); a plugin, hook or option the table does not cover sends every
 * request to yoga.
 *
 * Everything else goes to yoga, whole: GraphiQL, uploads, batches, automatic persisted queries,
 * CORS preflights, other content types, and every request the lane finds unusual once it has read
 * it (a body that is not JSON, a document that does not parse or validate, a GET mutation, a
 * document using @defer or @stream, whose answer yoga streams part by part, written here as it
 * comes). test/http-differential.test.ts checks that both paths answer alike.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { getCORSHeadersByRequestAndOptions, sendNodeResponse } from '@whatwg-node/server';
import {
  getOperationAST,
  OperationTypeNode,
  type DocumentNode,
  type OperationDefinitionNode,
  type GraphQLError,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import type { GraphQLParams, Plugin, YogaServerInstance } from 'graphql-yoga';
import type { NamedPlugin } from '../plugins/named.js';
import type { GraphQLContext } from '../context.js';
import type { HeaderSource } from '../credentials.js';
import type { RequestObservations } from '../observability/index.js';
import type { OperationRecord, RequestRecord } from '../observability/request-context.js';
import { usesIncrementalDelivery } from '../plugins/incremental-delivery.js';
import { valueNestsDeeper } from '../security/input-depth.js';
import { bodyText, canonicalMediaType, declaredLength } from '../security/request-body.js';
import { trustedDocument, type TrustedDocuments } from '../security/trusted-documents.js';
import { RATE_LIMIT_CHECKED, refusalError, type RateLimiter, type RateLimitRefusal } from '../security/rate-limit.js';
import { CSRF_HEADERS } from '../security/cross-site.js';
import { writeInternalError } from '../internal-error.js';
import { setRequestId } from '../observability/request-context.js';
import { encodeAnswer } from '../plugins/compression.js';
import { pluginsOf, readPluginTable, servedOptions, type YogaOptions } from './plugin-table.js';
import { resultBody, resultStatus, type ResultMediaType } from './result.js';

/** A node:http request listener. */
export type HttpHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** What the lane is built with. */
export type LaneOptions = {
  yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>;
  /**
   * the options yoga was created with: the lane serves only what its table says it can of them
   * (src/http/plugin-table.ts), and masks failures and sends CORS headers by the same ones
   */
  yogaOptions: YogaOptions;
  /**
   * the plugins the gateway gave yoga, each under its name in the lane's table: the lane serves
   * nothing while one of them has a request hook its row does not cover
   */
  plugins: readonly NamedPlugin[];
  /** logs an error that was masked (unexpected: with its stack, server-side) */
  logMasked(error: unknown): void;
  observe: RequestObservations;
  /** undefined when rate limits are off */
  rateLimiter: RateLimiter | undefined;
  /** largest body of a JSON POST, in bytes */
  maxBodyBytes: number;
  /** deepest nesting of the variables the lane serves itself (INPUT_MAX_DEPTH); deeper ones are yoga's to refuse */
  maxInputDepth: number;
  /**
   * RESPONSE_COMPRESSION_MIN_BYTES: answers larger than this are compressed for clients that ask, as
   * yoga's are (src/plugins/compression.ts); 0: never
   */
  compressionMinBytes: number;
  /** the trusted documents manifest, with TRUSTED_DOCUMENTS: then the lane serves only its documents, by hash */
  trustedDocuments: TrustedDocuments | undefined;
  /** a start-up line for the log (debug level) */
  notice(message: string): void;
};

/** node's headers as a {@link HeaderSource}: names are already lower case, repeated ones joined as Fetch does. */
function headerReader(headers: IncomingHttpHeaders): HeaderSource {
  return {
    get(name) {
      const value = headers[name];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

type Params = {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
  extensions?: Record<string, unknown> | null;
};

const PARAM_NAMES = new Set(['query', 'variables', 'operationName', 'extensions']);

/** A request as whatwg-node's CORS function reads it: its method and headers, the only parts it reads. */
function headerReaderRequest(request: IncomingMessage): Request {
  return fetchLike(request.method ?? 'GET', request.url ?? '/', headerReader(request.headers));
}

/**
 * A parsed body or query string the lane serves itself, or undefined when yoga must look at it.
 * With a trusted documents manifest, only a request naming one of its documents by hash is
 * served, with that document's text; without, only a request carrying its document and no
 * extensions (a persisted query's hash is for yoga's plugins).
 */
function laneParams(value: unknown, maxDepth: number, trusted: TrustedDocuments | undefined): Params | undefined {
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
function acceptedMediaType(accept: string | undefined): ResultMediaType | undefined {
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

/** True for the media types of yoga's streamed answers: multipart/mixed and server-sent events. */
function isStreamed(contentType: string | null): boolean {
  return (
    contentType !== null && (contentType.startsWith('multipart/mixed') || contentType.startsWith('text/event-stream'))
  );
}

/** True for `application/json`, in any spelling, with no charset or UTF-8. */
function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  if (contentType === 'application/json') return true;
  const [type, ...parameters] = canonicalMediaType(contentType).split('; ');
  return (
    type === 'application/json' &&
    parameters.every((parameter) => !parameter.startsWith('charset=') || parameter.toLowerCase() === 'charset=utf-8')
  );
}

/** Builds the gateway's node:http request listener. */
export function createHttpHandler(options: LaneOptions): { handler: HttpHandler; yogaOnly: readonly string[] } {
  const lane = new HttpLane(options);
  return { handler: lane.handler, yogaOnly: lane.yogaOnly };
}

/**
 * The lane: its options, the hooks it calls, and one short method per step of a request.
 * {@link HttpLane.handler} is bound once, at construction; nothing is built per request but
 * what the steps themselves need.
 */
class HttpLane {
  /** the node:http request listener: the lane's own requests are served, the rest go to yoga */
  readonly handler: HttpHandler;
  readonly #options: LaneOptions;
  readonly #yoga: LaneOptions['yoga'];
  readonly #observe: RequestObservations;
  readonly #endpoint: string;
  /** why yoga serves every request (src/http/plugin-table.ts); empty, the lane serves plain requests */
  readonly yogaOnly: readonly string[];
  readonly #serves: boolean;
  readonly #csrfPrevention: boolean;
  readonly #maskError: ReturnType<typeof servedOptions>['maskError'];
  readonly #cors: ReturnType<typeof servedOptions>['cors'];
  /** the `onParams` and `onResultProcess` hooks the lane calls itself (src/http/plugin-table.ts) */
  readonly #paramsHooks: NonNullable<Plugin['onParams']>[];
  readonly #resultHooks: NonNullable<Plugin['onResultProcess']>[];
  readonly #waitUntil: LaneContext['waitUntil'];
  // yoga's members the lane uses per request, read once: each read goes through its adapter's Proxy.
  readonly #getEnveloped: LaneOptions['yoga']['getEnveloped'];
  readonly #fetchAPI: LaneOptions['yoga']['fetchAPI'];
  readonly #handleParams: LaneOptions['yoga']['handleParams'];

  constructor(options: LaneOptions) {
    this.#options = options;
    this.#yoga = options.yoga;
    this.#observe = options.observe;
    this.#endpoint = options.yoga.graphqlEndpoint;
    const table = readPluginTable(options.plugins, options.yogaOptions, pluginsOf(options.yoga));
    this.yogaOnly = table.yogaOnly;
    this.#paramsHooks = table.paramsHooks;
    this.#resultHooks = table.resultHooks;
    this.#csrfPrevention = table.csrfPrevention;
    ({ maskError: this.#maskError, cors: this.#cors } = servedOptions(options.yogaOptions));
    this.#getEnveloped = options.yoga.getEnveloped;
    this.#fetchAPI = options.yoga.fetchAPI;
    this.#handleParams = options.yoga.handleParams;
    this.#waitUntil = (promise) => void promise?.catch((error: unknown) => options.logMasked(error));
    this.#serves = this.yogaOnly.length === 0;
    if (!this.#serves) options.notice(`HTTP lane off, yoga serves every request: ${this.yogaOnly.join(', ')}`);
    this.handler = this.handle.bind(this);
  }

  /** Serves the request in the lane when it is one the lane serves, judged from its head; else hands it to yoga. */
  private handle(request: IncomingMessage, response: ServerResponse): void {
    const options = this.#options;
    const url = request.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    const method = request.method;
    if (!this.#serves || path !== this.#endpoint || (method !== 'POST' && method !== 'GET'))
      return this.toYoga(request, response);
    const mediaType = acceptedMediaType(request.headers.accept);
    if (mediaType === undefined) return this.toYoga(request, response);
    // A revalidation: the response cache's plugin may answer it 304 (src/plugins/response-cache.ts).
    if (request.headers['if-none-match'] !== undefined) return this.toYoga(request, response);
    if (method === 'POST') {
      if (!isJsonContentType(request.headers['content-type'])) return this.toYoga(request, response);
      // A body the limit refuses, or a bad length, is refused by yoga's plugins before it is read.
      if (declaredLength(request.headers['content-length'], options.maxBodyBytes) !== 'acceptable')
        return this.toYoga(request, response);
    } else {
      // GraphiQL is for browsers; a GET without the CSRF header is refused by yoga's plugin.
      if (queryAt < 0 || (request.headers.accept ?? '').includes('text/html')) return this.toYoga(request, response);
      if (this.#csrfPrevention && !CSRF_HEADERS.some((name) => request.headers[name] !== undefined))
        return this.toYoga(request, response);
    }
    this.serve(request, response, method, mediaType, queryAt).catch((error: unknown) =>
      this.failed(request, response, error),
    );
  }

  /**
   * A failure outside GraphQL execution (a module that did not load, a plugin hook that threw, an
   * answer that could not be written): one log line with its detail, and the masked 500.
   */
  private failed(request: IncomingMessage, response: ServerResponse, error: unknown): void {
    const observe = this.#observe;
    const url = request.url ?? '/';
    const path = url.includes('?') ? url.slice(0, url.indexOf('?')) : url;
    const record = observe.beginRequest(request.method ?? 'GET', path, headerReader(request.headers), () => ({
      ...request.headers,
    }));
    observe.logging(record, () => this.#options.logMasked(error));
    if (writeInternalError(response, record.id)) observe.responseReady(record, 500);
  }

  /**
   * Serves a request the lane does not serve, unread, with yoga's own rate limit check (the lane has
   * made none): as `yoga.handle` would, except that a failure yoga does not answer itself (one
   * outside GraphQL execution) gets the masked 500, not whatwg-node's text/plain stack trace.
   */
  private toYoga(request: IncomingMessage, response: ServerResponse): void {
    void Promise.resolve()
      .then(() => this.#yoga.handleNodeRequestAndResponse(request, response, { req: request, res: response }))
      .then((answer) => sendNodeResponse(answer, response, request, true))
      .catch((error: unknown) => this.failed(request, response, error));
  }

  /** Serves a request the lane has read but does not serve, through yoga, with its body as read. */
  private async readToYoga(
    request: IncomingMessage,
    response: ServerResponse,
    body: string | Buffer | undefined,
  ): Promise<void> {
    const yoga = this.#yoga;
    const url = `http://${request.headers.host ?? 'localhost'}${request.url ?? '/'}`;
    const headers = new yoga.fetchAPI.Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || name === 'content-length' || name === 'transfer-encoding') continue;
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const fetchRequest = new yoga.fetchAPI.Request(url, {
      method: request.method ?? 'GET',
      headers,
      ...(body !== undefined ? { body: typeof body === 'string' ? body : new Uint8Array(body) } : {}),
    });
    const answer = await yoga.handleRequest(fetchRequest, { req: request, res: response, [RATE_LIMIT_CHECKED]: true });
    // An incremental answer (@defer, @stream) is written part by part as yoga makes them, not gathered.
    if (isStreamed(answer.headers.get('content-type'))) return sendNodeResponse(answer, response, request, true);
    const payload = Buffer.from(await answer.arrayBuffer());
    const outgoing: Record<string, string> = {};
    answer.headers.forEach((value, name) => (outgoing[name] = value));
    outgoing['content-length'] = String(payload.byteLength);
    response.writeHead(answer.status, outgoing);
    response.end(payload);
  }

  /** Writes an answer, with the request id, compressed if it is large and the client asks; and logs it. */
  private send(
    response: ServerResponse,
    record: RequestRecord,
    status: number,
    mediaType: ResultMediaType,
    body: string,
    extra?: Record<string, string>,
  ): void {
    const answer = encodeAnswer(body, response.req.headers['accept-encoding'], this.#options.compressionMinBytes);
    const headers: Record<string, string> = {
      'content-type': `${mediaType}; charset=utf-8`,
      'content-length': String(answer.length),
      ...answer.headers,
      ...extra,
    };
    setRequestId(headers, record.id);
    const cors =
      this.#cors === false ? null : getCORSHeadersByRequestAndOptions(headerReaderRequest(response.req), this.#cors);
    // Set as whatwg-node's CORS plugin sets them on yoga's answers: each replaces a header of its name.
    if (cors !== null) for (const [name, value] of Object.entries(cors)) headers[name.toLowerCase()] = value;
    response.writeHead(status, headers);
    response.end(answer.body);
    this.#observe.responseReady(record, status);
  }

  /** Answers a request the rate limiter refused. */
  private refuse(
    request: IncomingMessage,
    response: ServerResponse,
    record: RequestRecord,
    mediaType: ResultMediaType,
    refusal: RateLimitRefusal,
  ): void {
    // Refused before the body is read, with the error yoga's path answers (the rate-limit plugin's).
    request.resume();
    this.#observe.refused(record, refusal.code);
    const result = { errors: [refusalError(refusal)] };
    const { status, headers } = resultStatus(result, mediaType);
    this.send(response, record, status, mediaType, resultBody(result), headers);
  }

  /** Serves a request the lane took on from its head: read, checked against the rate limit, its parameters found, operated. */
  private async serve(
    request: IncomingMessage,
    response: ServerResponse,
    method: 'GET' | 'POST',
    mediaType: ResultMediaType,
    queryAt: number,
  ): Promise<void> {
    const options = this.#options;
    const observe = this.#observe;
    const headers = headerReader(request.headers);
    const path = queryAt < 0 ? (request.url ?? '/') : (request.url ?? '/').slice(0, queryAt);
    const lookalike = fetchLike(method, path, headers);
    const record = observe.beginRequest(method, path, headers, () => ({ ...request.headers }), lookalike);
    if (options.rateLimiter) {
      const refusal = await options.rateLimiter.check(request.socket.remoteAddress ?? 'unknown', headers);
      if (refusal) return this.refuse(request, response, record, mediaType, refusal);
    }
    let body: string | undefined;
    let parsed: unknown;
    if (method === 'POST') {
      const read = await readBody(request, options.maxBodyBytes);
      // Too large, or not UTF-8: yoga's plugins refuse it, from the bytes read.
      if (typeof read !== 'string') return void (await this.readToYoga(request, response, read));
      body = read;
      parsed = parseJson(body);
    } else {
      parsed = queryParams((request.url ?? '').slice(queryAt + 1));
    }
    // Variables nested too deep are refused by yoga's plugin, before anything walks them.
    const params = laneParams(parsed, options.maxInputDepth, options.trustedDocuments);
    if (!params) return void (await this.readToYoga(request, response, body));
    // yoga's initial context, as yoga makes it: the server's context, the request and its
    // parameters. yoga's envelop extends it, in place, into the operation's GraphQL context.
    const context: LaneContext = {
      req: request,
      res: response,
      waitUntil: this.#waitUntil,
      request: lookalike,
      params,
    };
    await this.operate(response, record, context, mediaType, body);
  }

  /**
   * Answers one operation: its parameters through the `onParams` hooks the lane calls (a cached
   * answer may end it there), its document parsed and validated, executed, its result through the
   * `onResultProcess` hooks the lane calls, answered.
   */
  private async operate(
    response: ServerResponse,
    record: RequestRecord,
    context: LaneContext,
    mediaType: ResultMediaType,
    body: string | undefined,
  ): Promise<void> {
    const observe = this.#observe;
    // Found by the hooks as yoga's path finds its own: the record by the request (bound as it
    // began), the operation by the context.
    const operation = observe.beginOperation(record, context);
    const hooked = this.paramsHooks(context);
    // Awaited only when a hook was asynchronous: a promise per await is a fair share of a cheap request.
    const early = hooked instanceof Promise ? await hooked : hooked;
    const enveloped = this.#getEnveloped(context);
    const method = context.request.method === 'GET' ? 'GET' : 'POST';
    const document = early ? undefined : operable(enveloped, context.params, method);
    // A document that does not parse or validate, or that yoga must refuse: yoga answers it, as its own.
    if (!early && document === undefined) return void (await this.readToYoga(response.req, response, body));
    const executed = early ?? (await this.execute(enveloped, document as DocumentNode, context.params, operation));
    operation.ended ??= performance.now();
    const processed = this.resultHooks(context, executed);
    const result = processed instanceof Promise ? await processed : processed;
    const { status, headers: extra } = resultStatus(result, mediaType);
    this.send(response, record, status, mediaType, resultBody(result), extra);
  }

  /**
   * Calls the `onParams` hooks the table says it calls (`THE_LANE_CALLS_IT`, src/http/plugin-table.ts), in the plugins'
   * order, as yoga calls them: each may change the parameters (`context.params`) or set the result
   * (a cached answer), which is returned.
   */
  private paramsHooks(
    context: LaneContext,
    start = 0,
    found?: ExecutionResult,
  ): ExecutionResult | undefined | Promise<ExecutionResult | undefined> {
    let result = found;
    const hooks = this.#paramsHooks;
    // One payload for the hooks of this request, read afresh by each (yoga makes one per hook).
    const payload: Parameters<NonNullable<Plugin['onParams']>>[0] = {
      // JSON's null operationName as yoga's parser leaves it; the type says undefined.
      params: context.params as GraphQLParams,
      request: context.request,
      context,
      fetchAPI: this.#fetchAPI,
      paramsHandler: this.#handleParams,
      setParams: (params) => void ((payload.params = params), (context.params = params as Params)),
      setParamsHandler: refuseParamsHandler,
      setResult: (value) => void (result = value as ExecutionResult),
    };
    for (let index = start; index < hooks.length; index++) {
      const done = hooks[index]?.(payload);
      if (done instanceof Promise) return done.then(() => this.paramsHooks(context, index + 1, result));
    }
    return result;
  }

  /**
   * Calls the `onResultProcess` hooks the table says it calls (`THE_LANE_CALLS_IT`, src/http/plugin-table.ts), in the
   * plugins' order, as yoga calls them: each may replace the result (codes, redaction), and the
   * observer records it.
   */
  private resultHooks(
    context: LaneContext,
    executed: ExecutionResult,
    start = 0,
  ): ExecutionResult | Promise<ExecutionResult> {
    const hooks = this.#resultHooks;
    // One payload for the hooks of this request, as for the parameters' hooks.
    const payload: Parameters<NonNullable<Plugin['onResultProcess']>>[0] = {
      request: context.request,
      result: executed,
      setResult: (value) => void (payload.result = value),
      resultProcessor: undefined,
      setResultProcessor: refuseResultProcessor,
      acceptableMediaTypes: NO_MEDIA_TYPES,
      serverContext: context,
    };
    for (let index = start; index < hooks.length; index++) {
      const done = hooks[index]?.(payload);
      if (done instanceof Promise)
        return done.then(() => this.resultHooks(context, payload.result as ExecutionResult, index + 1));
    }
    return payload.result as ExecutionResult;
  }

  /**
   * Runs an operation through yoga's envelop: its context (yoga's context factory and every
   * plugin's `onContextBuilding`) and its execution (yoga's executor and every `onExecute`, the
   * masking of errors among them). A failure outside execution is masked as yoga masks it.
   */
  private async execute(
    enveloped: Enveloped,
    document: DocumentNode,
    params: Params,
    operation: OperationRecord,
  ): Promise<ExecutionResult> {
    try {
      const built = enveloped.contextFactory() as Record<string, unknown> | Promise<Record<string, unknown>>;
      const contextValue = built instanceof Promise ? await built : built;
      const executed = (await enveloped.execute({
        schema: enveloped.schema as GraphQLSchema,
        document,
        contextValue,
        variableValues: params.variables ?? undefined,
        operationName: params.operationName ?? undefined,
      })) as ExecutionResult | AsyncIterable<unknown>;
      if (Symbol.asyncIterator in executed) throw new Error('a query or mutation answered with a stream');
      return executed;
    } catch (error) {
      return { errors: [this.#maskError(error, 'Unexpected error.')] };
    } finally {
      operation.ended = performance.now();
    }
  }
}

/** What a hook the lane calls may not do (src/http/plugin-table.ts, THE_LANE_CALLS_IT). */
function refuseParamsHandler(): never {
  throw new Error('a plugin whose onParams the lane calls may not replace the params handler');
}
function refuseResultProcessor(): never {
  throw new Error('a plugin whose onResultProcess the lane calls may not choose the result processor');
}
const NO_MEDIA_TYPES: string[] = [];

/** yoga's initial context of an operation the lane serves; its envelop extends it into the GraphQL context. */
type LaneContext = {
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
function fetchLike(method: string, url: string, headers: HeaderSource): Request {
  return { method, url, headers } as Request;
}

/** What `yoga.getEnveloped` gives for one operation: its parse, validate, context and execute, with every plugin's hooks. */
type Enveloped = ReturnType<LaneOptions['yoga']['getEnveloped']>;

/**
 * The operation's document, parsed and validated through yoga's envelop (its parser and
 * validation cache, its limits, its rules); undefined when it does not parse or validate, or is
 * not one the lane executes: yoga answers those.
 */
function operable(enveloped: Enveloped, params: Params, method: 'GET' | 'POST'): DocumentNode | undefined {
  let document: DocumentNode;
  try {
    document = enveloped.parse(params.query) as DocumentNode;
  } catch {
    return undefined;
  }
  if ((enveloped.validate(enveloped.schema, document) as readonly GraphQLError[]).length > 0) return undefined;
  // @defer and @stream are answered part by part, in the media type the Accept header picks:
  // yoga's result processors do it, so yoga answers them, whatever the Accept (docs/graph.md).
  if (usesIncrementalDelivery(params.query, document)) return undefined;
  return servableOperation(document, params.operationName, method) ? document : undefined;
}

/** The parsed JSON of a body, or undefined when it is not JSON. */
function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** The operation the lane executes: a query, or a mutation sent as a POST; else undefined (yoga's). */
function servableOperation(
  document: DocumentNode,
  operationName: string | null | undefined,
  method: 'GET' | 'POST',
): OperationDefinitionNode | undefined {
  const definition = getOperationAST(document, operationName ?? undefined);
  return definition &&
    (definition.operation === OperationTypeNode.QUERY ||
      (definition.operation === OperationTypeNode.MUTATION && method === 'POST'))
    ? definition
    : undefined;
}

/**
 * The GraphQL parameters of a GET's query string, or undefined when yoga must look at them (variables
 * that are not JSON).
 */
function queryParams(search: string): unknown {
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
function readBody(request: IncomingMessage, limit: number): Promise<string | Buffer> {
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
