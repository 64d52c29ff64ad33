/**
 * Prism mock servers of the project's OpenAPI documents, for checking that every request the
 * gateway sends fits them. Each document gets its own Prism (`prism mock --errors`: requests are
 * validated, security included, and an invalid one is answered with an error instead of a mock)
 * on a free 127.0.0.1 port, started as a child process.
 *
 * The gateway does not talk to Prism directly: a small recording proxy sits in front of each
 * one and keeps every exchange, with the violations Prism found in the request (its
 * `sl-violations` header). A test can then assert "Prism found nothing wrong" exactly, instead of
 * inferring it from the GraphQL errors. The proxy reads the whole request before forwarding it,
 * so a streamed upload reaches Prism with a Content-Length instead of chunked.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const PROJECT = fileURLToPath(new URL('../../', import.meta.url));
const PRISM = fileURLToPath(new URL('../../node_modules/.bin/prism', import.meta.url));
/** Prism takes a few seconds to start, more on a busy machine. */
const START_TIMEOUT_MS = 60_000;

/** A violation Prism found in a request (an element of its `sl-violations` header). */
type Violation = { location: (string | number)[]; severity: string; code: string | number; message: string };

/** One request the gateway sent and Prism's answer to it. */
export type Exchange = {
  method: string;
  /** path and query as sent, e.g. `/pet/findByStatus?status=available` */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  status: number;
  /** what Prism found wrong with the request; empty when it found nothing */
  violations: Violation[];
};

/** One Prism mock, behind its recording proxy. */
export type PrismMock = {
  /** the address to point the gateway at (the proxy's); Prism ignores the documents' base paths */
  url: string;
  /** every exchange since the start or the last {@link PrismMock.take} */
  exchanges: Exchange[];
  /** the exchanges so far, forgetting them */
  take(): Exchange[];
};

/** Both mocks. */
export type PrismMocks = { petstore: PrismMock; plants: PrismMock; close(): Promise<void> };

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Starts `prism mock` for one document and resolves once it listens; rejects with its output if it
 * stops or takes too long.
 */
async function startPrismProcess(document: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(PRISM, ['mock', '-h', '127.0.0.1', '-p', String(port), '--errors', document], {
    cwd: PROJECT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Prism logs every request; the pipes must be drained, and the tail is kept for error messages.
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000));
  child.stderr?.on('data', keep);
  const listening = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      keep(chunk);
      if (output.includes('Prism is listening on')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`prism mock ${document} stopped (exit ${code}) before listening:\n${output}`)),
    );
    child.once('error', reject);
    setTimeout(
      () => reject(new Error(`prism mock ${document} did not listen within ${START_TIMEOUT_MS} ms:\n${output}`)),
      START_TIMEOUT_MS,
    ).unref();
  });
  try {
    await listening;
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return { child, url: `http://127.0.0.1:${port}` };
}

function violationsOf(header: string | string[] | undefined): Violation[] {
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text === undefined || text === '') return [];
  // Prism truncates a very long list (`Too many violations! …`); that is still a rejection.
  if (!text.startsWith('[')) return [{ location: ['request'], severity: 'Error', code: 'truncated', message: text }];
  return JSON.parse(text) as Violation[];
}

/** A proxy that forwards every request to `target` and records the exchange. */
async function startRecordingProxy(target: string): Promise<{ server: Server; mock: PrismMock }> {
  const exchanges: Exchange[] = [];
  const { hostname, port } = new URL(target);
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.once('end', () => {
      const body = Buffer.concat(chunks);
      const headers: IncomingHttpHeaders = { ...incoming.headers, host: `${hostname}:${port}` };
      delete headers['transfer-encoding'];
      if (body.length > 0 || incoming.headers['transfer-encoding'] !== undefined)
        headers['content-length'] = String(body.length);
      const forward = httpRequest(
        { hostname, port, method: incoming.method, path: incoming.url, headers },
        (answer) => {
          exchanges.push({
            method: incoming.method ?? 'GET',
            url: incoming.url ?? '/',
            headers: incoming.headers,
            body,
            status: answer.statusCode ?? 0,
            violations: violationsOf(answer.headers['sl-violations']),
          });
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forward.once('error', (error) => {
        outgoing.writeHead(502, { 'content-type': 'text/plain' });
        outgoing.end(`prism proxy: ${error.message}`);
      });
      forward.end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port: proxyPort } = server.address() as AddressInfo;
  return {
    server,
    mock: {
      url: `http://127.0.0.1:${proxyPort}`,
      exchanges,
      take: () => exchanges.splice(0, exchanges.length),
    },
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

async function stopServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * Starts a Prism mock (behind a recording proxy) for each of `schema/petstore.openapi.yaml` and
 * `schema/plants.openapi.yaml`.
 */
export async function startPrismMocks(): Promise<PrismMocks> {
  const started = await Promise.allSettled([
    startPrismProcess('schema/petstore.openapi.yaml'),
    startPrismProcess('schema/plants.openapi.yaml'),
  ]);
  const children = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value.child] : []));
  const failure = started.find((result) => result.status === 'rejected');
  if (failure !== undefined || started[0]?.status !== 'fulfilled' || started[1]?.status !== 'fulfilled') {
    await Promise.all(children.map(stopChild));
    throw failure?.status === 'rejected' ? failure.reason : new Error('prism did not start');
  }
  const [petstore, plants] = await Promise.all([
    startRecordingProxy(started[0].value.url),
    startRecordingProxy(started[1].value.url),
  ]);
  return {
    petstore: petstore.mock,
    plants: plants.mock,
    async close() {
      await Promise.all([stopServer(petstore.server), stopServer(plants.server), ...children.map(stopChild)]);
    },
  };
}
