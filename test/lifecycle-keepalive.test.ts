/**
 * Keep-alive connections on a stop, as a proxy in front (nginx, two gateways behind it) sees
 * them: a request it writes on an idle connection just as the gateway begins to stop is answered
 * (with `Connection: close`), not lost — a proxy retries a lost GET but answers a lost POST with a
 * 502; a connection that brings nothing more is closed a moment later, and the stop ends.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../src/emulator/server.js';
import { createGateway } from '../src/gateway.js';
import { serve, type Serving } from '../src/server.js';
import { json, scriptedUpstreams, startScriptedUpstream } from './helpers/scripted-upstream.js';
import { testConfig } from './helpers/stack.js';

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator({ recordRequests: false });
});
afterAll(async () => {
  await emulator.close();
});

const started: Serving[] = [];
afterEach(async () => {
  for (const serving of started.splice(0)) await serving.stop('test over');
});

/** A gateway served by `serve()`, whose stop takes up to 5 s for requests in flight. */
async function start(
  upstreams = { petstoreUrl: emulator.petstoreUrl, plantsUrl: emulator.plantsUrl },
): Promise<Serving> {
  const gateway = createGateway(testConfig({ ...upstreams, upstreamMaxResponseBytes: 64 * 1024 * 1024 }));
  const serving = await serve(gateway, { host: '127.0.0.1', port: 0, shutdownGraceMs: 5000 }, () => undefined);
  started.push(serving);
  return serving;
}

/** A connection as a proxy keeps one: answered once (`GET /health`), then idle. */
async function idleKeepAliveConnection(port: number) {
  const socket = await new Promise<Socket>((resolve, reject) => {
    const opened = connect(port, '127.0.0.1', () => resolve(opened));
    opened.once('error', reject);
  });
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  const closed = once(socket, 'close');
  socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await expect.poll(() => received).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n/);
  received = '';
  return { socket, received: () => received, closed };
}

describe('a stop with keep-alive connections open', () => {
  it('answers a POST written on an idle connection just as the stop begins, with Connection: close', async () => {
    const serving = await start();
    const connection = await idleKeepAliveConnection(serving.port);
    const body = JSON.stringify({ query: '{ pet(id: 1) { name } }' });

    const stopped = serving.stop('SIGTERM');
    connection.socket.write(
      'POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\napi_key: demo\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );

    await connection.closed;
    const [head = '', answer] = connection.received().split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(head.toLowerCase()).toContain('\r\nconnection: close');
    expect(answer).toBe('{"data":{"pet":{"name":"Cat 1"}}}');
    expect(await stopped).toBe('stopped');
  });

  it('closes an idle connection that brings nothing more, and ends the stop without cutting', async () => {
    const serving = await start();
    const connection = await idleKeepAliveConnection(serving.port);

    const stopped = serving.stop('SIGTERM');

    await connection.closed;
    expect(connection.received()).toBe('');
    expect(await stopped).toBe('stopped');
  });

  it('lets a large answer still being sent to a slow client arrive whole, while idle connections are closed', async () => {
    // About 24 MB of answer: more than the kernel's buffers on both ends of a loopback connection hold.
    const upstream = await startScriptedUpstream();
    const pet = { photoUrls: [], tags: [], status: 'available', name: 'x'.repeat(10_000) };
    const pets = Array.from({ length: 2400 }, (_, index) => ({ ...pet, id: index + 1 }));
    upstream.answer(json(200, pets));
    try {
      const serving = await start(scriptedUpstreams(upstream.url));
      const idle = await idleKeepAliveConnection(serving.port);
      const slow = await idleKeepAliveConnection(serving.port);
      const body = JSON.stringify({ query: '{ petsByStatus(status: [AVAILABLE]) { name } }' });
      // From its first bytes on, the answer is not read until the idle connection is closed.
      slow.socket.once('data', () => slow.socket.pause());
      slow.socket.write(
        'POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\napi_key: demo\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await expect.poll(() => slow.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);

      const stopped = serving.stop('SIGTERM');
      // The idle connection is closed: the slow one stays open until its answer is out.
      await idle.closed;
      slow.socket.resume();
      await slow.closed;

      const [head = '', answer = ''] = slow.received().split('\r\n\r\n');
      const declared = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
      expect(Buffer.byteLength(answer)).toBe(declared);
      expect(declared).toBeGreaterThan(24_000_000);
      expect(await stopped).toBe('stopped');
    } finally {
      await upstream.close();
    }
  });
});
