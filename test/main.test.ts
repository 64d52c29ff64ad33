/**
 * `npm start` as a newcomer runs it: the gateway on the embedded emulator, answering the first
 * query, and stopping cleanly on SIGTERM; a bad setting stops it with a message naming it.
 * As production runs it: pointed at upstreams (scripted here), it stops gracefully on SIGTERM
 * and SIGINT with a request in flight, and stays up whatever the upstreams do.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { runtimeStatus } from '../src/runtime.js';
import { EVENTUALLY } from './helpers/clock.js';
import { useProcesses, waitFor } from './helpers/process.js';
import { useRedis } from './helpers/redis.js';
import { closedPortUrl, hold, json, useScriptedUpstream } from './helpers/scripted-upstream.js';
import { listen, postGraphQL, stop } from './helpers/stack.js';

// Each test starts gateway processes (one, or a cluster): the suite's 15 s hang guard is too short
// for that on a loaded 2-core machine.
vi.setConfig({ testTimeout: 60_000 });

/** The exit code of a child process, once it has exited (null: ended by a signal). */
async function exitCode(child: ChildProcess): Promise<number | null> {
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

const processes = useProcesses();
const redis = useRedis();

/** The gateway as `npm start` runs it (the build test/global-setup.ts made), with `env` and `args`. */
function start(env: Record<string, string>, args: string[] = []) {
  return processes.startGateway(env, args);
}

describe('npm start', () => {
  it('runs on the embedded emulator, answers a query, and exits 0 on SIGTERM', async () => {
    const { child, output } = start({});

    const [, url] = await waitFor(output, /GraphQL gateway ready: (http:\/\/\S+\/graphql)/);
    expect(output()).toMatch(/Upstreams: embedded emulator/);
    const result = await postGraphQL(
      url as string,
      '{ pet(id: 1) { name } user(username: "user1") { email } }',
      {},
      { api_key: 'demo' },
    );
    expect(result.data).toEqual({ pet: { name: 'Cat 1' }, user: { email: 'email1@test.com' } });

    child.kill('SIGTERM');
    const code = await exitCode(child);
    expect(code).toBe(0);
  });

  it('prints where GraphiQL is, the upstreams, the operations endpoints, tracing, and the settings changed from defaults', async () => {
    const { output } = start({ UPSTREAM_RETRIES: '0', LOG_LEVEL: 'warn' });

    const [, origin] = await waitFor(
      output,
      /GraphQL gateway ready: (http:\/\/127\.0\.0\.1:\d+)\/graphql \(open it in a browser for GraphiQL\)\n/,
    );
    // The banner is one write; a log line (the runtime's warning on a line past its end of life) may come first.
    const lines = output().split('\n');
    const banner = lines.slice(lines.findIndex((line) => line.startsWith('GraphQL gateway ready: ')));
    expect(banner.slice(1, 5)).toEqual([
      expect.stringMatching(
        /^Upstreams: embedded emulator \(pet store http:\/\/127\.0\.0\.1:\d+\/api\/v3, plants http:\/\/127\.0\.0\.1:\d+\); GraphiQL has demo credentials$/,
      ),
      `Operations: ${origin}/health (liveness), ${origin}/readiness (upstreams reachable), ${origin}/metrics (Prometheus)`,
      'Tracing: off (set OTEL_EXPORTER_OTLP_ENDPOINT to send spans)',
      'Settings changed from defaults: PORT=0 UPSTREAM_RETRIES=0 LOG_LEVEL=warn',
    ]);
  });

  it('says in its start-up lines whether Redis answers, without its password, and serves either way', async () => {
    const password = 'redis-secret-7';
    const withPassword = (url: string) => url.replace('redis://', `redis://:${password}@`);
    const unreachable = withPassword((await closedPortUrl()).replace('http://', 'redis://'));
    // The test's Redis has no password (it would refuse one): only the unreachable URL carries one.
    const up = start({ REDIS_URL: redis.url });
    const down = start({ REDIS_URL: unreachable });

    await waitFor(up.output, /Shared state: .*\n/);
    const [, url = ''] = await waitFor(down.output, /GraphQL gateway ready: (http:\/\/\S+\/graphql)/);
    await waitFor(down.output, /Shared state: .*\n/);

    expect(up.output()).toMatch(
      /^Shared state: Redis redis:\/\/127\.0\.0\.1:\d+ \(keys under rest-graphql-gateway:\), connected$/m,
    );
    expect(down.output()).toMatch(
      /^Shared state: Redis redis:\/\/127\.0\.0\.1:\d+ \(keys under rest-graphql-gateway:\), UNREACHABLE: serving without it \(no shared cache, rate limits not applied\) and reconnecting$/m,
    );
    expect(await postGraphQL(url, '{ order(id: 1) { id } }')).toEqual({ status: 200, data: { order: { id: '1' } } });
    expect(down.output()).not.toContain(password);
  });

  it.each(['1', '2'])(
    'with WORKERS=%s takes no request before a slow Redis answers, so that rate limits apply from the first one',
    async (workers) => {
      // A Redis that lets each connection through 800 ms late (the gateway waits up to 2 s).
      const sockets: Socket[] = [];
      const slowRedis = createServer((client) => {
        sockets.push(client);
        client.pause();
        setTimeout(() => {
          const upstream = connect(Number(new URL(redis.url).port), '127.0.0.1');
          sockets.push(upstream);
          upstream.on('error', () => client.destroy());
          client.on('error', () => upstream.destroy());
          client.pipe(upstream).pipe(client);
          client.resume();
        }, 800);
      });
      slowRedis.listen(0, '127.0.0.1');
      await once(slowRedis, 'listening');
      const port = new URL(await closedPortUrl()).port;
      const url = `http://127.0.0.1:${port}/graphql`;
      start({
        PORT: port,
        WORKERS: workers,
        REDIS_URL: `redis://127.0.0.1:${(slowRedis.address() as AddressInfo).port}`,
        RATE_LIMIT_PER_MINUTE: '1',
        REDIS_KEY_PREFIX: `slow-redis-workers-${workers}:`,
        // Its first answer (the client's ready check) is late, not lost: within the command timeout.
        REDIS_TIMEOUT_MS: '1500',
      });

      try {
        // Asked as soon as the port takes connections, as a load balancer would.
        let first: Awaited<ReturnType<typeof postGraphQL>> | undefined;
        while (first === undefined)
          first = await postGraphQL(url, '{ order(id: 1) { id } }').catch(
            () => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 20)),
          );
        const second = await postGraphQL(url, '{ order(id: 1) { id } }');

        expect([first.status, second.status]).toEqual([200, 429]);
      } finally {
        for (const socket of sockets) socket.destroy();
        slowRedis.close();
      }
    },
    20_000,
  );

  it('names the OTLP endpoint spans go to when tracing is switched on', async () => {
    const { output } = start({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SERVICE_NAME: 'pets' });

    await waitFor(output, /Settings changed from defaults/);
    expect(output()).toContain('Tracing: OTLP to http://127.0.0.1:4318/v1/traces\n');
    expect(output()).toMatch(
      /Settings changed from defaults: .*OTEL_EXPORTER_OTLP_ENDPOINT=http:\/\/127\.0\.0\.1:4318 OTEL_SERVICE_NAME=pets/,
    );
  });

  it('names the Node.js it runs on in its start-up lines, and warns in its log when that line is past its end of life', async () => {
    const { output } = start({});
    const [, url = ''] = await waitFor(output, /GraphQL gateway ready: (http:\/\/\S+\/graphql)/);
    // The start's log lines are written with the first request's (in order, in batches).
    await postGraphQL(url, 'query Cat { pet(id: 1) { name } }', {}, { api_key: 'demo' });
    await waitFor(output, /"msg":"POST \/graphql Cat 200"/);
    const expected = runtimeStatus(process.versions.node, new Date());

    expect(output().split('\n')).toContain(expected.line);
    expect(expected.line).toMatch(
      new RegExp(`^Runtime: Node\\.js ${process.versions.node.replaceAll('.', '\\.')}[ ,]`),
    );
    const warnings = output()
      .split('\n')
      .filter((line) => line.startsWith('{') && line.includes('"level":"warn"'))
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(warnings).toEqual(expected.warning === undefined ? [] : [expected.warning]);
  });

  it('writes one JSON line per request to stdout, with the request id it answers with', async () => {
    const { output } = start({});
    const [, url = ''] = await waitFor(output, /GraphQL gateway ready: (http:\/\/\S+\/graphql)/);

    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', api_key: 'demo' },
      body: JSON.stringify({ query: 'query Cat { pet(id: 1) { name } }' }),
    });
    const [line = ''] = await waitFor(output, /^\{.*"msg":"POST \/graphql Cat 200"\}$/m);

    expect(JSON.parse(line)).toMatchObject({
      level: 'info',
      requestId: response.headers.get('x-request-id'),
      operationName: 'Cat',
      status: 200,
      upstreamCalls: 1,
      upstream: [{ service: 'petstore', operation: 'getPetById', status: 200 }],
    });
  });

  it.each([
    [
      'OTEL_TRACES_SAMPLER_ARG',
      { OTEL_TRACES_SAMPLER_ARG: '2' },
      /Configuration error: OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "2"/,
    ],
    [
      'READINESS_TIMEOUT_MS',
      { READINESS_TIMEOUT_MS: 'soon' },
      /Configuration error: READINESS_TIMEOUT_MS must be an integer from 1 to 60000, got "soon"/,
    ],
    [
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' },
      /Configuration error: OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/,
    ],
    // Neither value is echoed: a Redis URL may carry its password.
    [
      'REDIS_URL (not a URL)',
      { REDIS_URL: 'redis-host:6379' },
      /Configuration error: REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/,
    ],
    [
      'REDIS_URL (another scheme)',
      { REDIS_URL: 'memcached://:hunter2@cache:11211' },
      /Configuration error: REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL, not memcached:\/\//,
    ],
  ])('stops with exit code 1 and a message naming a bad %s', async (_, env, message) => {
    const { exited, output } = start(env);

    expect(await exited).toBe(1);
    expect(output()).toMatch(message);
    expect(output()).not.toMatch(/GraphQL gateway ready|hunter2/);
  });

  it('stops with exit code 1 and a message naming a bad setting', async () => {
    const { child, output } = start({ PORT: 'eighty' });

    const code = await exitCode(child);
    expect(code).toBe(1);
    expect(output()).toMatch(/Configuration error: PORT must be an integer/);
  });

  it('stops with exit code 1 and a message naming PORT when the port is in use', async () => {
    const { server, url } = await listen(() => undefined);
    try {
      const { child, output } = start({ PORT: new URL(url).port });

      const code = await exitCode(child);
      expect(code).toBe(1);
      expect(output()).toMatch(/Configuration error: cannot listen on HOST=127\.0\.0\.1 PORT=\d+: the port is in use/);
      expect(output()).not.toMatch(/\n\s+at /);
    } finally {
      await stop(server);
    }
  });

  it('refuses a production start without upstream URLs, naming PETSTORE_URL, rather than serve demo data', async () => {
    const { child, output } = start({ NODE_ENV: 'production', WORKERS: '1' });

    const code = await exitCode(child);
    expect(code).toBe(1);
    expect(output()).toMatch(
      /Configuration error: PETSTORE_URL, PLANTS_URL or both must be set when NODE_ENV=production \(or set EMULATOR=true/,
    );
  });

  it('serves the embedded emulator in production with EMULATOR=true', async () => {
    const { output } = start({ NODE_ENV: 'production', EMULATOR: 'true', WORKERS: '1' });

    const [, url] = await waitFor(output, /GraphQL gateway ready: (http:\/\/\S+\/graphql)/);
    expect(output()).toMatch(/Upstreams: embedded emulator/);
    const result = await postGraphQL(url as string, '{ pet(id: 1) { name } }', {}, { api_key: 'demo' });
    expect(result.data).toEqual({ pet: { name: 'Cat 1' } });
  });

  it('prints every setting with --help', async () => {
    const { child, output } = start({}, ['--help']);

    const code = await exitCode(child);
    expect(code).toBe(0);
    for (const flag of [
      '--port',
      '--petstore-url',
      '--plants-url',
      '--petstore-body-format',
      '--upstream-timeout-ms',
      '--metrics',
      '--readiness-timeout-ms',
      '--otel-exporter-otlp-endpoint',
      '--otel-traces-exporter',
    ]) {
      expect(output()).toContain(flag);
    }
  });
});

/** Opens a TCP connection to the port on 127.0.0.1; rejects with the socket's error (ECONNREFUSED). */
function tcpConnect(port: number) {
  return new Promise<ReturnType<typeof connect>>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * A keep-alive connection that has been answered once (`GET /health`) and now sits idle; `closed`
 * settles when the server closes it.
 */
async function idleKeepAliveConnection(port: number) {
  const socket = await tcpConnect(port);
  const closed = once(socket, 'close');
  socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  const [answer] = (await once(socket, 'data')) as [Buffer];
  return { firstLine: answer.toString().split('\r\n')[0], closed };
}

describe('npm start against upstreams', () => {
  const PET_1 = { id: 1, name: 'Cat 1', photoUrls: [], tags: [], status: 'available' };
  const scripted = useScriptedUpstream();

  async function startAgainst(env: Record<string, string> = {}) {
    const started = start({ PETSTORE_URL: `${scripted().url}/api/v3`, PLANTS_URL: scripted().url, ...env });
    const [, url = ''] = await waitFor(started.output, /GraphQL gateway ready: (http:\/\/\S+\/graphql)/);
    return { ...started, url, port: Number(new URL(url).port) };
  }

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'on %s finishes the slow query in flight, refuses new connections, closes idle ones, and exits 0',
    async (signal) => {
      // The query's answer is held until the test has seen the stop begin: slow however fast the machine.
      const held = hold(json(200, PET_1));
      scripted().answer(held.answer);
      const { child, output, exited, url, port } = await startAgainst();
      const idle = await idleKeepAliveConnection(port);
      expect(idle.firstLine).toBe('HTTP/1.1 200 OK');
      const query = postGraphQL(url, '{ pet(id: 1) { name } }', {}, { api_key: 'demo' });
      await expect.poll(() => scripted().requests.length, EVENTUALLY).toBe(1);

      child.kill(signal);

      await waitFor(
        output,
        new RegExp(`${signal}: refusing new connections, finishing 1 in-flight request\\(s\\) within 10000 ms`),
      );
      await expect(tcpConnect(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      await idle.closed;
      expect(child.exitCode).toBeNull();
      held.release();
      expect(await query).toEqual({ status: 200, data: { pet: { name: 'Cat 1' } } });
      expect(await exited).toBe(0);
      expect(output()).toMatch(/\nstopped\n/);
      expect(scripted().requests.map((request) => `${request.method} ${request.url}`)).toEqual(['GET /api/v3/pet/1']);
    },
  );

  it('serves the pet store alone in production: pets answer, createPlant answers UPSTREAM_NOT_SERVED, /readiness is 200', async () => {
    scripted().answer((request) => (request.url === '/api/v3' ? json(404, {}) : json(200, PET_1)));
    const { output, url } = await startAgainst({ NODE_ENV: 'production', WORKERS: '1', PLANTS_URL: '' });

    const pet = await postGraphQL(url, '{ pet(id: 1) { name } }', {}, { api_key: 'key-1' });
    const plant = await postGraphQL(
      url,
      'mutation { createPlant(input: { id: 1, name: "Fern" }) { name } }',
      {},
      { authorization: 'Bearer token-1' },
    );
    const readiness = await fetch(new URL('/readiness', url));

    expect(pet).toEqual({ status: 200, data: { pet: { name: 'Cat 1' } } });
    expect(plant.status).toBe(200);
    expect(plant.errors?.[0]?.extensions).toEqual({
      code: 'UPSTREAM_NOT_SERVED',
      upstream: { service: 'plants', operation: 'createPlant' },
    });
    expect(plant.errors?.[0]?.message).toBe(
      'the plant area is not served by this gateway (no upstream is configured for it)',
    );
    expect(readiness.status).toBe(200);
    expect(Object.keys(((await readiness.json()) as { upstreams: object }).upstreams)).toEqual(['petstore']);
    // The pet was asked of the pet store with its credential; the plant area was never called.
    expect(
      scripted()
        .requests.filter((request) => request.url !== '/api/v3')
        .map((request) => [request.method, request.url, request.headers['api_key']]),
    ).toEqual([['GET', '/api/v3/pet/1', 'key-1']]);
    expect(output()).toContain(
      `Upstreams: pet store ${scripted().url}/api/v3, plants not served (PLANTS_URL is not set; its fields answer UPSTREAM_NOT_SERVED)`,
    );
  });

  it('serves the plant area alone in production: plants answer, pets answer UPSTREAM_NOT_SERVED, /readiness is 200', async () => {
    scripted().answer((request) => (request.method === 'POST' ? json(200, { id: 1, name: 'Fern' }) : json(404, {})));
    const { url } = await startAgainst({ NODE_ENV: 'production', WORKERS: '1', PETSTORE_URL: '' });

    const plant = await postGraphQL(
      url,
      'mutation { createPlant(input: { id: 1, name: "Fern" }) { name } }',
      {},
      { authorization: 'Bearer token-1' },
    );
    const pet = await postGraphQL(url, '{ pet(id: 1) { name } }', {}, { api_key: 'key-1' });
    const readiness = await fetch(new URL('/readiness', url));

    expect(plant).toEqual({ status: 200, data: { createPlant: { name: 'Fern' } } });
    expect(pet.status).toBe(200);
    expect(pet.data).toEqual({ pet: null });
    expect(pet.errors?.[0]?.extensions).toEqual({
      code: 'UPSTREAM_NOT_SERVED',
      upstream: { service: 'petstore', operation: 'getPetById' },
    });
    expect(readiness.status).toBe(200);
    expect(Object.keys(((await readiness.json()) as { upstreams: object }).upstreams)).toEqual(['plants']);
    const calls = scripted().requests.filter((request) => request.url !== '/');
    expect(calls.map((request) => [request.method, request.url, request.headers['authorization']])).toEqual([
      ['POST', '/plants', 'Bearer token-1'],
    ]);
  });

  it('starts with the retired UPSTREAM_CIRCUIT_FAILURES=5, warning of what replaced it and how its value is read', async () => {
    const { output, url } = await startAgainst({ UPSTREAM_CIRCUIT_FAILURES: '5', LOG_LEVEL: 'warn' });
    scripted().answer(json(200, PET_1));

    expect(await postGraphQL(url, '{ pet(id: 1) { name } }', {}, { api_key: 'key-1' })).toEqual({
      status: 200,
      data: { pet: { name: 'Cat 1' } },
    });
    expect(output()).toContain(
      'UPSTREAM_CIRCUIT_FAILURES is retired and will stop being read in 2.0.0: the circuit opens on a failure rate over a window',
    );
    expect(output()).toContain('Its value is read as UPSTREAM_CIRCUIT_MIN_CALLS=5; set that instead.');
  });

  it('says which upstream URLs it uses (without their credentials), and offers GraphiQL no demo credentials', async () => {
    const { output } = await startAgainst({
      PLANTS_URL: scripted().url.replace('http://', 'http://ops:pl4nts-secret@'),
    });

    expect(output()).toContain(`Upstreams: pet store ${scripted().url}/api/v3, plants ${scripted().url}\n`);
    expect(output()).not.toContain('pl4nts-secret');
    expect(output()).not.toContain('demo credentials');
  });

  it('cuts a request still unfinished after SHUTDOWN_GRACE_MS, and exits 0', async () => {
    scripted().answer({ hang: true });
    const { child, output, exited, url } = await startAgainst({ SHUTDOWN_GRACE_MS: '300' });
    const query = postGraphQL(url, '{ pet(id: 1) { name } }', {}, { api_key: 'demo' });
    await expect.poll(() => scripted().requests.length, EVENTUALLY).toBe(1);

    child.kill('SIGTERM');

    // The upstream never answers: only the cut at the end of the grace period ends the request, and lets the process exit.
    await expect(query).rejects.toThrow();
    expect(await exited).toBe(0);
    expect(output()).toMatch(/grace period over: closing 1 unfinished request\(s\) and stopping/);
  });

  it('stays up through upstream faults (reset, garbage, refused port), each reported, and answers afterwards', async () => {
    const { child, url } = await startAgainst({ PLANTS_URL: await closedPortUrl(), UPSTREAM_RETRIES: '0' });
    const pet = () => postGraphQL(url, '{ pet(id: 1) { name } }', {}, { api_key: 'demo' });
    const codeOf = (result: Awaited<ReturnType<typeof pet>>) =>
      result.errors?.map((error) => error.extensions?.['code']);

    scripted().answer({ reset: true });
    expect(codeOf(await pet())).toEqual(['UPSTREAM_UNAVAILABLE']);
    scripted().answer({
      resetBody: true,
      status: 200,
      headers: { 'content-type': 'application/json' },
      bodyStart: '{"id":1,',
    });
    expect(codeOf(await pet())).toEqual(['UPSTREAM_UNAVAILABLE']);
    scripted().answer(json(200, '{"id": 1, "name": '));
    expect(codeOf(await pet())).toEqual(['UPSTREAM_ERROR']);
    const plant = await postGraphQL(
      url,
      'mutation { createPlant(input: { id: 1, name: "Fern" }) { name } }',
      {},
      { authorization: 'Bearer demo' },
    );
    expect(plant.errors?.map((error) => [error.extensions?.['code'], error.extensions?.['upstream']])).toEqual([
      ['UPSTREAM_UNAVAILABLE', { service: 'plants', operation: 'createPlant' }],
    ]);
    scripted().answer(json(200, PET_1));

    expect(await pet()).toEqual({ status: 200, data: { pet: { name: 'Cat 1' } } });
    expect(child.exitCode).toBeNull();
  });
});
