/**
 * The requests the HTTP front hands to yoga, whole: those it does not serve, judged from their
 * head (unread), and those it has read but leaves to yoga (with their body as read); and a
 * failure outside GraphQL execution, answered with the masked 500 rather than whatwg-node's
 * text/plain stack trace.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendNodeResponse } from '@whatwg-node/server';
import type { YogaServerInstance } from 'graphql-yoga';
import type { GraphQLContext } from '../context.js';
import { writeInternalError } from '../internal-error.js';
import type { RequestObservations } from '../observability/index.js';
import { RATE_LIMIT_CHECKED } from '../security/rate-limit.js';
import { headerReader } from './request.js';

/** yoga, as the front hands requests to it. */
export class ToYoga {
  readonly #yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>;
  readonly #observe: RequestObservations;
  readonly #logMasked: (error: unknown) => void;

  constructor(
    yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>,
    observe: RequestObservations,
    logMasked: (error: unknown) => void,
  ) {
    this.#yoga = yoga;
    this.#observe = observe;
    this.#logMasked = logMasked;
  }

  /**
   * Serves a request the lane does not serve, unread, with yoga's own rate limit check (the lane has
   * made none): as `yoga.handle` would, except that a failure yoga does not answer itself (one
   * outside GraphQL execution) gets the masked 500.
   */
  unread(request: IncomingMessage, response: ServerResponse): void {
    void Promise.resolve()
      .then(() => this.#yoga.handleNodeRequestAndResponse(request, response, { req: request, res: response }))
      .then((answer) => sendNodeResponse(answer, response, request, true))
      .catch((error: unknown) => this.failed(request, response, error));
  }

  /**
   * Serves a request the lane has read but does not serve, through yoga, with its body as read; its
   * rate limit was checked.
   */
  async read(request: IncomingMessage, response: ServerResponse, body: string | Buffer | undefined): Promise<void> {
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

  /**
   * A failure outside GraphQL execution (a module that did not load, a plugin hook that threw, an
   * answer that could not be written): one log line with its detail, and the masked 500.
   */
  failed(request: IncomingMessage, response: ServerResponse, error: unknown): void {
    const observe = this.#observe;
    const url = request.url ?? '/';
    const path = url.includes('?') ? url.slice(0, url.indexOf('?')) : url;
    const record = observe.beginRequest(request.method ?? 'GET', path, headerReader(request.headers), () => ({
      ...request.headers,
    }));
    observe.logging(record, () => this.#logMasked(error));
    if (writeInternalError(response, record.id)) observe.responseReady(record, 500);
  }
}

/** True for the media types of yoga's streamed answers: multipart/mixed and server-sent events. */
function isStreamed(contentType: string | null): boolean {
  return (
    contentType !== null && (contentType.startsWith('multipart/mixed') || contentType.startsWith('text/event-stream'))
  );
}
