/**
 * A scripted upstream: a node:http server on 127.0.0.1 port 0 whose answer each test decides,
 * request by request (a status, headers and body, at once, late or when the test releases it;
 * no answer at all; headers followed by a body that stalls, trickles, streams on and on, or is
 * cut by a connection reset; a reset instead of an answer), recording every request it receives and the connection it
 * came on. With it, tests produce the failures the emulator does not (timeouts, broken bodies,
 * wrong shapes, redirects, 503s) and still assert what the gateway sent, and how often.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { listen, stop } from './stack.js';
import { afterAll, beforeAll, beforeEach } from 'vitest';

/** A request as the scripted upstream received it. */
export type ReceivedRequest = {
  method: string;
  /** path and query, as sent (still percent-encoded), e.g. `/api/v3/pet/1` */
  url: string;
  /** lower-cased header names */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** the whole body as UTF-8, '' when there is none */
  body: string;
  /** the TCP connection it came on, numbered from 1 in the order they were accepted */
  connection: number;
  /** when it was received, in `performance.now()` milliseconds */
  receivedAt: number;
  /** bytes of the answer's body written to the connection so far */
  bytesSent: number;
};

/** What the scripted upstream does with one request. */
export type Answer =
  /** answers at once, or after `delayMs` */
  | { status: number; headers?: Readonly<Record<string, string>>; body?: string; delayMs?: number }
  /** never answers; the connection stays open until the upstream is closed */
  | { hang: true }
  /** sends the status, headers and the start of the body, then stalls without ending it */
  | { stallBody: true; status: number; headers?: Readonly<Record<string, string>>; bodyStart: string }
  /** resets the connection (TCP RST) instead of answering */
  | { reset: true }
  /** sends the status, headers and the start of the body, then resets the connection */
  | { resetBody: true; status: number; headers?: Readonly<Record<string, string>>; bodyStart: string }
  /**
   * sends the status and headers, then `chunk` `count` times, `intervalMs` apart (0: as fast as
   * the connection takes them), stopping early if the connection closes
   */
  | {
      stream: { chunk: string; count: number; intervalMs?: number };
      status: number;
      headers?: Readonly<Record<string, string>>;
    }
  /**
   * holds the request until `until` settles, then gives `then` (a test arranges what happens meanwhile;
   * see {@link hold})
   */
  | { until: Promise<unknown>; then: Answer };

/** Decides the answer to a request. */
export type Script = (request: ReceivedRequest) => Answer;

export type ScriptedUpstream = {
  /** origin of the server, e.g. `http://127.0.0.1:43123` */
  url: string;
  /** `host:port` of the server, as it would appear if a URL leaked */
  hostPort: string;
  /** every request received since the last {@link ScriptedUpstream.reset}, in arrival order */
  requests: ReceivedRequest[];
  /** TCP connections accepted since the last {@link ScriptedUpstream.reset} */
  connections(): number;
  /** whether a connection (a {@link ReceivedRequest.connection}) is still open */
  isOpen(connection: number): boolean;
  /** sets the answer to every following request */
  answer(script: Script | Answer): void;
  /** forgets the requests and the script (unscripted requests get a 501) */
  reset(): void;
  /** stops listening and closes every connection, hanging ones included */
  close(): Promise<void>;
};

const UNSCRIPTED: Answer = { status: 501, headers: { 'content-type': 'text/plain' }, body: 'no answer scripted' };

/**
 * Answers under `application/json`: `body` serialised, or sent as is when it is already text (which
 * may be invalid JSON).
 */
export function json(status: number, body: unknown): Answer {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

/** A script that gives `answers` in turn, one per request, then repeats the last one. */
export function sequence(...answers: readonly Answer[]): Script {
  let next = 0;
  return () => {
    const answer = answers[Math.min(next, answers.length - 1)];
    next += 1;
    if (!answer) throw new Error('sequence() needs at least one answer');
    return answer;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A held answer: `answer` holds each request until `release()`, then gives `then` (`until` holds others). */
export function hold(then: Answer): { answer: Answer; until: Promise<void>; release(): void } {
  let release: () => void = () => undefined;
  const until = new Promise<void>((resolve) => (release = resolve));
  return { answer: { until, then }, until, release };
}

/**
 * A scripted upstream for the calling `describe` block (or file): started before its tests,
 * reset before each, closed after them. The returned function gives it, once started.
 */
export function useScriptedUpstream(): () => ScriptedUpstream {
  let upstream: ScriptedUpstream | undefined;
  beforeAll(async () => {
    upstream = await startScriptedUpstream();
  });
  afterAll(async () => {
    await upstream?.close();
  });
  beforeEach(() => upstream?.reset());
  return () => {
    if (upstream === undefined) throw new Error('the scripted upstream is started before the tests');
    return upstream;
  };
}

/** Starts a scripted upstream on 127.0.0.1, port 0. */
export async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  let script: Script = () => UNSCRIPTED;
  const requests: ReceivedRequest[] = [];
  const connectionIds = new WeakMap<Socket, number>();
  const open = new Set<number>();
  let accepted = 0;
  let acceptedAtReset = 0;

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const received: ReceivedRequest = {
      method: request.method ?? '',
      url: request.url ?? '',
      headers: { ...request.headers },
      body: Buffer.concat(chunks).toString('utf8'),
      connection: connectionIds.get(request.socket) ?? 0,
      receivedAt: performance.now(),
      bytesSent: 0,
    };
    requests.push(received);
    let answer = script(received);
    while ('until' in answer) {
      const { until, then } = answer;
      await until.catch(() => undefined);
      // The gateway may have given up on it meanwhile.
      if (request.socket.destroyed) return;
      answer = then;
    }
    if ('hang' in answer) return;
    if ('reset' in answer) {
      request.socket.resetAndDestroy();
      return;
    }
    if ('stallBody' in answer || 'resetBody' in answer) {
      response.writeHead(answer.status, { ...answer.headers });
      response.write(answer.bodyStart);
      received.bytesSent = Buffer.byteLength(answer.bodyStart);
      // Let the headers and the start of the body reach the gateway before the reset.
      if ('resetBody' in answer) setTimeout(() => request.socket.resetAndDestroy(), 20);
      return;
    }
    if ('stream' in answer) {
      response.writeHead(answer.status, { ...answer.headers });
      const { chunk, count, intervalMs = 0 } = answer.stream;
      for (let index = 0; index < count && !response.destroyed; index += 1) {
        const flushed = response.write(chunk);
        received.bytesSent += Buffer.byteLength(chunk);
        // Backpressure: wait until the gateway reads on, or goes away.
        if (!flushed) {
          // The wait that loses the race is cancelled, so that no listener is left behind per chunk.
          const waits = new AbortController();
          await Promise.race([
            once(response, 'drain', { signal: waits.signal }),
            once(response, 'close', { signal: waits.signal }),
          ]).finally(() => waits.abort());
        }
        if (intervalMs > 0) await sleep(intervalMs);
      }
      if (!response.destroyed) response.end();
      return;
    }
    if (answer.delayMs) await sleep(answer.delayMs);
    response.writeHead(answer.status, { ...answer.headers });
    response.end(answer.body ?? '');
    received.bytesSent = Buffer.byteLength(answer.body ?? '');
  }

  const { server, url } = await listen((request, response) => void handle(request, response));
  server.on('connection', (socket: Socket) => {
    accepted += 1;
    const id = accepted;
    connectionIds.set(socket, id);
    open.add(id);
    socket.once('close', () => open.delete(id));
  });
  return {
    url,
    hostPort: new URL(url).host,
    requests,
    connections: () => accepted - acceptedAtReset,
    isOpen: (connection) => open.has(connection),
    answer(next) {
      script = typeof next === 'function' ? next : () => next;
    },
    reset() {
      requests.length = 0;
      acceptedAtReset = accepted;
      script = () => UNSCRIPTED;
    },
    close: () => stop(server),
  };
}

/** A TCP server that accepts connections and never sends a byte. */
export type SilentServer = {
  /** an `https://` origin on it: a TLS handshake there never completes, so connecting times out */
  httpsUrl: string;
  /** connections accepted so far */
  connections(): number;
  /** connections still open: the client has not closed them */
  openConnections(): number;
  close(): Promise<void>;
};

/**
 * Starts a {@link SilentServer} on 127.0.0.1, port 0. On loopback the kernel completes every TCP
 * handshake at once, so a plain connection cannot be made to time out without traffic off the
 * machine; a TLS handshake that is never answered is the connect phase that hangs instead.
 */
export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createTcpServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    // What the client sends is read and dropped, so that the server sees the client close the connection.
    socket.resume();
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    httpsUrl: `https://127.0.0.1:${port}`,
    connections: () => accepted,
    openConnections: () => sockets.size,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
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

/**
 * The upstream URLs of a gateway whose pet store is `${petstore}/api/v3` and whose plant area is
 * `plants`: origins such as a scripted upstream's `url` (or {@link closedPortUrl}'s).
 */
export function scriptedUpstreams(petstore: string, plants = petstore): { petstoreUrl: string; plantsUrl: string } {
  return { petstoreUrl: `${petstore}/api/v3`, plantsUrl: plants };
}
