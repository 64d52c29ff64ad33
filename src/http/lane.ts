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
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DocumentNode } from 'graphql';
import type { YogaServerInstance } from 'graphql-yoga';
import type { GraphQLContext } from '../context.js';
import type { RequestObservations } from '../observability/index.js';
import type { RequestRecord } from '../observability/request-context.js';
import type { NamedPlugin } from '../plugins/named.js';
import { CSRF_HEADERS } from '../security/cross-site.js';
import { refusalError, type RateLimiter, type RateLimitRefusal } from '../security/rate-limit.js';
import { declaredLength } from '../security/request-body.js';
import type { TrustedDocuments } from '../security/trusted-documents.js';
import { AnswerWriter } from './answer.js';
import { CalledHooks } from './hooks.js';
import { execute, operable } from './operation.js';
import { pluginsOf, readPluginTable, servedOptions, type YogaOptions } from './plugin-table.js';
import {
  acceptedMediaType,
  fetchLike,
  headerReader,
  isJsonContentType,
  laneParams,
  parseJson,
  queryParams,
  readBody,
  type LaneContext,
} from './request.js';
import { resultBody, resultStatus, type ResultMediaType } from './result.js';
import { ToYoga } from './to-yoga.js';

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

/** Builds the gateway's node:http request listener. */
export function createHttpHandler(options: LaneOptions): { handler: HttpHandler; yogaOnly: readonly string[] } {
  const lane = new HttpLane(options);
  return { handler: lane.handler, yogaOnly: lane.yogaOnly };
}

/**
 * The lane: what it read of its table at start, and one short method per step of a request; the
 * hooks it calls (hooks.ts), the hand-overs to yoga (to-yoga.ts) and the writing of its answers
 * (answer.ts) are modules of their own. {@link HttpLane.handler} is bound once, at construction;
 * nothing is built per request but what the steps themselves need.
 */
class HttpLane {
  /** the node:http request listener: the lane's own requests are served, the rest go to yoga */
  readonly handler: HttpHandler;
  /** why yoga serves every request (src/http/plugin-table.ts); empty, the lane serves plain requests */
  readonly yogaOnly: readonly string[];
  readonly #options: LaneOptions;
  readonly #observe: RequestObservations;
  readonly #endpoint: string;
  readonly #serves: boolean;
  readonly #csrfPrevention: boolean;
  readonly #maskError: ReturnType<typeof servedOptions>['maskError'];
  readonly #hooks: CalledHooks;
  readonly #toYoga: ToYoga;
  readonly #answers: AnswerWriter;
  readonly #waitUntil: LaneContext['waitUntil'];
  // yoga's member the lane uses per request, read once: each read goes through its adapter's Proxy.
  readonly #getEnveloped: LaneOptions['yoga']['getEnveloped'];

  constructor(options: LaneOptions) {
    const { yoga, observe } = options;
    this.#options = options;
    this.#observe = observe;
    this.#endpoint = yoga.graphqlEndpoint;
    const table = readPluginTable(options.plugins, options.yogaOptions, pluginsOf(yoga));
    this.yogaOnly = table.yogaOnly;
    this.#serves = table.yogaOnly.length === 0;
    this.#csrfPrevention = table.csrfPrevention;
    this.#hooks = new CalledHooks(yoga, { params: table.paramsHooks, results: table.resultHooks });
    const { maskError, cors } = servedOptions(options.yogaOptions);
    this.#maskError = maskError;
    this.#answers = new AnswerWriter({ cors, compressionMinBytes: options.compressionMinBytes, observe });
    this.#toYoga = new ToYoga(yoga, observe, (error) => options.logMasked(error));
    this.#getEnveloped = options.yoga.getEnveloped;
    this.#waitUntil = (promise) => void promise?.catch((error: unknown) => options.logMasked(error));
    if (!this.#serves) options.notice(`HTTP lane off, yoga serves every request: ${this.yogaOnly.join(', ')}`);
    this.handler = this.handle.bind(this);
  }

  /** Serves the request in the lane when it is one the lane serves, judged from its head; else hands it to yoga. */
  private handle(request: IncomingMessage, response: ServerResponse): void {
    const url = request.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    const method = request.method;
    if (!this.#serves || path !== this.#endpoint || (method !== 'POST' && method !== 'GET'))
      return this.#toYoga.unread(request, response);
    const mediaType = acceptedMediaType(request.headers.accept);
    if (mediaType === undefined) return this.#toYoga.unread(request, response);
    // A revalidation: the response cache's plugin may answer it 304 (src/plugins/response-cache.ts).
    if (request.headers['if-none-match'] !== undefined) return this.#toYoga.unread(request, response);
    if (method === 'POST') {
      if (!isJsonContentType(request.headers['content-type'])) return this.#toYoga.unread(request, response);
      // A body the limit refuses, or a bad length, is refused by yoga's plugins before it is read.
      if (declaredLength(request.headers['content-length'], this.#options.maxBodyBytes) !== 'acceptable')
        return this.#toYoga.unread(request, response);
    } else {
      // GraphiQL is for browsers; a GET without the CSRF header is refused by yoga's plugin.
      if (queryAt < 0 || (request.headers.accept ?? '').includes('text/html'))
        return this.#toYoga.unread(request, response);
      if (this.#csrfPrevention && !CSRF_HEADERS.some((name) => request.headers[name] !== undefined))
        return this.#toYoga.unread(request, response);
    }
    this.serve(request, response, method, mediaType, queryAt).catch((error: unknown) =>
      this.#toYoga.failed(request, response, error),
    );
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
    this.#answers.send(response, record, status, mediaType, resultBody(result), headers);
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
    const headers = headerReader(request.headers);
    const path = queryAt < 0 ? (request.url ?? '/') : (request.url ?? '/').slice(0, queryAt);
    const lookalike = fetchLike(method, path, headers);
    const record = this.#observe.beginRequest(method, path, headers, () => ({ ...request.headers }), lookalike);
    if (options.rateLimiter) {
      const refusal = await options.rateLimiter.check(request.socket.remoteAddress ?? 'unknown', headers);
      if (refusal) return this.refuse(request, response, record, mediaType, refusal);
    }
    let body: string | undefined;
    let parsed: unknown;
    if (method === 'POST') {
      const read = await readBody(request, options.maxBodyBytes);
      // Too large, or not UTF-8: yoga's plugins refuse it, from the bytes read.
      if (typeof read !== 'string') return void (await this.#toYoga.read(request, response, read));
      body = read;
      parsed = parseJson(body);
    } else {
      parsed = queryParams((request.url ?? '').slice(queryAt + 1));
    }
    // Variables nested too deep are refused by yoga's plugin, before anything walks them.
    const params = laneParams(parsed, options.maxInputDepth, options.trustedDocuments);
    if (!params) return void (await this.#toYoga.read(request, response, body));
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
    // Found by the hooks as yoga's path finds its own: the record by the request (bound as it
    // began), the operation by the context.
    const operation = this.#observe.beginOperation(record, context);
    const hooked = this.#hooks.params(context);
    // Awaited only when a hook was asynchronous: a promise per await is a fair share of a cheap request.
    const early = hooked instanceof Promise ? await hooked : hooked;
    const enveloped = this.#getEnveloped(context);
    const method = context.request.method === 'GET' ? 'GET' : 'POST';
    const document = early ? undefined : operable(enveloped, context.params, method);
    // A document that does not parse or validate, or that yoga must refuse: yoga answers it, as its own.
    if (!early && document === undefined) return void (await this.#toYoga.read(response.req, response, body));
    const executed =
      early ?? (await execute(enveloped, document as DocumentNode, context.params, operation, this.#maskError));
    operation.ended ??= performance.now();
    const processed = this.#hooks.results(context, executed);
    const result = processed instanceof Promise ? await processed : processed;
    const { status, headers: extra } = resultStatus(result, mediaType);
    this.#answers.send(response, record, status, mediaType, resultBody(result), extra);
  }
}
