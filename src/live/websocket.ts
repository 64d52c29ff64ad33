/**
 * The graphql-ws WebSocket transport (`ws://…/graphql`, subprotocol `graphql-transport-ws`) on
 * the gateway's node:http server, for live queries (and any query or mutation). Each operation
 * runs through yoga's envelop (parse, validate with every limit, context, execute with masking),
 * as the HTTP lane does; what yoga's request hooks do on HTTP is done here: the rate limit is
 * checked for each operation. Credentials come from the upgrade request's headers or, as browsers
 * cannot set those on a WebSocket, from the `connection_init` payload (`authorization`, `api_key`).
 * With TRUSTED_DOCUMENTS set, no operation runs over the WebSocket (server-sent events do).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, type DocumentNode, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import { isAsyncIterable, type YogaServerInstance } from 'graphql-yoga';
import type { OperationResult } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { CREDENTIAL_HEADERS, type HeaderSource } from '../credentials.js';
import { codedError } from '../errors.js';
import type { GraphQLContext } from '../context.js';
import { refusalError, type RateLimiter } from '../security/rate-limit.js';
import { STREAMED } from './plugin.js';

/** What the WebSocket transport is built with. */
export type WebSocketOptions = {
  yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>;
  /** the GraphQL endpoint's path */
  path: string;
  /** largest message accepted, in bytes (REQUEST_MAX_BYTES) */
  maxPayloadBytes: number;
  /** the gateway's rate limits (undefined when off), checked for each operation */
  rateLimiter: RateLimiter | undefined;
  /** TRUSTED_DOCUMENTS is set: no operation runs here */
  trustedDocumentsOnly: boolean;
  /**
   * the errors of a streamed answer's parts (@defer, @stream) masked as yoga's path masks them
   * (src/plugins/incremental-delivery.ts): this transport runs no request hook of yoga's
   */
  maskParts: (stream: AsyncIterable<unknown>, args: ExecutionArgs) => AsyncIterable<unknown>;
};

/** The transport on one server: closing it closes every WebSocket (1001, going away). */
export type WebSocketTransport = { close(): Promise<void> };

/**
 * The headers of an operation: the upgrade request's, and the credentials the client put in
 * `connection_init` (which take precedence: they are what a browser can send).
 */
function operationHeaders(request: IncomingMessage, connectionParams: unknown): HeaderSource {
  const params = (typeof connectionParams === 'object' && connectionParams !== null ? connectionParams : {}) as Record<
    string,
    unknown
  >;
  const credentials = new Set<string>(Object.values(CREDENTIAL_HEADERS));
  return {
    get(name) {
      const lower = name.toLowerCase();
      const given = credentials.has(lower) ? params[lower] : undefined;
      if (typeof given === 'string') return given;
      const value = request.headers[lower];
      return Array.isArray(value) ? value.join(', ') : (value ?? null);
    },
  };
}

type Enveloped = ReturnType<WebSocketOptions['yoga']['getEnveloped']>;

/** Serves graphql-ws on `server`'s upgrades to `options.path`; other upgrades are refused. */
export function serveWebSocket(server: Server, options: WebSocketOptions): WebSocketTransport {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: options.maxPayloadBytes });
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== options.path) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    sockets.handleUpgrade(request, socket, head, (websocket) => sockets.emit('connection', websocket, request));
  };
  server.on('upgrade', onUpgrade);
  // Each operation's enveloped functions, by its context.
  const enveloped = new WeakMap<object, Enveloped>();
  const run = (args: ExecutionArgs, step: 'execute' | 'subscribe') => {
    const found = enveloped.get(args.contextValue as object);
    if (found === undefined) throw new Error('an operation without its enveloped context');
    const result = Promise.resolve(found[step](args) as unknown);
    return result.then((value) => (isAsyncIterable(value) ? options.maskParts(value, args) : value)) as OperationResult;
  };
  const served = useServer(
    {
      // Never an internal error's message to the client.
      isProd: true,
      execute: (args) => run(args, 'execute'),
      subscribe: (args) => run(args, 'subscribe'),
      onSubscribe: async (context, _id, payload) => {
        const request = context.extra.request;
        const headers = operationHeaders(request, context.connectionParams);
        const refusal = await refusedOperation(options, request, headers);
        if (refusal !== undefined) return [refusal];
        const operation = options.yoga.getEnveloped({
          req: request,
          request: { headers },
          params: payload,
          [STREAMED]: true,
        });
        let document: DocumentNode;
        try {
          document = operation.parse(payload.query) as DocumentNode;
        } catch (error) {
          return [error instanceof GraphQLError ? error : codedError('BAD_REQUEST', 'The document cannot be read')];
        }
        const errors = operation.validate(operation.schema, document) as readonly GraphQLError[];
        if (errors.length > 0) return errors;
        const contextValue = (await operation.contextFactory()) as object;
        enveloped.set(contextValue, operation);
        return {
          schema: operation.schema as GraphQLSchema,
          document,
          contextValue,
          variableValues: payload.variables ?? undefined,
          operationName: payload.operationName ?? undefined,
        };
      },
    },
    sockets,
  );
  return {
    close: async () => {
      server.off('upgrade', onUpgrade);
      await served.dispose();
    },
  };
}

/** Why an operation is refused before it is read: trusted documents only, or the rate limit. */
async function refusedOperation(
  options: WebSocketOptions,
  request: IncomingMessage,
  headers: HeaderSource,
): Promise<GraphQLError | undefined> {
  if (options.trustedDocumentsOnly)
    return codedError(
      'TRUSTED_DOCUMENT_REQUIRED',
      'Only trusted documents run on this gateway, and not over the WebSocket: send them over HTTP',
    );
  if (options.rateLimiter === undefined) return undefined;
  const refusal = await options.rateLimiter.check(request.socket.remoteAddress ?? 'unknown', headers);
  return refusal === undefined ? undefined : refusalError(refusal);
}
