/**
 * The `@live` query plugin: an operation `query @live { … }` sent over a stream (server-sent
 * events, multipart, or the graphql-ws WebSocket) is answered, then answered again each time
 * something it shows has changed (the store of @n1ru4l/in-memory-live-query-store runs it again
 * when one of its resource identifiers is invalidated: see index.ts for who invalidates).
 *
 * Every run gets fresh upstream clients, loaders and call budget (a DataLoader's cache would
 * otherwise answer the second run with the first run's data), its pollable reads recorded for
 * the poller. Envelop hooks only (onValidate, onExecute): the HTTP lane runs them as yoga does.
 */
import type { IncomingMessage } from 'node:http';
import type { InMemoryLiveQueryStore } from '@n1ru4l/in-memory-live-query-store';
import type { Plugin } from '@envelop/core';
import {
  getDirectiveValues,
  getOperationAST,
  GraphQLError,
  GraphQLDirective,
  Kind,
  OperationTypeNode,
  visit,
  type ASTVisitor,
  type ExecutionArgs,
  type ExecutionResult,
  type ValidationContext,
} from 'graphql';
import type { GraphQLContext } from '../context.js';
import { codedError } from '../errors.js';
import { credentialFingerprint } from '../secrets.js';
import { clientAddress } from '../security/rate-limit.js';
import type { LivePoller } from './poller.js';
import { ReadRecorder } from './reads.js';

/** A context property set by a transport that streams every answer (the WebSocket). */
export const STREAMED = 'liveStreamed';

/** Why a live query was refused, as /metrics counts it. */
type LiveRefusal = 'total' | 'per_client';

/** What the plugin is built with. */
export type LivePluginOptions = {
  store: InMemoryLiveQueryStore;
  poller: LivePoller;
  /** the `@live` directive of the schema */
  directive: GraphQLDirective;
  /** most live queries open in this process (LIVE_QUERIES_MAX) */
  maxTotal: number;
  /** most live queries open per client (LIVE_QUERIES_PER_CLIENT_MAX) */
  maxPerClient: number;
  /** proxies in front whose X-Forwarded-For is trusted (TRUST_PROXY_HOPS), for a client's address */
  trustProxyHops: number;
  /**
   * Gives `context` fresh upstream clients, loaders and call budget for one run, their pollable
   * reads recorded by `recorder`; `first`: the run of the request itself (its scope is kept).
   */
  renew(context: GraphQLContext, recorder: ReadRecorder, first: boolean): void;
  /** told when a live query opens or closes (the count open), and of each refusal */
  onOpen?(open: number): void;
  onRefused?(why: LiveRefusal): void;
};

type ExecutionContext = GraphQLContext & {
  request?: { headers: { get(name: string): string | null } };
  req?: IncomingMessage;
  [STREAMED]?: boolean;
};

/**
 * Whether the transport streams answers: the WebSocket, or an Accept that names server-sent
 * events or multipart. Anything else (`application/json`, `*\/*`) gets one answer, as a plain
 * query: the same on yoga and on the HTTP lane, which only serves such requests.
 */
function streams(context: ExecutionContext): boolean {
  if (context[STREAMED] === true) return true;
  const accept = context.request?.headers.get('accept') ?? '';
  return /\b(?:text\/event-stream|multipart\/mixed)\b/i.test(accept);
}

/** The live queries open, by client; see {@link clientKey}. */
class OpenLiveQueries {
  readonly #byClient = new Map<string, number>();
  readonly #ending = new Set<() => void>();
  #next = 0;

  get size(): number {
    return this.#ending.size;
  }

  countOf(client: string): number {
    return this.#byClient.get(client) ?? 0;
  }

  /** Opens one for `client`; `end` ends it (used by {@link endAll}). Returns its id and its release. */
  open(client: string, end: () => void): { id: number; release: () => void } {
    this.#byClient.set(client, this.countOf(client) + 1);
    this.#ending.add(end);
    this.#next = (this.#next + 1) % Number.MAX_SAFE_INTEGER;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#ending.delete(end);
      const left = this.countOf(client) - 1;
      if (left > 0) this.#byClient.set(client, left);
      else this.#byClient.delete(client);
    };
    return { id: this.#next, release };
  }

  /** Ends every live query: their streams complete. */
  endAll(): void {
    for (const end of [...this.#ending]) end();
  }
}

/**
 * Whom a live query counts against: the caller's credential (its fingerprint) when it sent one,
 * else its address (X-Forwarded-For within TRUST_PROXY_HOPS, as the rate limit reads it).
 */
function clientKey(context: ExecutionContext, hops: number): string {
  const headers = context.request?.headers;
  const fingerprint = headers === undefined ? undefined : credentialFingerprint(headers);
  if (fingerprint !== undefined) return `credential ${fingerprint}`;
  const peer = context.req?.socket.remoteAddress ?? 'unknown';
  return `address ${clientAddress(peer, headers?.get('x-forwarded-for') ?? null, hops)}`;
}

/** `iterator`, which calls `release` once it ends (completed, returned or failed). */
function releasing<T>(iterator: AsyncIterableIterator<T>, release: () => void): AsyncIterableIterator<T> {
  const ended = <R>(result: R) => {
    release();
    return result;
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next: () =>
      iterator.next().then(
        (result) => (result.done === true ? ended(result) : result),
        (error: unknown) => ended(Promise.reject(error)),
      ),
    // A client that goes away returns the iterator while a `next` is pending: released at once.
    return: (value?: unknown) => ended(iterator.return?.(value) ?? Promise.resolve({ done: true, value: undefined })),
    throw: (error?: unknown) => ended(iterator.throw?.(error) ?? Promise.reject(error)),
  } as AsyncIterableIterator<T>;
}

/** The plugin and a way to end every live query (a stop). */
export function useLiveQueries(options: LivePluginOptions): { plugin: Plugin; open: OpenLiveQueries } {
  const open = new OpenLiveQueries();
  const plugin: Plugin = {
    onValidate: ({ addValidationRule }) => addValidationRule(noLiveWithDeferOrStream),
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      // envelop types its arguments loosely: they are graphql-js's.
      const { document, operationName, variableValues } = args as ExecutionArgs;
      const operation = getOperationAST(document, operationName);
      if (operation?.operation !== OperationTypeNode.QUERY) return;
      const live = liveArguments(options.directive, operation, variableValues ?? undefined);
      const context = args.contextValue as ExecutionContext;
      if (live === undefined || live['if'] === false || !streams(context)) return;
      const client = clientKey(context, options.trustProxyHops);
      const refusal = refused(options, open, client);
      if (refusal !== undefined) {
        options.onRefused?.(refusal.why);
        setResultAndStopExecution({ errors: [refusal.error] });
        return;
      }
      setExecuteFn(liveExecute(options, open, client, context, executeFn));
    },
  };
  return { plugin, open };
}

/**
 * The `@live` directive's arguments on `operation`, if it has it. A variable for `if` that does not
 * coerce counts as no `@live`: execution itself then reports the variable.
 */
function liveArguments(
  directive: GraphQLDirective,
  operation: Parameters<typeof getDirectiveValues>[1],
  variables: ExecutionArgs['variableValues'],
): Record<string, unknown> | undefined {
  try {
    return getDirectiveValues(directive, operation, variables ?? undefined);
  } catch {
    return undefined;
  }
}

/**
 * The convention's rule: a live query is answered whole each time, so `@defer` and `@stream`,
 * which split one answer into parts, cannot be used in it.
 */
export function noLiveWithDeferOrStream(context: ValidationContext): ASTVisitor {
  return {
    Document(document) {
      const live = document.definitions.some(
        (definition) =>
          definition.kind === Kind.OPERATION_DEFINITION &&
          definition.directives?.some((directive) => directive.name.value === 'live'),
      );
      if (!live) return;
      visit(document, {
        Directive(node) {
          if (node.name.value === 'defer' || node.name.value === 'stream')
            context.reportError(
              new GraphQLError(`@${node.name.value} cannot be used in a @live query`, { nodes: node }),
            );
        },
      });
    },
  };
}

/** Why a new live query of `client` is refused, if it is. */
function refused(options: LivePluginOptions, open: OpenLiveQueries, client: string) {
  if (open.size >= options.maxTotal)
    return {
      why: 'total' as const,
      error: codedError(
        'LIVE_QUERY_LIMIT',
        `The gateway has ${options.maxTotal} live queries open, its most (LIVE_QUERIES_MAX); try again later`,
      ),
    };
  if (open.countOf(client) >= options.maxPerClient)
    return {
      why: 'per_client' as const,
      error: codedError(
        'LIVE_QUERY_LIMIT',
        `This client has ${options.maxPerClient} live queries open, its most (LIVE_QUERIES_PER_CLIENT_MAX); ` +
          'close one first',
      ),
    };
  return undefined;
}

type Execute = (args: Parameters<Parameters<NonNullable<Plugin['onExecute']>>[0]['executeFn']>[0]) => unknown;

/** The execute of one live query: the store's, each run with a renewed context; released when it ends. */
function liveExecute(
  options: LivePluginOptions,
  open: OpenLiveQueries,
  client: string,
  context: ExecutionContext,
  executeFn: Execute,
): Execute {
  return (executeArgs) => {
    let ending: (() => void) | undefined;
    const { id, release } = open.open(client, () => ending?.());
    options.onOpen?.(open.size);
    let ended = false;
    const done = () => {
      ended = true;
      release();
      options.poller.unwatch(id);
      options.onOpen?.(open.size);
    };
    let first = true;
    const run = (runArgs: ExecutionArgs): Promise<ExecutionResult> => {
      const recorder = new ReadRecorder();
      options.renew(context, recorder, first);
      first = false;
      // Queries only: never a stream (the store refuses one, and @defer/@stream are refused with @live).
      return Promise.resolve(executeFn(runArgs) as ExecutionResult).then((result) => {
        // A run that finishes after its live query ended (its client went away) watches nothing.
        if (!ended) options.poller.watch(id, recorder.reads);
        return result;
      });
    };
    const executed = options.store.makeExecute(run)(executeArgs);
    return Promise.resolve(executed).then((result) => {
      if (!(Symbol.asyncIterator in result)) {
        done();
        return result;
      }
      const iterator = releasing(result, done);
      ending = () => void iterator.return?.();
      return iterator;
    });
  };
}
