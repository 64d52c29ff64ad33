/**
 * A scripted upstream: a node:http server on 127.0.0.1 port 0 whose answer each test decides,
 * request by request (a status, headers and body; or no answer at all; or headers followed by a
 * body that never finishes), recording every request it receives. With it, tests produce the
 * failures the emulator does not (timeouts, broken bodies, wrong shapes, redirects) and still
 * assert what the gateway sent.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGateway, type Gateway, type GatewayConfig } from '../../src/gateway.js';
import { listen, postGraphQL, stop, testConfig, type GraphQLResponse } from './stack.js';

/** A request as the scripted upstream received it. */
export type ReceivedRequest = {
  method: string;
  /** path and query, as sent (still percent-encoded), e.g. `/api/v3/pet/1` */
  url: string;
  /** lower-cased header names */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** the whole body as UTF-8, '' when there is none */
  body: string;
};

/** What the scripted upstream does with one request. */
export type Answer =
  /** answers at once, or after `delayMs` */
  | { status: number; headers?: Readonly<Record<string, string>>; body?: string; delayMs?: number }
  /** never answers; the connection stays open until the upstream is closed */
  | { hang: true }
  /** sends the status, headers and the start of the body, then stalls without ending it */
  | { stallBody: true; status: number; headers?: Readonly<Record<string, string>>; bodyStart: string };

/** Decides the answer to a request. */
export type Script = (request: ReceivedRequest) => Answer;

export type ScriptedUpstream = {
  /** origin of the server, e.g. `http://127.0.0.1:43123` */
  url: string;
  /** `host:port` of the server, as it would appear if a URL leaked */
  hostPort: string;
  /** every request received since the last {@link ScriptedUpstream.reset}, in arrival order */
  requests: ReceivedRequest[];
  /** sets the answer to every following request */
  answer(script: Script | Answer): void;
  /** forgets the requests and the script (unscripted requests get a 501) */
  reset(): void;
  /** stops listening and closes every connection, hanging ones included */
  close(): Promise<void>;
};

const UNSCRIPTED: Answer = { status: 501, headers: { 'content-type': 'text/plain' }, body: 'no answer scripted' };

/** Answers under `application/json`: `body` serialised, or sent as is when it is already text (which may be invalid JSON). */
export function json(status: number, body: unknown): Answer {
  return { status, headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) };
}

/** Starts a scripted upstream on 127.0.0.1, port 0. */
export async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  let script: Script = () => UNSCRIPTED;
  const requests: ReceivedRequest[] = [];

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const received: ReceivedRequest = {
      method: request.method ?? '',
      url: request.url ?? '',
      headers: { ...request.headers },
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push(received);
    const answer = script(received);
    if ('hang' in answer) return;
    if ('stallBody' in answer) {
      response.writeHead(answer.status, { ...answer.headers });
      response.write(answer.bodyStart);
      return;
    }
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    response.writeHead(answer.status, { ...answer.headers });
    response.end(answer.body ?? '');
  }

  const { server, url } = await listen((request, response) => void handle(request, response));
  return {
    url,
    hostPort: new URL(url).host,
    requests,
    answer(next) {
      script = typeof next === 'function' ? next : () => next;
    },
    reset() {
      requests.length = 0;
      script = () => UNSCRIPTED;
    },
    close: () => stop(server),
  };
}

/** An origin on 127.0.0.1 where nothing listens: connections to it are refused. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** A gateway served over HTTP on a free port. */
export type ServedGateway = {
  /** the GraphQL endpoint */
  url: string;
  /** posts a GraphQL operation as JSON */
  gql(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<GraphQLResponse>;
  close(): Promise<void>;
};

/**
 * Builds a gateway whose pet store is `${upstreams.petstore}/api/v3` and whose plant area is
 * `upstreams.plants` (origins, such as a scripted upstream's `url`), and serves it.
 */
export async function serveGateway(upstreams: { petstore: string; plants: string }, overrides: Partial<GatewayConfig> = {}): Promise<ServedGateway> {
  const gateway: Gateway = createGateway(testConfig({ petstoreUrl: `${upstreams.petstore}/api/v3`, plantsUrl: upstreams.plants, ...overrides }));
  const { server, url } = await listen(gateway.yoga);
  const endpoint = `${url}/graphql`;
  return {
    url: endpoint,
    gql: (query, variables, headers) => postGraphQL(endpoint, query, variables, headers),
    async close() {
      await stop(server);
      await gateway.close();
    },
  };
}
