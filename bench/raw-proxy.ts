/**
 * Proxies under the least Node.js proxy (bench/least-proxy.ts), for bench/floor.ts: the same work
 * (read the POST and parse its JSON, make the scenario's one REST call, wrap the parsed answer in
 * `{ "data": … }`, write it), with either HTTP library of the least proxy swapped for plain
 * sockets. What each swap saves is what that library costs on this runtime and machine.
 *
 * - the server side: `http` is node:http (as the gateway and the least proxy), `net` a TCP server
 *   that reads HTTP/1.1 requests itself;
 * - the client side: `undici` is one undici pool (as the gateway, through `dispatch`), `net` a set
 *   of keep-alive sockets that write the GET and read the answer themselves.
 *
 * The plain-socket halves read only what this bench sends and receives (Content-Length bodies,
 * keep-alive, no chunked encoding, no pipelining): a measuring device, not an HTTP
 * implementation. Usage: tsx bench/raw-proxy.ts <petstore URL> <http|net> <undici|net>; prints one
 * JSON line `{ url }` when listening; stops on SIGTERM.
 */
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { Pool } from 'undici';

const upstream = new URL(process.argv[2] ?? '');
const serverSide = process.argv[3] === 'net' ? 'net' : 'http';
const clientSide = process.argv[4] === 'net' ? 'net' : 'undici';
const FORWARDED = ['api_key', 'authorization'] as const;

type Credentials = Partial<Record<(typeof FORWARDED)[number], string>>;
type Answer = (status: number, body: string) => void;

/** The head and body of the first complete HTTP/1.1 message in `text` (latin1), or undefined. */
function message(text: string): { head: string; body: string; length: number } | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = text.slice(0, end);
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
  if (text.length < end + 4 + length) return undefined;
  return { head, body: text.slice(end + 4, end + 4 + length), length: end + 4 + length };
}

function headerOf(head: string, name: string): string | undefined {
  return new RegExp(`\\r\\n${name}: *([^\\r]*)`, 'i').exec(head)?.[1];
}

const pool = new Pool(upstream.origin, { connections: 32, keepAliveTimeout: 30_000 });
const idle: Socket[] = [];

/** One GET of `path` on the upstream; `answer` gets its status and body. */
function call(path: string, credentials: Credentials, answer: Answer): void {
  if (clientSide === 'undici') {
    const chunks: Buffer[] = [];
    let status = 0;
    pool.dispatch(
      { method: 'GET', path, headers: { accept: 'application/json', ...credentials } },
      {
        onConnect() {},
        onHeaders(statusCode: number) {
          status = statusCode;
          return true;
        },
        onData(chunk: Buffer) {
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          answer(status, Buffer.concat(chunks).toString('utf8'));
        },
        onError() {
          answer(502, '');
        },
      },
    );
    return;
  }
  const socket = idle.pop() ?? openUpstream();
  let received = '';
  const onData = (chunk: Buffer) => {
    received += chunk.toString('latin1');
    const whole = message(received);
    if (whole === undefined) return;
    socket.off('data', onData);
    idle.push(socket);
    answer(Number(whole.head.slice(9, 12)), Buffer.from(whole.body, 'latin1').toString('utf8'));
  };
  socket.on('data', onData);
  let head = `GET ${path} HTTP/1.1\r\nhost: ${upstream.host}\r\naccept: application/json\r\n`;
  for (const [name, value] of Object.entries(credentials)) head += `${name}: ${value}\r\n`;
  socket.write(`${head}\r\n`, 'latin1');
}

function openUpstream(): Socket {
  const socket = connect(Number(upstream.port), upstream.hostname);
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  // An idle socket the upstream closed (its keep-alive timeout) is not used again.
  socket.on('close', () => {
    const at = idle.indexOf(socket);
    if (at >= 0) idle.splice(at, 1);
  });
  return socket;
}

/** The proxy's work for one request: parse its body, call, wrap. */
function proxy(body: string, path: string, credentials: Credentials, answer: Answer): void {
  JSON.parse(body);
  call(path, credentials, (status, text) => {
    if (status === 502) return answer(502, '');
    answer(status, JSON.stringify({ data: JSON.parse(text) as unknown }));
  });
}

const httpServer = createHttpServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const credentials: Credentials = {};
    for (const name of FORWARDED) {
      const value = request.headers[name];
      if (typeof value === 'string') credentials[name] = value;
    }
    proxy(
      Buffer.concat(chunks).toString('utf8'),
      String(request.headers['x-rest-path']),
      credentials,
      (status, text) => {
        response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        response.end(text);
      },
    );
  });
});

const netServer = createNetServer((socket) => {
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
    for (let whole = message(received); whole !== undefined; whole = message(received)) {
      received = received.slice(whole.length);
      const credentials: Credentials = {};
      for (const name of FORWARDED) {
        const value = headerOf(whole.head, name);
        if (value !== undefined) credentials[name] = value;
      }
      proxy(
        Buffer.from(whole.body, 'latin1').toString('utf8'),
        headerOf(whole.head, 'x-rest-path') ?? '/',
        credentials,
        (status, text) => {
          if (socket.destroyed) return;
          socket.write(
            `HTTP/1.1 ${status} ${status === 200 ? 'OK' : 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
          );
        },
      );
    }
  });
});

const server = serverSide === 'net' ? netServer : httpServer;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/graphql` })}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  for (const socket of idle) socket.destroy();
  void pool.close().then(() => process.exit(0));
});
