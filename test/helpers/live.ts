/**
 * Live query clients for tests: a server-sent events reader (fetch, `Accept: text/event-stream`)
 * and a graphql-ws client over `ws`, each giving the results as they arrive, one `next()` at a
 * time, and a way to close; and gateways served with the real server (src/server.ts), so that
 * their WebSocket transport and their stop are the production ones.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { createGateway, type Gateway, type GatewayConfig } from '../../src/gateway.js';
import { serve, type Serving } from '../../src/server.js';
import { testConfig } from './stack.js';

/** A GraphQL result as a live query's client receives it. */
type LiveResult = {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
};

/** The results of one live query, in order, as they arrive. */
class LiveResults {
  readonly received: LiveResult[] = [];
  #read = 0;
  #waiting: (() => void) | undefined;
  ended = false;
  /** what ended the stream with an error (graphql-ws gives a list of GraphQL errors, or a close event) */
  failure: unknown;

  push(result: LiveResult): void {
    this.received.push(result);
    this.#waiting?.();
  }

  end(): void {
    this.ended = true;
    this.#waiting?.();
  }

  /** The next result not yet read; fails after `timeoutMs` (a test's bound on an event, not a measure). */
  async next(timeoutMs = 10_000): Promise<LiveResult> {
    const result = await new Promise<LiveResult | undefined>((resolve, reject) => {
      const check = () => {
        if (this.#read < this.received.length) {
          clearTimeout(timer);
          this.#waiting = undefined;
          resolve(this.received[this.#read++]);
        } else if (this.ended) {
          clearTimeout(timer);
          resolve(undefined);
        }
      };
      const timer = setTimeout(() => reject(new Error(`no live result within ${timeoutMs} ms`)), timeoutMs);
      this.#waiting = check;
      check();
    });
    if (result === undefined) throw new Error('the live query ended');
    return result;
  }
}

/** A live query open over server-sent events. */
export type SseLive = { results: LiveResults; status: Promise<number>; close(): void };

/** Opens `query` over server-sent events (a POST with `Accept: text/event-stream`). */
export function openSse(
  url: string,
  query: string,
  headers: Record<string, string> = {},
  variables?: Record<string, unknown>,
): SseLive {
  const results = new LiveResults();
  const abort = new AbortController();
  const status = fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  }).then((response) => {
    void readEvents(response, results);
    return response.status;
  });
  status.catch(() => results.end());
  return { results, status, close: () => abort.abort() };
}

/** Reads `event: next` messages into `results` until the stream ends. */
async function readEvents(response: Response, results: LiveResults): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = '';
  const reader = response.body?.getReader();
  try {
    for (let read = await reader?.read(); read !== undefined && !read.done; read = await reader?.read()) {
      buffered += decoder.decode(read.value, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const message = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = message.split('\n').find((line) => line.startsWith('data: '));
        if (message.startsWith('event: next') && data) results.push(JSON.parse(data.slice(6)) as LiveResult);
      }
    }
  } catch {
    // aborted by the test, or cut by the server: the end either way
  } finally {
    results.end();
  }
}

/** A live query open over graphql-ws. */
export type WsLive = { results: LiveResults; client: Client; close(): Promise<void> };

/** Opens `query` over the graphql-ws WebSocket at `url` (http:// is turned into ws://). */
export function openWs(url: string, query: string, connectionParams: Record<string, string> = {}): WsLive {
  const results = new LiveResults();
  const client = createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: true,
  });
  const stop = client.subscribe<Record<string, unknown>>(
    { query },
    {
      next: (result) => results.push(result as LiveResult),
      error: (failure: unknown) => {
        results.failure = failure;
        results.end();
      },
      complete: () => results.end(),
    },
  );
  return {
    results,
    client,
    close: async () => {
      stop();
      await client.dispose();
    },
  };
}

/** The `extensions.code`s of a graphql-ws error (a list of GraphQL errors), or undefined for another failure. */
export function failureCodes(failure: unknown): unknown[] | undefined {
  return Array.isArray(failure)
    ? failure.map((error: { extensions?: Record<string, unknown> }) => error.extensions?.['code'])
    : undefined;
}

/** A gateway served by the production server, with live queries on. */
export type LiveGateway = { gateway: Gateway; serving: Serving; url: string; stop(): Promise<'stopped' | 'cut'> };

/** Builds and serves a gateway in front of `upstream`, live queries on, with `overrides`. */
export async function serveLiveGateway(
  upstream: { petstoreUrl: string; plantsUrl: string },
  overrides: Partial<GatewayConfig> = {},
): Promise<LiveGateway> {
  const config = testConfig({ ...upstream, liveQueries: true, shutdownGraceMs: 5000, ...overrides });
  const gateway = createGateway(config);
  const serving = await serve(gateway, config, () => undefined);
  return {
    gateway,
    serving,
    url: `http://127.0.0.1:${serving.port}/graphql`,
    stop: () => serving.stop('test over'),
  };
}
