/**
 * An HTTP server that records every request it receives (for tests to assert what an upstream
 * got) and answers through a function: the common part of the emulator and of the reference
 * server double in the tests.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export type RecordedRequest = {
  method: string;
  /** URL path without query, as sent (still percent-encoded), e.g. '/api/v3/pet/1' or '/plants'. */
  path: string;
  /** Raw query string without '?', '' if none. */
  query: string;
  /** Lower-cased header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The request's Content-Type header. */
  contentType: string | undefined;
  /** Full body decoded as UTF-8 ('' if none); set once the body has been read completely. */
  body: string;
  /** The body's exact bytes (uploads are binary); set with `body`. */
  rawBody: Buffer;
  /** Updated as body chunks arrive, so a test can watch a streamed upload in progress. */
  bytesReceived: number;
  /** True once the whole body has arrived. */
  complete: boolean;
};

/** What a recording server answers. */
type Answer = { status: number; headers?: Record<string, string>; body?: string };

/** How a recording server listens and answers. */
export type RecordingServerOptions = {
  /** how the server names itself in its error log */
  name: string;
  /** interface to listen on. @default '127.0.0.1' */
  host?: string;
  /** port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /** delay added before answering each request, to make concurrency and timeouts observable. @default 0 */
  latencyMs?: number;
  /**
   * keep every request in `requests`; off for long-running servers, whose memory must not grow with
   * traffic. @default true
   */
  recordRequests?: boolean;
  /** the answer to a request whose body has been read whole */
  answer: (record: RecordedRequest, body: Buffer, rawHeaders: readonly string[]) => Answer;
  /** the answer when `answer` throws */
  fallback: () => Answer;
  /** restores the seeded data */
  reset: () => void;
};

/** A running recording server. */
export type RecordingServer = {
  /** e.g. `http://127.0.0.1:43123` */
  origin: string;
  /** every request received, in arrival order; pushed as soon as headers arrive */
  requests: RecordedRequest[];
  /** highest number of requests being handled at the same time since start or the last reset */
  maxInFlight: number;
  /** clears `requests` and `maxInFlight`; the data is kept */
  clearRequests(): void;
  /** restores the seeded data */
  reset(): void;
  /** stops listening and closes every connection, idle keep-alive ones included */
  close(): Promise<void>;
};

/** Header names lower-cased, with repeated headers joined the way HTTP allows. */
function collectHeaders(rawHeaders: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = (rawHeaders[index] ?? '').toLowerCase();
    const value = rawHeaders[index + 1] ?? '';
    headers[name] = Object.hasOwn(headers, name) ? `${headers[name]}, ${value}` : value;
  }
  return headers;
}

/**
 * Reads the body chunk by chunk, updating the record as bytes arrive.
 * Rejects when the client goes away before the end.
 */
function readBody(request: IncomingMessage, record: RecordedRequest): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      record.bytesReceived += chunk.length;
    });
    request.once('end', () => {
      const body = Buffer.concat(chunks);
      record.body = body.toString('utf8');
      record.rawBody = body;
      record.complete = true;
      resolve(body);
    });
    request.once('error', reject);
    request.once('close', () => {
      if (!record.complete) reject(new Error('request aborted'));
    });
  });
}

function writeReply(response: ServerResponse, reply: Answer): void {
  if (response.destroyed || response.headersSent) return;
  const body = reply.body ?? '';
  response.writeHead(reply.status, { ...reply.headers, 'content-length': String(Buffer.byteLength(body)) });
  response.end(body);
}

/** The host part of a URL: unspecified addresses become loopback, IPv6 gets brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** A request as it is recorded before its body has arrived. */
function recordOf(request: IncomingMessage): RecordedRequest {
  const url = request.url ?? '/';
  const queryStart = url.indexOf('?');
  const headers = collectHeaders(request.rawHeaders);
  return {
    method: request.method ?? 'GET',
    path: queryStart === -1 ? url : url.slice(0, queryStart),
    query: queryStart === -1 ? '' : url.slice(queryStart + 1),
    headers,
    contentType: headers['content-type'],
    body: '',
    rawBody: Buffer.alloc(0),
    bytesReceived: 0,
    complete: false,
  };
}

/** Listens on `host`:`port` (0: a free one); the port it listens on. */
async function listenOn(server: Server, name: string, host: string, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Errors after start (e.g. a reset socket) must never crash the process hosting the server.
  server.on('error', (error) => console.error(`${name}: server error`, error));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`${name}: expected a TCP address`);
  return address.port;
}

/** Starts a recording server. */
export async function startRecordingServer(options: RecordingServerOptions): Promise<RecordingServer> {
  const host = options.host ?? '127.0.0.1';
  const latencyMs = options.latencyMs ?? 0;
  const recordRequests = options.recordRequests ?? true;
  const requests: RecordedRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const record = recordOf(request);
    if (recordRequests) requests.push(record);
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      let body: Buffer;
      try {
        body = await readBody(request, record);
      } catch {
        // The client is gone; there is nobody to answer.
        return;
      }
      if (latencyMs > 0) await sleep(latencyMs);
      writeReply(response, options.answer(record, body, request.rawHeaders));
    } finally {
      inFlight -= 1;
    }
  }

  const server = createServer((request, response) => {
    serve(request, response).catch((error: unknown) => {
      // A bug in an answer must show up as the upstream's 500, not take the process down.
      console.error(`${options.name}: failed to answer`, error);
      if (!response.headersSent) writeReply(response, options.fallback());
      else response.destroy();
    });
  });

  const port = await listenOn(server, options.name, host, options.port ?? 0);
  let closing: Promise<void> | undefined;

  return {
    origin: `http://${urlHost(host)}:${port}`,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    set maxInFlight(value: number) {
      maxInFlight = value;
    },
    clearRequests() {
      // Emptied in place so that callers holding the array see the change.
      requests.length = 0;
      maxInFlight = inFlight;
    },
    reset() {
      options.reset();
      maxInFlight = inFlight;
    },
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        // server.close() alone waits for idle keep-alive sockets to time out.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
