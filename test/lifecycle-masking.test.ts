/**
 * An answer outside GraphQL execution is masked like any other: whichever layer fails — a module
 * that does not load, the request handler, a plugin hook, the writing of the answer — on the
 * gateway's own lane or on yoga's path, the caller gets the masked 500 (`INTERNAL_SERVER_ERROR`,
 * JSON, a request id) and nothing of the failure (no stack, no file path, no exception name), and
 * the server's log gets exactly one line with the detail.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../src/emulator/server.js';
import { createGateway, type Gateway, type GatewayDependencies } from '../src/gateway.js';
import { INTERNAL_ERROR_BODY } from '../src/internal-error.js';
import { serve, type Serving } from '../src/server.js';
import { testConfig } from './helpers/stack.js';

/** A failure as the issue saw it: a module of the build that is gone, with its absolute path. */
const MODULE_NOT_FOUND =
  "Cannot find module '/srv/gateway/dist/chunks/esm-4Q2XK3.js' imported from /srv/gateway/dist/main.js";
/** What must never be in an answer: a stack frame, a file path, an exception name. */
const LEAK = /\n\s+at |\/srv\/|\/work\/|\.js\b|\.ts\b|Error\b|ERR_/;

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator({ recordRequests: false });
});
afterAll(async () => {
  await emulator.close();
});

/** A gateway served by `serve()` (the guarded listener), its log lines kept. */
type Served = { url: string; lines: () => Record<string, unknown>[]; gateway: Gateway; serving: Serving };
const served: Served[] = [];
afterEach(async () => {
  for (const { serving } of served.splice(0)) await serving.stop('test over');
  vi.doUnmock('@graphql-yoga/render-graphiql');
});

async function start(
  dependencies: GatewayDependencies = {},
  handler?: (gateway: Gateway) => Gateway['handler'],
): Promise<Served> {
  const written: string[] = [];
  const gateway = createGateway(
    testConfig({ petstoreUrl: emulator.petstoreUrl, plantsUrl: emulator.plantsUrl, logLevel: 'info' }),
    { logDestination: { write: (line: string) => void written.push(line) }, ...dependencies },
  );
  const serving = await serve(
    handler ? { ...gateway, handler: handler(gateway) } : gateway,
    { host: '127.0.0.1', port: 0, shutdownGraceMs: 1000 },
    () => undefined,
  );
  const result = {
    url: `http://127.0.0.1:${serving.port}`,
    lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>),
    gateway,
    serving,
  };
  served.push(result);
  return result;
}

/** The log lines at level error. */
const errorLines = (gateway: Served) => gateway.lines().filter((line) => line['level'] === 'error');

/**
 * Asserts the masked answer, and the one error line that holds the detail (`detail` in it, and the
 * answer's request id).
 */
async function expectMasked(gateway: Served, response: Response, detail: string): Promise<void> {
  const body = await response.text();
  expect({ status: response.status, body, type: response.headers.get('content-type') }).toEqual({
    status: 500,
    body: INTERNAL_ERROR_BODY,
    type: 'application/json; charset=utf-8',
  });
  const requestId = response.headers.get('x-request-id') ?? '';
  expect(requestId).toMatch(/^[\w-]{8,}$/);
  for (const [name, value] of response.headers) expect(`${name}: ${value}`).not.toMatch(LEAK);
  const lines = errorLines(gateway);
  expect(lines).toHaveLength(1);
  const [line] = lines;
  expect(JSON.stringify(line)).toContain(detail);
  expect(JSON.stringify(line)).toContain(requestId);
  expect(line?.['err']).toMatchObject({ stack: expect.stringContaining('\n    at ') });
}

/** Makes the next `method` call of every answer throw `error`, once per answer. */
function failingOnce(gateway: Gateway, method: 'writeHead' | 'end', error: Error): Gateway['handler'] {
  return (request, response) => {
    // An own property over the prototype's method, removed as it is called: the next call works.
    Object.assign(response, {
      [method]: () => {
        Reflect.deleteProperty(response, method);
        throw error;
      },
    });
    gateway.handler(request, response);
  };
}

const QUERY = JSON.stringify({ query: '{ pet(id: 1) { name } }' });
const JSON_POST = { method: 'POST', headers: { 'content-type': 'application/json', api_key: 'demo' }, body: QUERY };

describe('a failure outside GraphQL execution is answered with the masked 500', () => {
  it('a module that does not load (GraphiQL’s renderer, its chunk deleted by a rebuild)', async () => {
    vi.doMock('@graphql-yoga/render-graphiql', () => {
      throw Object.assign(new Error(MODULE_NOT_FOUND), { code: 'ERR_MODULE_NOT_FOUND' });
    });
    const gateway = await start();

    const response = await fetch(`${gateway.url}/graphql`, { headers: { accept: 'text/html' } });

    await expectMasked(gateway, response, 'esm-4Q2XK3.js');
  });

  it('the request handler throws', async () => {
    const gateway = await start({}, () => () => {
      throw new TypeError(`handler failed at ${MODULE_NOT_FOUND}`);
    });

    const response = await fetch(`${gateway.url}/graphql`, JSON_POST);

    await expectMasked(gateway, response, 'handler failed');
  });

  it('the request handler rejects', async () => {
    const gateway = await start({}, () => async () => {
      await Promise.resolve();
      throw new RangeError('handler rejected');
    });

    const response = await fetch(`${gateway.url}/graphql`, JSON_POST);

    await expectMasked(gateway, response, 'handler rejected');
  });

  it('a plugin hook throws (/metrics, when the cluster primary does not answer)', async () => {
    const gateway = await start({
      clusterMetrics: () => Promise.reject(new Error('the cluster primary did not answer within 5000 ms')),
    });

    const response = await fetch(`${gateway.url}/metrics`);

    await expectMasked(gateway, response, 'the cluster primary did not answer');
  });

  it('the answer cannot be written, on the lane', async () => {
    const gateway = await start({}, (inner) => failingOnce(inner, 'writeHead', new TypeError('writer failed (lane)')));

    const response = await fetch(`${gateway.url}/graphql`, JSON_POST);

    await expectMasked(gateway, response, 'writer failed (lane)');
  });

  it('the answer cannot be written, on yoga’s path', async () => {
    const gateway = await start({}, (inner) => failingOnce(inner, 'writeHead', new TypeError('writer failed (yoga)')));

    // A GraphQL document as the body (application/graphql): yoga's to read.
    const response = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/graphql', api_key: 'demo' },
      body: '{ pet(id: 1) { name } }',
    });

    await expectMasked(gateway, response, 'writer failed (yoga)');
  });

  it('an answer that had begun is not replaced: its connection is closed, and the failure logged once', async () => {
    const gateway = await start({}, (inner) => failingOnce(inner, 'end', new TypeError('writer failed midway')));

    const answered = fetch(`${gateway.url}/graphql`, JSON_POST).then((response) => response.text());

    await expect(answered).rejects.toThrow();
    await expect.poll(() => errorLines(gateway).length).toBe(1);
    expect(JSON.stringify(errorLines(gateway)[0])).toContain('writer failed midway');
  });
});
